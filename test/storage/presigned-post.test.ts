// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${filename}` is S3's literal form variable here.
// Interop: a form made by AWS's own SDK (@aws-sdk/s3-presigned-post) must verify here, as it
// would on S3. The SDK runs inside workerd in this test; it signs with the current clock.
import { S3Client } from "@aws-sdk/client-s3";
import { createPresignedPost } from "@aws-sdk/s3-presigned-post";
import { describe, expect, it } from "vitest";
import { byteLimiter, parseMultipartForm } from "../../src/s3/multipart";
import { verifyPostForm } from "../../src/s3/post-policy";
import { S3Error } from "../../src/s3/s3-errors";
import { bytesEqual, multipartBody, pseudoRandomBytes, readAll } from "./helpers";

const AKID = "AKIATESTKEY0000000001";
const SECRET = "test-secret-access-key-0000000000000000000";
const BUCKET = "field-dispatch-files";
const credentials = (id: string) => (id === AKID ? SECRET : undefined);

function client(region: string) {
  return new S3Client({
    region,
    credentials: { accessKeyId: AKID, secretAccessKey: SECRET },
    // R2-style endpoint so that region "auto" resolves; only the returned `url` uses it.
    endpoint: "https://0123456789abcdef.r2.cloudflarestorage.com",
    forcePathStyle: true,
  });
}

describe("@aws-sdk/s3-presigned-post interop", () => {
  it("a createPresignedPost form verifies (capitalized names and conditions, compact policy)", async () => {
    const { url, fields } = await createPresignedPost(client("auto"), {
      Bucket: BUCKET,
      Key: "fileupload/abc/photo.jpg",
      Conditions: [
        ["content-length-range", 0, 1024],
        ["starts-with", "$Content-Type", "image/"],
      ],
      Fields: { acl: "public-read", "Content-Type": "image/jpeg" },
      Expires: 600,
    });
    expect(url).toContain(BUCKET);
    // The SDK's own spelling: X-Amz-*, Policy, and a `bucket` field.
    expect(Object.keys(fields)).toEqual(
      expect.arrayContaining([
        "bucket",
        "X-Amz-Algorithm",
        "X-Amz-Credential",
        "X-Amz-Date",
        "key",
        "Policy",
        "X-Amz-Signature",
      ]),
    );
    const v = await verifyPostForm({ fields, bucket: BUCKET, credentials, region: "auto" });
    expect(v.key).toBe("fileupload/abc/photo.jpg");
    expect(v.contentLengthRange).toEqual({ min: 0, max: 1024 });
    expect(v.contentType).toBe("image/jpeg");
    expect(v.region).toBe("auto");
    // Tampering is caught the same way.
    const err = await verifyPostForm({
      fields: { ...fields, key: "other" },
      bucket: BUCKET,
      credentials,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(S3Error);
    expect((err as S3Error).code).toBe("AccessDenied");
    const wrongBucket = await verifyPostForm({ fields, bucket: "another", credentials }).catch(
      (e: unknown) => e,
    );
    expect((wrongBucket as S3Error).message).toBe(
      `Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "${BUCKET}"]`,
    );
  });

  it("an SDK form with a ${filename} key, posted as multipart/form-data, uploads end to end", async () => {
    const { fields } = await createPresignedPost(client("us-east-1"), {
      Bucket: BUCKET,
      Key: "uploads/${filename}",
      Conditions: [["content-length-range", 1, 300_000]],
      Expires: 60,
    });
    const content = pseudoRandomBytes(250_000, 77);
    const boundary = "sdk-interop-boundary";
    const body = multipartBody(boundary, [
      ...Object.entries(fields).map(([name, value]) => ({ name, value })),
      {
        name: "file",
        value: content,
        filename: "C:\\fakepath\\site plan.pdf",
        contentType: "application/pdf",
      },
      { name: "submit", value: "Upload to Amazon S3" },
    ]);
    const form = await parseMultipartForm(
      new Blob([body]).stream(),
      `multipart/form-data; boundary="${boundary}"`,
    );
    const v = await verifyPostForm({
      fields: form.fields,
      bucket: BUCKET,
      credentials,
      filename: form.file!.filename,
    });
    expect(v.key).toBe("uploads/site plan.pdf");
    const limiter = byteLimiter(v.contentLengthRange ?? {});
    const stored = await readAll(form.file!.stream.pipeThrough(limiter.stream));
    expect(limiter.bytes).toBe(content.length);
    expect(bytesEqual(stored, content)).toBe(true);
  });
});
