// The whole storage POST path with these modules: issue a form, post it as
// multipart/form-data (cut in awkward chunks), parse, verify, and stream the file through the
// size limit. No bindings: the "store" is reading the stream back.
import { describe, expect, it } from "vitest";
import { byteLimiter, parseMultipartForm } from "../../src/s3/multipart";
import { createPostForm, verifyPostForm } from "../../src/s3/post-policy";
import { noFile, S3Error, s3ErrorXml, toS3Error } from "../../src/s3/s3-errors";
import { bytesEqual, chunkedSource, multipartBody, pseudoRandomBytes, readAll } from "./helpers";

const AKID = "AKIATESTKEY0000000001";
const SECRET = "test-secret-access-key-0000000000000000000";
const BUCKET = "field-dispatch-files";
const BOUNDARY = "----formdata-undici-0123456789";
const CT = `multipart/form-data; boundary=${BOUNDARY}`;
const credentials = (id: string) => (id === AKID ? SECRET : undefined);

async function upload(body: Uint8Array, chunk: number, now: Date) {
  const form = await parseMultipartForm(chunkedSource(body, chunk).stream, CT);
  try {
    if (!form.file) throw noFile();
    const v = await verifyPostForm({
      fields: form.fields,
      bucket: BUCKET,
      credentials,
      region: "auto",
      now,
      filename: form.file.filename,
    });
    const limiter = byteLimiter(v.contentLengthRange ?? {});
    const stored = await readAll(form.file.stream.pipeThrough(limiter.stream));
    return { verified: v, stored };
  } catch (err) {
    await form.file?.stream.cancel().catch(() => {});
    throw err;
  }
}

describe("upload flow", () => {
  const now = new Date("2026-05-01T08:00:00Z");

  async function formFields(maxBytes: number) {
    return (
      await createPostForm({
        accessKeyId: AKID,
        secretAccessKey: SECRET,
        region: "auto",
        bucket: BUCKET,
        key: "fileupload/6f1c/report final.pdf",
        contentType: "application/pdf",
        maxBytes,
        now,
      })
    ).fields;
  }

  it("stores a file posted with the issued form, whatever the chunking", async () => {
    const fields = await formFields(2 * 1024 * 1024);
    // 7-byte chunks on a smaller file keep the test quick; the large runs use realistic chunks.
    for (const [chunk, size] of [
      [7, 64 * 1024 + 3],
      [4096, 1024 * 1024 + 17],
      [65_536, 2 * 1024 * 1024],
    ]) {
      const content = pseudoRandomBytes(size, 1234);
      const body = multipartBody(BOUNDARY, [
        ...Object.entries(fields).map(([name, value]) => ({ name, value })),
        { name: "file", value: content, filename: "report final.pdf", contentType: "application/pdf" },
      ]);
      const { verified, stored } = await upload(body, chunk, now);
      expect(verified.key).toBe("fileupload/6f1c/report final.pdf");
      expect(bytesEqual(stored, content)).toBe(true);
    }
  });

  it("refuses an oversized file while streaming, with S3's EntityTooLarge", async () => {
    const fields = await formFields(1000);
    const body = multipartBody(BOUNDARY, [
      ...Object.entries(fields).map(([name, value]) => ({ name, value })),
      { name: "file", value: pseudoRandomBytes(5000, 1), filename: "big.pdf" },
    ]);
    const err = toS3Error(await upload(body, 512, now).catch((e: unknown) => e));
    expect([err.status, err.code]).toEqual([400, "EntityTooLarge"]);
    expect(err.details.MaxSizeAllowed).toBe(1000);
    expect(s3ErrorXml(err, "r1")).toContain("<Code>EntityTooLarge</Code>");
  });

  it("answers a form without a file, a tampered form and a truncated body as S3 would", async () => {
    const fields = await formFields(1000);
    const noFilePart = multipartBody(
      BOUNDARY,
      Object.entries(fields).map(([name, value]) => ({ name, value })),
    );
    const e1 = toS3Error(await upload(noFilePart, 64, now).catch((e: unknown) => e));
    expect([e1.status, e1.code, e1.details.ArgumentName]).toEqual([400, "InvalidArgument", "file"]);

    const tampered = multipartBody(BOUNDARY, [
      ...Object.entries({ ...fields, key: "fileupload/other/x.pdf" }).map(([name, value]) => ({
        name,
        value,
      })),
      { name: "file", value: "x", filename: "x.pdf" },
    ]);
    const e2 = toS3Error(await upload(tampered, 64, now).catch((e: unknown) => e));
    expect([e2.status, e2.code]).toEqual([403, "AccessDenied"]);

    const full = multipartBody(BOUNDARY, [
      ...Object.entries(fields).map(([name, value]) => ({ name, value })),
      { name: "file", value: "abcdef", filename: "x.pdf" },
    ]);
    const e3 = toS3Error(await upload(full.subarray(0, full.length - 10), 64, now).catch((e: unknown) => e));
    expect([e3.status, e3.code]).toEqual([400, "MalformedPOSTRequest"]);

    const e4 = toS3Error(await upload(full, 64, new Date("2026-05-01T09:00:01Z")).catch((e: unknown) => e));
    expect(e4).toBeInstanceOf(S3Error);
    expect(e4.message).toBe("Invalid according to Policy: Policy expired.");
  });
});
