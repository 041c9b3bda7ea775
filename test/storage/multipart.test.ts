// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${filename}` is S3's literal form variable here.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ByteLimitError,
  byteLimiter,
  MultipartError,
  parseBoundary,
  parseHeaderValue,
  parseMultipartForm,
} from "../../src/s3/multipart";
import {
  bytesEqual,
  bytesOf,
  chunkedSource,
  concat,
  concatAll,
  cutSource,
  multipartBody,
  pseudoRandomBytes,
  readAll,
  text,
} from "./helpers";

const BOUNDARY = "----WebKitFormBoundary7MA4YWxkTrZu0gW";
const CT = `multipart/form-data; boundary=${BOUNDARY}`;

/**
 * File content that keeps almost matching the delimiter: every proper prefix of
 * "\r\n--<boundary>", CRs and LFs in odd places, and a boundary without its CRLF.
 */
function trickyContent(): Uint8Array {
  const delim = `\r\n--${BOUNDARY}`;
  let s = "";
  for (let k = 1; k < delim.length; k++) s += `${delim.slice(0, k)}x`;
  s += `\r\r\n-\r\n--\r--${BOUNDARY}\n--${BOUNDARY}\r\n-${BOUNDARY}`;
  return concat(bytesOf(s), pseudoRandomBytes(300, 7), bytesOf("\r\n\r\n\r"));
}

function sampleBody(file: Uint8Array): Uint8Array {
  return multipartBody(BOUNDARY, [
    { name: "key", value: "fileupload/1/photo.jpg" },
    { name: "Content-Type", value: "image/jpeg" },
    { name: "x-amz-meta-note", value: "line1\r\nline2 --not-a-boundary" },
    { name: "empty", value: "" },
    { name: "file", value: file, filename: "photo.jpg", contentType: "image/jpeg" },
    { name: "submit", value: "Upload" },
  ]);
}

async function expectMultipartError(p: Promise<unknown>, kind: string): Promise<MultipartError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MultipartError);
  expect((err as MultipartError).kind).toBe(kind);
  return err as MultipartError;
}

describe("parseBoundary / parseHeaderValue", () => {
  it("reads token and quoted boundaries, case-insensitively", () => {
    expect(parseBoundary("multipart/form-data; boundary=abc")).toBe("abc");
    expect(parseBoundary('Multipart/Form-Data; BOUNDARY="a b:c"')).toBe("a b:c");
    expect(parseBoundary("multipart/form-data;charset=utf-8;boundary=xyz")).toBe("xyz");
  });

  it("refuses other media types as not-multipart, and a missing or bad boundary as malformed", () => {
    for (const ct of [
      null,
      undefined,
      "",
      "application/x-www-form-urlencoded",
      "multipart/mixed; boundary=a",
    ]) {
      expect(() => parseBoundary(ct)).toThrow(expect.objectContaining({ kind: "not-multipart" }));
    }
    for (const ct of [
      "multipart/form-data",
      "multipart/form-data; boundary=",
      'multipart/form-data; boundary=""',
      `multipart/form-data; boundary=${"a".repeat(71)}`,
      'multipart/form-data; boundary="ends with space "',
    ]) {
      expect(() => parseBoundary(ct)).toThrow(expect.objectContaining({ kind: "malformed" }));
    }
  });

  it('parses Content-Disposition parameters (quoted-pairs for \\" and \\\\ only)', () => {
    const h = parseHeaderValue('form-data; name="file"; filename="a \\"quoted\\" name.txt"');
    expect(h.value).toBe("form-data");
    expect(h.params.get("name")).toBe("file");
    expect(h.params.get("filename")).toBe('a "quoted" name.txt');
    // Browsers do not escape backslashes (WHATWG): a Windows path keeps them.
    expect(parseHeaderValue('form-data; name="f"; filename="C:\\dir\\x.txt"').params.get("filename")).toBe(
      "C:\\dir\\x.txt",
    );
    expect(parseHeaderValue("form-data; NAME=plain; filename=x.bin").params.get("name")).toBe("plain");
    expect(() => parseHeaderValue('form-data; name="unterminated')).toThrow(MultipartError);
  });
});

describe("parseMultipartForm", () => {
  it("returns the fields before the file and streams the file", async () => {
    const file = trickyContent();
    const src = chunkedSource(sampleBody(file), 64);
    const form = await parseMultipartForm(src.stream, CT);
    expect([...form.fields.keys()]).toEqual(["key", "content-type", "x-amz-meta-note", "empty"]);
    expect(form.fields.get("content-type")).toEqual({ name: "Content-Type", value: "image/jpeg" });
    expect(form.fields.get("x-amz-meta-note")?.value).toBe("line1\r\nline2 --not-a-boundary");
    expect(form.fields.get("empty")?.value).toBe("");
    expect(form.fields.has("submit")).toBe(false);
    expect(form.file).not.toBeNull();
    expect(form.file!.name).toBe("file");
    expect(form.file!.filename).toBe("photo.jpg");
    expect(form.file!.contentType).toBe("image/jpeg");
    const body = sampleBody(file);
    expect(form.file!.offset).toBe(
      body.length -
        file.length -
        bytesOf(
          `\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="submit"\r\n\r\nUpload\r\n--${BOUNDARY}--\r\n`,
        ).length,
    );
    expect(bytesEqual(await readAll(form.file!.stream), file)).toBe(true);
    // The parts after the file are ignored and the rest of the body released.
    expect(src.cancelled).toBe(true);
  });

  it("finds every boundary whatever the chunking: 1-byte, 7-byte and other chunk sizes", async () => {
    const file = trickyContent();
    const body = sampleBody(file);
    for (const size of [1, 2, 3, 5, 7, 11, 13, 17, 31, 41, 42, 43, 64, 100, 257, body.length]) {
      const form = await parseMultipartForm(chunkedSource(body, size).stream, CT);
      expect(form.fields.get("key")?.value, `chunk size ${size}`).toBe("fileupload/1/photo.jpg");
      expect(form.fields.get("x-amz-meta-note")?.value).toBe("line1\r\nline2 --not-a-boundary");
      expect(bytesEqual(await readAll(form.file!.stream), file), `chunk size ${size}`).toBe(true);
    }
    // Irregular chunk sizes.
    const form = await parseMultipartForm(chunkedSource(body, [1, 7, 2, 44, 3, 1, 1, 90]).stream, CT);
    expect(bytesEqual(await readAll(form.file!.stream), file)).toBe(true);
  });

  it("finds every boundary when the body is cut in two at every possible offset", async () => {
    const file = bytesOf(`data\r\n--${BOUNDARY.slice(0, 10)}\r\n-- more data \r\n`);
    const body = sampleBody(file);
    for (let cut = 0; cut <= body.length; cut++) {
      const form = await parseMultipartForm(cutSource(body, [cut]), CT);
      expect(form.fields.get("content-type")?.value, `cut at ${cut}`).toBe("image/jpeg");
      expect(text(await readAll(form.file!.stream)), `cut at ${cut}`).toBe(text(file));
    }
  });

  it("finds the closing delimiter when it is cut in three anywhere around the file's end", async () => {
    const file = bytesOf(`payload\r\n--${BOUNDARY.slice(0, -1)}!end`);
    const body = sampleBody(file);
    const fileEnd = text(body).indexOf(`--${BOUNDARY}`, text(body).indexOf("!end")) - 2;
    const from = fileEnd - 12;
    const to = fileEnd + BOUNDARY.length + 8;
    for (let a = from; a <= to; a++) {
      for (let b = a + 1; b <= to; b++) {
        const form = await parseMultipartForm(cutSource(body, [a, b]), CT);
        expect(text(await readAll(form.file!.stream)), `cuts ${a},${b}`).toBe(text(file));
      }
    }
  });

  it("streams a 5 MiB file byte-identical without reading the body ahead of the consumer", async () => {
    const file = pseudoRandomBytes(5 * 1024 * 1024, 42);
    const body = sampleBody(file);
    for (const chunk of [64 * 1024, 65_537, 1_000_003]) {
      const src = chunkedSource(body, chunk);
      const form = await parseMultipartForm(src.stream, CT);
      // Only the chunk holding the fields and the file's headers has been read.
      expect(src.pulled).toBe(1);
      const reader = form.file!.stream.getReader();
      const parts: Uint8Array[] = [];
      let maxPiece = 0;
      let maxAhead = 0;
      let received = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
        received += value.length;
        maxPiece = Math.max(maxPiece, value.length);
        // What the source has handed out but the consumer has not received yet: never more
        // than about one chunk plus the delimiter (and the fields before the file).
        maxAhead = Math.max(maxAhead, src.bytesPulled - received);
      }
      const out = concatAll(parts);
      expect(out.length).toBe(file.length);
      expect(bytesEqual(out, file)).toBe(true);
      expect(maxPiece).toBeLessThanOrEqual(chunk + BOUNDARY.length + 4);
      expect(maxAhead).toBeLessThanOrEqual(chunk + 1024);
    }
  });

  it("applies backpressure: a consumer that stops reading stops the source", async () => {
    const file = pseudoRandomBytes(1024 * 1024, 3);
    const src = chunkedSource(sampleBody(file), 4096);
    const form = await parseMultipartForm(src.stream, CT);
    const reader = form.file!.stream.getReader();
    await reader.read();
    await reader.read();
    await new Promise((r) => setTimeout(r, 20));
    expect(src.pulled).toBeLessThanOrEqual(4);
    await reader.cancel();
    expect(src.cancelled).toBe(true);
  });

  it("bounds the fields before the file (maxFieldsBytes)", async () => {
    const body = multipartBody(BOUNDARY, [
      { name: "key", value: "k" },
      { name: "x-amz-meta-big", value: "x".repeat(2000) },
      { name: "file", value: "abc", filename: "a.txt" },
    ]);
    for (const size of [1, 7, 4096]) {
      const err = await expectMultipartError(
        parseMultipartForm(chunkedSource(body, size).stream, CT, { maxFieldsBytes: 1024 }),
        "fields-too-large",
      );
      expect(err.limit).toBe(1024);
    }
    // Just under the limit is fine: the limit counts everything before the file's content.
    const before = text(body).indexOf("abc");
    const ok = await parseMultipartForm(chunkedSource(body, 7).stream, CT, { maxFieldsBytes: before });
    expect(text(await readAll(ok.file!.stream))).toBe("abc");
    await expectMultipartError(
      parseMultipartForm(chunkedSource(body, 7).stream, CT, { maxFieldsBytes: before - 1 }),
      "fields-too-large",
    );
    // Default limit is 64 KiB.
    const huge = multipartBody(BOUNDARY, [
      { name: "x-amz-meta-big", value: "y".repeat(70 * 1024) },
      { name: "file", value: "abc", filename: "a.txt" },
    ]);
    await expectMultipartError(parseMultipartForm(chunkedSource(huge, 8192).stream, CT), "fields-too-large");
    // An endless stream of field data is refused without reading it all.
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(
          pulled === 1
            ? bytesOf(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n\r\n`)
            : new Uint8Array(1000).fill(0x61),
        );
      },
    });
    await expectMultipartError(
      parseMultipartForm(endless, CT, { maxFieldsBytes: 10_000 }),
      "fields-too-large",
    );
    expect(pulled).toBeLessThan(20);
  });

  it("parses fields trickled in 1-byte chunks in linear time", async () => {
    const big = "z".repeat(40_000);
    const body = multipartBody(BOUNDARY, [
      { name: "x-amz-meta-big", value: big },
      { name: "file", value: "ok", filename: "a" },
    ]);
    const started = Date.now();
    const form = await parseMultipartForm(chunkedSource(body, 1).stream, CT);
    expect(form.fields.get("x-amz-meta-big")?.value).toBe(big);
    expect(text(await readAll(form.file!.stream))).toBe("ok");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("returns file: null when the form has no file part", async () => {
    const body = multipartBody(BOUNDARY, [
      { name: "key", value: "k" },
      { name: "not-the-file", value: "content", filename: "x.txt" },
    ]);
    for (const size of [1, 7, body.length]) {
      const form = await parseMultipartForm(chunkedSource(body, size).stream, CT);
      expect(form.file).toBeNull();
      expect(form.fields.get("not-the-file")?.value).toBe("content");
    }
    const empty = await parseMultipartForm(chunkedSource(bytesOf(`--${BOUNDARY}--\r\n`), 3).stream, CT);
    expect(empty).toEqual({ fields: new Map(), file: null });
  });

  it("takes the file by the part name `file` in any case, and only a form-data part", async () => {
    const body = multipartBody(BOUNDARY, [
      { name: "k", value: "v", rawHeaders: 'Content-Disposition: attachment; name="file"' },
      { name: "File", value: "the file", filename: "" },
    ]);
    const form = await parseMultipartForm(chunkedSource(body, 5).stream, CT);
    expect(form.fields.get("file")?.value).toBe("v");
    expect(form.file!.name).toBe("File");
    expect(form.file!.filename).toBe("");
    expect(form.file!.contentType).toBeNull();
    expect(text(await readAll(form.file!.stream))).toBe("the file");
    // No filename parameter at all.
    const bare = multipartBody(BOUNDARY, [{ name: "file", value: "x" }]);
    const f2 = await parseMultipartForm(chunkedSource(bare, 5).stream, CT);
    expect(f2.file!.filename).toBeNull();
    expect(text(await readAll(f2.file!.stream))).toBe("x");
  });

  it("ignores a preamble and the epilogue, accepts transport padding and a part without headers", async () => {
    const file = pseudoRandomBytes(1000, 9);
    const raw = concat(
      bytesOf("This is the preamble.\r\n"),
      bytesOf(`--${BOUNDARY} \t\r\n\r\nheaderless\r\n`),
      bytesOf(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n\r\nA\r\n`),
      bytesOf(`--${BOUNDARY}\t\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\n\r\n`),
      file,
      bytesOf(
        `\r\n--${BOUNDARY}  \r\nContent-Disposition: form-data; name="after"\r\n\r\nignored\r\n--${BOUNDARY}--\r\nepilogue`,
      ),
    );
    // A part without Content-Disposition is malformed (RFC 7578 §4.2)...
    await expectMultipartError(parseMultipartForm(chunkedSource(raw, 7).stream, CT), "malformed");
    // ...so without it the rest parses.
    const ok = concat(
      bytesOf("This is the preamble.\r\n"),
      bytesOf(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n\r\nA\r\n`),
      bytesOf(`--${BOUNDARY}\t\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\n\r\n`),
      file,
      bytesOf(
        `\r\n--${BOUNDARY}  \r\nContent-Disposition: form-data; name="after"\r\n\r\nignored\r\n--${BOUNDARY}--\r\nepilogue`,
      ),
    );
    for (const size of [1, 7, 1000]) {
      const form = await parseMultipartForm(chunkedSource(ok, size).stream, CT);
      expect(form.fields.get("a")?.value).toBe("A");
      expect(bytesEqual(await readAll(form.file!.stream), file)).toBe(true);
    }
  });

  it("joins repeated field names with commas, matching names case-insensitively", async () => {
    const body = multipartBody(BOUNDARY, [
      { name: "x-amz-meta-tag", value: "Ninja" },
      { name: "X-Amz-Meta-Tag", value: "Stallman" },
      { name: "file", value: "" },
    ]);
    const form = await parseMultipartForm(chunkedSource(body, 3).stream, CT);
    expect(form.fields.get("x-amz-meta-tag")).toEqual({ name: "x-amz-meta-tag", value: "Ninja,Stallman" });
    expect((await readAll(form.file!.stream)).length).toBe(0);
  });

  it("decodes UTF-8 names, values and file names", async () => {
    const body = multipartBody(BOUNDARY, [
      { name: "x-amz-meta-ünïcödé", value: "président — ok" },
      { name: "file", value: "é", filename: "président.jpg" },
    ]);
    const form = await parseMultipartForm(chunkedSource(body, 1).stream, CT);
    expect(form.fields.get("x-amz-meta-ünïcödé")?.value).toBe("président — ok");
    expect(form.file!.filename).toBe("président.jpg");
    expect(text(await readAll(form.file!.stream))).toBe("é");
  });

  it("parses the bodies workerd's own FormData serializer writes", async () => {
    const fd = new FormData();
    fd.append("key", "uploads/${filename}");
    fd.append("Content-Type", "text/plain");
    const content = pseudoRandomBytes(100_000, 5);
    fd.append("file", new File([content], 'we"ird\nname.bin', { type: "application/octet-stream" }));
    fd.append("submit", "Upload");
    const req = new Request("https://example.com/", { method: "POST", body: fd });
    const form = await parseMultipartForm(req.body, req.headers.get("content-type"));
    expect(form.fields.get("key")?.value).toBe("uploads/${filename}");
    expect(form.file!.filename).toMatch(/^we(%22|\\?")ird(%0A|\\?\n| )name\.bin$/);
    expect(form.file!.contentType).toBe("application/octet-stream");
    expect(bytesEqual(await readAll(form.file!.stream), content)).toBe(true);
  });

  it("refuses malformed bodies", async () => {
    const cases: [string, Uint8Array][] = [
      ["empty body", new Uint8Array(0)],
      ["no boundary at all", bytesOf("just some text\r\n")],
      ["junk after the boundary", bytesOf(`--${BOUNDARY}junk\r\n\r\n`)],
      [
        "LF line ends",
        bytesOf(`--${BOUNDARY}\nContent-Disposition: form-data; name="a"\n\nA\n--${BOUNDARY}--\n`),
      ],
      ["headers never end", bytesOf(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n`)],
      ["a field never ends", bytesOf(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n\r\nAAA`)],
      ["no name", bytesOf(`--${BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nA\r\n--${BOUNDARY}--`)],
      [
        "header without colon",
        bytesOf(`--${BOUNDARY}\r\nContent-Disposition form-data\r\n\r\nA\r\n--${BOUNDARY}--`),
      ],
      [
        "no close delimiter",
        bytesOf(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="a"\r\n\r\nA\r\n--${BOUNDARY}`),
      ],
    ];
    for (const [label, body] of cases) {
      for (const size of [1, 7, 4096]) {
        const err = await parseMultipartForm(chunkedSource(body, size).stream, CT).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, `${label} (chunks of ${size})`).toBeInstanceOf(MultipartError);
        expect((err as MultipartError).kind, label).toBe("malformed");
      }
    }
    await expectMultipartError(parseMultipartForm(null, CT), "malformed");
    await expectMultipartError(
      parseMultipartForm(chunkedSource(sampleBody(bytesOf("x")), 7).stream, "text/plain"),
      "not-multipart",
    );
    await expectMultipartError(
      parseMultipartForm(chunkedSource(sampleBody(bytesOf("x")), 7).stream, "multipart/form-data"),
      "malformed",
    );
  });

  it("makes the file stream error when the body ends inside the file or its closing delimiter", async () => {
    const file = pseudoRandomBytes(10_000, 11);
    const body = sampleBody(file);
    const fileEnd = text(body).indexOf(`\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="submit"`);
    expect(fileEnd).toBeGreaterThan(0);
    // Cut inside the file, inside the delimiter, and right after it (no line end yet).
    for (const end of [fileEnd - 100, fileEnd, fileEnd + 5, fileEnd + 2 + 2 + BOUNDARY.length]) {
      for (const size of [1, 7, 4096]) {
        const form = await parseMultipartForm(chunkedSource(body.subarray(0, end), size).stream, CT);
        const err = await readAll(form.file!.stream).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, `end ${end}, chunks of ${size}`).toBeInstanceOf(MultipartError);
        expect((err as MultipartError).kind).toBe("malformed");
      }
    }
    // Junk right after the delimiter that ends the file.
    const junk = concat(body.subarray(0, fileEnd), bytesOf(`\r\n--${BOUNDARY}XYZ\r\n`));
    const form = await parseMultipartForm(chunkedSource(junk, 7).stream, CT);
    await expect(readAll(form.file!.stream)).rejects.toBeInstanceOf(MultipartError);
  });

  it("propagates a source error to the file stream", async () => {
    const head = bytesOf(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"\r\n\r\nsome`);
    let n = 0;
    const src = new ReadableStream<Uint8Array>({
      pull(c) {
        if (n++ === 0) c.enqueue(head);
        else c.error(new Error("connection reset"));
      },
    });
    const form = await parseMultipartForm(src, CT);
    await expect(readAll(form.file!.stream)).rejects.toThrow("connection reset");
  });
});

describe("byteLimiter", () => {
  async function through(sizes: number[], limits: { max?: number; min?: number }) {
    const limiter = byteLimiter(limits);
    const src = new ReadableStream<Uint8Array>({
      start(c) {
        for (const s of sizes) c.enqueue(new Uint8Array(s));
        c.close();
      },
    });
    const out = await readAll(src.pipeThrough(limiter.stream));
    return { out, bytes: limiter.bytes };
  }

  it("passes bodies within the bounds (inclusive) and counts them", async () => {
    expect((await through([3, 4, 3], { max: 10 })).bytes).toBe(10);
    expect((await through([5], { min: 5, max: 10 })).out.length).toBe(5);
    expect((await through([], { max: 0 })).bytes).toBe(0);
    expect((await through([1000, 1000], {})).bytes).toBe(2000);
  });

  it("errors as soon as the count passes max, and at the end when under min", async () => {
    const big = await through([6, 6, 6], { max: 10 }).catch((e: unknown) => e);
    expect(big).toBeInstanceOf(ByteLimitError);
    expect(big).toMatchObject({ kind: "too-large", size: 12, limit: 10 });
    const small = await through([1], { min: 5, max: 10 }).catch((e: unknown) => e);
    expect(small).toMatchObject({ kind: "too-small", size: 1, limit: 5 });
  });

  it("stops a streamed upload without reading the rest", async () => {
    const file = pseudoRandomBytes(1024 * 1024, 1);
    const src = chunkedSource(sampleBody(file), 16 * 1024);
    const form = await parseMultipartForm(src.stream, CT);
    const limiter = byteLimiter({ max: 100 * 1024 });
    const err = await readAll(form.file!.stream.pipeThrough(limiter.stream)).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "too-large", limit: 100 * 1024 });
    expect(src.bytesPulled).toBeLessThan(200 * 1024);
  });
});

describe("parseMultipartForm (property)", () => {
  it("round-trips arbitrary fields and file content under arbitrary chunking", async () => {
    // Content drawn from the bytes a delimiter is made of, so near-misses are frequent.
    const tricky = fc.array(
      fc.constantFrom(
        ...["\r", "\n", "-", "--", "\r\n", `\r\n--${BOUNDARY.slice(0, 8)}`, BOUNDARY.slice(0, 5), "x", "é"],
      ),
      { maxLength: 40 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), tricky), { maxLength: 4 }),
        tricky,
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 8 }),
        async (fieldSpecs, fileParts, sizes) => {
          const fields = fieldSpecs.filter(([name]) => name !== "file");
          const fileText = fileParts.join("");
          const body = multipartBody(BOUNDARY, [
            ...fields.map(([name, v]) => ({ name, value: v.join("") })),
            { name: "file", value: fileText, filename: "f" },
          ]);
          const form = await parseMultipartForm(chunkedSource(body, sizes).stream, CT);
          const expected = new Map<string, string>();
          for (const [name, v] of fields) {
            const prev = expected.get(name);
            expected.set(name, prev === undefined ? v.join("") : `${prev},${v.join("")}`);
          }
          expect(new Map([...form.fields].map(([k, f]) => [k, f.value]))).toEqual(expected);
          expect(text(await readAll(form.file!.stream))).toBe(fileText);
        },
      ),
      { numRuns: 300 },
    );
  });
});
