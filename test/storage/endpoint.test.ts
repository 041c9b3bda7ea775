// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${filename}` is S3's literal form variable here.
// The storage endpoint ({upload_url} = POST /storage/) through the real Worker, with real
// multipart/form-data bodies (FormData), answering as S3's POST Object does (contract §8).

import { env } from "cloudflare:workers";
import { S3Client } from "@aws-sdk/client-s3";
import { createPresignedPost } from "@aws-sdk/s3-presigned-post";
import { describe, expect, it } from "vitest";
import { toS3Error } from "../../src/s3/s3-errors";
import { receivePostObject } from "../../src/services/files/storage-post";
import { expectS3Error, newFileUpload, postForm, s3Message, signedForm } from "../files/helpers";
import { call, expectStatus, newAccount } from "../helpers";
import { bytesEqual, pseudoRandomBytes } from "./helpers";

const MiB = 1024 * 1024;

async function stored(key: string): Promise<Uint8Array | null> {
  const o = await env.FILES.get(key);
  return o ? new Uint8Array(await o.arrayBuffer()) : null;
}

/** Flip one character of a string to another character of the same alphabet. */
function oneCharChanged(s: string, at: number, alphabet: string): string {
  const c = s[at];
  const next = alphabet[(alphabet.indexOf(c) + 1) % alphabet.length];
  return s.slice(0, at) + next + s.slice(at + 1);
}

describe("POST /storage/ (S3 POST Object in front of R2)", () => {
  it("stores a file posted with a file upload's form: 204, ETag, Location; the upload is marked uploaded", async () => {
    const { admin } = await newAccount();
    const fu = await newFileUpload(admin.token, "report final.pdf", "application/pdf");
    expect(fu.s3_signature.url).toBe("https://api.test/storage/");
    const content = pseudoRandomBytes(100_000, 5);
    const r = await postForm(fu.s3_signature.url, fu.s3_signature.fields, content, {
      filename: "report final.pdf",
    });
    expectStatus(r, 204);
    expect(r.text).toBe("");
    expect(r.headers.get("ETag")).toMatch(/^"[0-9a-f]{32}"$/);
    expect(r.headers.get("Location")).toBe(fu.file);
    const key = fu.s3_signature.fields.key;
    expect(key).toBe(`fileupload/${fu.id}/report final.pdf`);
    expect(bytesEqual((await stored(key))!, content)).toBe(true);
    const head = await env.FILES.head(key);
    expect(head?.httpMetadata?.contentType).toBe("application/pdf");
    const after = await call(fu.url, { token: admin.token });
    expectStatus(after, 200);
    expect(after.body.uploaded_at).not.toBeNull();
  });

  it("answers 403 SignatureDoesNotMatch when one character of the policy or the signature changes", async () => {
    const { admin } = await newAccount();
    const fu = await newFileUpload(admin.token, "a.txt", "text/plain");
    const f = fu.s3_signature.fields;
    const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const badPolicy = { ...f, policy: oneCharChanged(f.policy, 20, b64) };
    const r1 = await postForm(fu.s3_signature.url, badPolicy, new TextEncoder().encode("x"));
    expectS3Error(r1, 403, "SignatureDoesNotMatch");
    const badSignature = {
      ...f,
      "x-amz-signature": oneCharChanged(f["x-amz-signature"], 63, "0123456789abcdef"),
    };
    const r2 = await postForm(fu.s3_signature.url, badSignature, new TextEncoder().encode("x"));
    expectS3Error(r2, 403, "SignatureDoesNotMatch");
    expect(await env.FILES.head(f.key)).toBeNull();
  });

  it("answers 403 AccessDenied to an expired policy", async () => {
    const key = `fileupload/${crypto.randomUUID()}/old.txt`;
    const fields = await signedForm({
      key,
      contentType: "text/plain",
      maxBytes: 100,
      now: new Date(Date.now() - 3601_000),
    });
    const r = await postForm("/storage/", fields, new TextEncoder().encode("late"));
    expectS3Error(r, 403, "AccessDenied");
    expect(s3Message(r)).toBe("Invalid according to Policy: Policy expired.");
  });

  it("answers 403 to a field that no condition covers, and accepts x-ignore-* fields", async () => {
    const { admin } = await newAccount();
    const fu = await newFileUpload(admin.token, "a.txt", "text/plain");
    const r = await postForm(
      fu.s3_signature.url,
      { ...fu.s3_signature.fields, "x-amz-meta-colour": "red" },
      new Uint8Array([1]),
    );
    expectS3Error(r, 403, "AccessDenied");
    expect(s3Message(r)).toBe("Invalid according to Policy: Extra input fields: x-amz-meta-colour");
    const ok = await postForm(
      fu.s3_signature.url,
      { ...fu.s3_signature.fields, "x-ignore-note": "hi" },
      new Uint8Array([1]),
    );
    expectStatus(ok, 204);
  });

  it("answers 403 to a Content-Type other than the signed one", async () => {
    const { admin } = await newAccount();
    const fu = await newFileUpload(admin.token, "a.jpg", "image/jpeg");
    const r = await postForm(
      fu.s3_signature.url,
      { ...fu.s3_signature.fields, "Content-Type": "text/html" },
      new Uint8Array([1]),
    );
    expectS3Error(r, 403, "AccessDenied");
    expect(s3Message(r)).toBe(
      'Invalid according to Policy: Policy Condition failed: ["eq", "$Content-Type", "image/jpeg"]',
    );
  });

  it("answers 403 to a key outside the signed key", async () => {
    const { admin } = await newAccount();
    const fu = await newFileUpload(admin.token, "a.txt", "text/plain");
    const other = `fileupload/${crypto.randomUUID()}/a.txt`;
    const r = await postForm(
      fu.s3_signature.url,
      { ...fu.s3_signature.fields, key: other },
      new Uint8Array([1]),
    );
    expectS3Error(r, 403, "AccessDenied");
    expect(s3Message(r)).toContain("Policy Condition failed");
    expect(await env.FILES.head(other)).toBeNull();
  });

  it("answers 400 EntityTooLarge past content-length-range, while streaming, and stores nothing", async () => {
    const key = `fileupload/${crypto.randomUUID()}/big.bin`;
    const small = await signedForm({ key, contentType: "application/octet-stream", maxBytes: 1000 });
    const r = await postForm("/storage/", small, pseudoRandomBytes(5000, 1));
    expectS3Error(r, 400, "EntityTooLarge");
    expect(r.text).toContain("<MaxSizeAllowed>1000</MaxSizeAllowed>");
    expect(await env.FILES.head(key)).toBeNull();

    // Past the first 8 MiB part: the multipart upload is started, then aborted.
    const key2 = `fileupload/${crypto.randomUUID()}/bigger.bin`;
    const nine = await signedForm({ key: key2, contentType: "application/octet-stream", maxBytes: 9 * MiB });
    const r2 = await postForm("/storage/", nine, pseudoRandomBytes(10 * MiB, 2));
    expectS3Error(r2, 400, "EntityTooLarge");
    expect(await env.FILES.head(key2)).toBeNull();
  });

  it("caps every form at UPLOAD_MAX_BYTES, even one signed with a larger range", async () => {
    const key = `fileupload/${crypto.randomUUID()}/huge.bin`;
    const fields = await signedForm({ key, contentType: "application/octet-stream", maxBytes: 10 ** 12 });
    const fd = new FormData();
    for (const [k, v] of Object.entries(fields)) fd.append(k, v);
    fd.append("file", new Blob([pseudoRandomBytes(2000, 4)]), "huge.bin");
    const request = new Request("https://api.test/storage/", { method: "POST", body: fd });
    const err = await receivePostObject({ ...env, UPLOAD_MAX_BYTES: "1500" } as Env, request).catch((e) => e);
    const s3 = toS3Error(err);
    expect([s3.status, s3.code, s3.details.MaxSizeAllowed]).toEqual([400, "EntityTooLarge", 1500]);
    expect(await env.FILES.head(key)).toBeNull();
  });

  it("answers 400 InvalidArgument to a form without a file", async () => {
    const { admin } = await newAccount();
    const fu = await newFileUpload(admin.token, "a.txt", "text/plain");
    const r = await postForm(fu.s3_signature.url, fu.s3_signature.fields, null);
    expectS3Error(r, 400, "InvalidArgument");
    expect(r.text).toContain("<ArgumentName>file</ArgumentName>");
  });

  it("accepts field names in any case", async () => {
    const { admin } = await newAccount();
    const fu = await newFileUpload(admin.token, "mixed.txt", "text/plain");
    const f = fu.s3_signature.fields;
    const mixed: [string, string][] = [
      ["ACL", f.acl],
      ["content-type", f["Content-Type"]],
      ["Key", f.key],
      ["X-Amz-Algorithm", f["x-amz-algorithm"]],
      ["X-AMZ-CREDENTIAL", f["x-amz-credential"]],
      ["x-Amz-Date", f["x-amz-date"]],
      ["Policy", f.policy],
      ["X-Amz-Signature", f["x-amz-signature"]],
    ];
    const r = await postForm(fu.s3_signature.url, mixed, new TextEncoder().encode("hello"));
    expectStatus(r, 204);
    expect(new TextDecoder().decode((await stored(f.key))!)).toBe("hello");
  });

  it("answers success_action_status 201 with S3's PostResponse XML, 200 with an empty body", async () => {
    const key = `fileupload/${crypto.randomUUID()}/s.txt`;
    const fields = await signedForm({ key, contentType: "text/plain", maxBytes: 100 });
    // success_action_status must be covered by the policy like any field (ours does not cover it).
    const denied = await postForm(
      "/storage/",
      { ...fields, success_action_status: "201" },
      new Uint8Array([1]),
    );
    expectS3Error(denied, 403, "AccessDenied");

    const s3 = new S3Client({
      region: env.STORAGE_REGION,
      credentials: { accessKeyId: env.STORAGE_ACCESS_KEY_ID, secretAccessKey: env.STORAGE_SECRET_ACCESS_KEY },
      endpoint: "https://0123456789abcdef.r2.cloudflarestorage.com",
      forcePathStyle: true,
    });
    for (const status of ["201", "200"]) {
      const k = `fileupload/${crypto.randomUUID()}/s.txt`;
      const { fields: sdk } = await createPresignedPost(s3, {
        Bucket: env.STORAGE_BUCKET,
        Key: k,
        Fields: { success_action_status: status },
        Expires: 60,
      });
      const r = await postForm("/storage/", sdk, new TextEncoder().encode("abc"));
      expectStatus(r, Number(status));
      if (status === "201") {
        expect(r.headers.get("Content-Type")).toBe("application/xml");
        expect(r.text).toContain(`<Key>${k}</Key>`);
        expect(r.text).toContain(`<Bucket>${env.STORAGE_BUCKET}</Bucket>`);
        expect(r.text).toMatch(/<ETag>&quot;[0-9a-f]{32}&quot;<\/ETag>/);
        expect(r.text).toContain(`<Location>https://api.test/files/fileupload/`);
      } else {
        expect(r.text).toBe("");
      }
    }
  });

  it("accepts a form made by @aws-sdk/s3-presigned-post with the same credentials and bucket", async () => {
    const s3 = new S3Client({
      region: env.STORAGE_REGION,
      credentials: { accessKeyId: env.STORAGE_ACCESS_KEY_ID, secretAccessKey: env.STORAGE_SECRET_ACCESS_KEY },
      endpoint: "https://0123456789abcdef.r2.cloudflarestorage.com",
      forcePathStyle: true,
    });
    const prefix = `uploads/${crypto.randomUUID()}/`;
    const { fields } = await createPresignedPost(s3, {
      Bucket: env.STORAGE_BUCKET,
      Key: `${prefix}\${filename}`,
      Conditions: [
        ["content-length-range", 1, 300_000],
        ["starts-with", "$Content-Type", "image/"],
      ],
      Fields: { acl: "public-read", "Content-Type": "image/png" },
      Expires: 60,
    });
    const content = pseudoRandomBytes(250_000, 9);
    const r = await postForm("/storage", fields, content, { filename: "C:\\photos\\holiday.png" });
    expectStatus(r, 204);
    expect(bytesEqual((await stored(`${prefix}holiday.png`))!, content)).toBe(true);
    // …and the SDK's form is checked like ours: another bucket in the form is refused.
    const wrong = await postForm("/storage/", { ...fields, bucket: "another-bucket" }, content);
    expectS3Error(wrong, 403, "AccessDenied");
  });

  it("streams a file larger than one part through an R2 multipart upload", async () => {
    const { admin } = await newAccount();
    const fu = await newFileUpload(admin.token, "video.bin", "application/octet-stream");
    const content = pseudoRandomBytes(20 * MiB + 12345, 3);
    const r = await postForm(fu.s3_signature.url, fu.s3_signature.fields, content);
    expectStatus(r, 204);
    // An R2/S3 multipart ETag: "<md5 of the part md5s>-<parts>" (8 MiB parts: 3).
    expect(r.headers.get("ETag")).toMatch(/^"[0-9a-f]{32}-3"$/);
    expect(bytesEqual((await stored(fu.s3_signature.fields.key))!, content)).toBe(true);
    const after = await call(fu.url, { token: admin.token });
    expect(after.body.uploaded_at).not.toBeNull();
  });

  it("answers 412 to a body that is not multipart/form-data, and 400 to a malformed one", async () => {
    const r = await call("/storage/", {
      method: "POST",
      raw: "key=x",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expectS3Error(r, 412, "PreconditionFailed");
    const bad = await call("/storage/", {
      method: "POST",
      raw: '--b\r\nContent-Disposition: form-data; name="key"\r\n\r\nx',
      headers: { "Content-Type": "multipart/form-data; boundary=b" },
    });
    expectS3Error(bad, 400, "MalformedPOSTRequest");
  });

  it("is anonymous: no token needed, and a form is not an API request (no slash rule)", async () => {
    const key = `fileupload/${crypto.randomUUID()}/n.txt`;
    const fields = await signedForm({ key, contentType: "text/plain", maxBytes: 10 });
    const r = await postForm("/storage", fields, new TextEncoder().encode("ok"));
    expectStatus(r, 204);
    expect(r.headers.get("Access-Control-Allow-Origin")).toBe("*");
  });
});
