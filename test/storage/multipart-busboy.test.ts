import busboy from "busboy";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseMultipartForm } from "../../src/s3/multipart";
import { bytesEqual, chunkedSource, concatAll, multipartBody, readAll } from "./helpers";

/**
 * Differential test: the streaming parser (kept hand-written because it hands the file over
 * as a stream without buffering it) must read every generated RFC 7578 body exactly as
 * busboy, the parser Node's web frameworks rely on, reads it.
 */
type Parsed = {
  fields: [string, string][];
  file: { name: string; filename: string; type: string; data: Uint8Array };
};

function withBusboy(body: Uint8Array, contentType: string): Promise<Parsed> {
  return new Promise((resolve, reject) => {
    const fields: [string, string][] = [];
    let file: Parsed["file"] | null = null;
    // preservePath: the filename as sent (S3 keeps it; busboy would cut it to a base name).
    const bb = busboy({
      headers: { "content-type": contentType },
      preservePath: true,
      limits: { fileSize: 10_000_000 },
    });
    bb.on("field", (name, value) => fields.push([name, value]));
    bb.on("file", (name, stream, info) => {
      const chunks: Uint8Array[] = [];
      stream.on("data", (c: Uint8Array) => chunks.push(new Uint8Array(c)));
      stream.on("end", () => {
        file = { name, filename: info.filename ?? "", type: info.mimeType, data: concatAll(chunks) };
      });
    });
    bb.on("error", reject);
    bb.on("close", () => (file ? resolve({ fields, file }) : reject(new Error("busboy saw no file"))));
    bb.end(Buffer.from(body));
  });
}

async function withOurs(body: Uint8Array, contentType: string, chunks: number[]): Promise<Parsed> {
  const form = await parseMultipartForm(chunkedSource(body, chunks).stream, contentType);
  if (!form.file) throw new Error("no file");
  return {
    fields: [...form.fields.values()].map((f) => [f.name, f.value]),
    file: {
      name: form.file.name,
      filename: form.file.filename ?? "",
      type: form.file.contentType ?? "",
      data: await readAll(form.file.stream),
    },
  };
}

const token = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,20}$/);
const boundaryArb = fc.stringMatching(/^[A-Za-z0-9'()+_,.=-]{1,40}$/);
const valueArb = fc.string({ maxLength: 200, unit: "grapheme" });
// File bytes that lean towards CR, LF and dashes, the characters a delimiter is made of.
const fileArb = fc.array(fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(13, 10, 45)), {
  maxLength: 3000,
});

describe("multipart parser against busboy", () => {
  it("reads the same fields and file from generated bodies, in any chunking", async () => {
    await fc.assert(
      fc.asyncProperty(
        boundaryArb,
        fc.uniqueArray(fc.tuple(token, valueArb), { maxLength: 8, selector: ([n]) => n.toLowerCase() }),
        fileArb,
        fc.stringMatching(/^[A-Za-z0-9._ -]{1,30}$/),
        fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 12 }),
        async (boundary, fields, fileBytes, filename, chunks) => {
          const data = Uint8Array.from(fileBytes);
          const delimiter = new TextEncoder().encode(`\r\n--${boundary}`);
          // A sender picks a boundary that does not occur in the content (RFC 2046 §5.1.1).
          fc.pre(!containsBytes(data, delimiter));
          fc.pre(!fields.some(([, v]) => v.includes(`--${boundary}`)));
          const body = multipartBody(boundary, [
            ...fields.map(([name, value]) => ({ name, value })),
            { name: "file", value: data, filename, contentType: "application/octet-stream" },
          ]);
          // Quoted: bchars such as "," and "=" are tspecials in a header parameter (RFC 2045 §5.1).
          const ct = `multipart/form-data; boundary="${boundary}"`;
          const [ours, theirs] = await Promise.all([withOurs(body, ct, chunks), withBusboy(body, ct)]);
          expect(ours.fields).toEqual(theirs.fields);
          expect(ours.file.name).toBe(theirs.file.name);
          expect(ours.file.filename).toBe(theirs.file.filename);
          expect(ours.file.type).toBe(theirs.file.type);
          expect(bytesEqual(ours.file.data, theirs.file.data)).toBe(true);
        },
      ),
      { numRuns: 300, seed: 4178 },
    );
  });
});

function containsBytes(hay: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}
