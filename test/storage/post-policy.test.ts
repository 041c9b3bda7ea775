// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${filename}` is S3's literal form variable here.
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  base64EncodeUtf8,
  checkContentLength,
  createPostForm,
  expandFilename,
  filenameBase,
  type VerifyPostFormOptions,
  verifyPostForm,
} from "../../src/s3/post-policy";
import { S3Error } from "../../src/s3/s3-errors";
import { amzDate, deriveSigningKey, hmacHex } from "../../src/s3/sigv4";
import { AWS_EXAMPLE } from "./vectors";

const AKID = "AKIATESTKEY0000000001";
const SECRET = "test-secret-access-key-0000000000000000000";
const BUCKET = "field-dispatch-files";
const REGION = "auto";
const NOW = new Date("2026-03-01T10:00:00.000Z");
const credentials = (id: string) =>
  id === AKID ? SECRET : id === AWS_EXAMPLE.accessKeyId ? AWS_EXAMPLE.secretAccessKey : undefined;

async function issue(overrides: Partial<Parameters<typeof createPostForm>[0]> = {}) {
  return createPostForm({
    accessKeyId: AKID,
    secretAccessKey: SECRET,
    region: REGION,
    bucket: BUCKET,
    key: "fileupload/0b6f5c1e-0000-4000-8000-000000000001/site photo.jpg",
    contentType: "image/jpeg",
    maxBytes: 100 * 1024 * 1024,
    now: NOW,
    ...overrides,
  });
}

function verify(fields: VerifyPostFormOptions["fields"], extra: Partial<VerifyPostFormOptions> = {}) {
  return verifyPostForm({ fields, bucket: BUCKET, credentials, now: NOW, ...extra });
}

async function rejection(p: Promise<unknown>): Promise<S3Error> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(S3Error);
  return err as S3Error;
}

/** Sign any policy document (object or raw JSON text) with the test credentials. */
async function signPolicy(policy: unknown, fields: Record<string, string>, date = NOW) {
  const xAmzDate = amzDate(date);
  const credential = `${AKID}/${xAmzDate.slice(0, 8)}/${REGION}/s3/aws4_request`;
  const b64 = base64EncodeUtf8(typeof policy === "string" ? policy : JSON.stringify(policy));
  const key = await deriveSigningKey(SECRET, xAmzDate.slice(0, 8), REGION);
  return {
    ...fields,
    "x-amz-algorithm": "AWS4-HMAC-SHA256",
    "x-amz-credential": credential,
    "x-amz-date": xAmzDate,
    policy: b64,
    "x-amz-signature": await hmacHex(key, b64),
  };
}

/** A signed form whose policy has the standard SigV4 conditions plus `conditions`. */
async function customForm(
  conditions: unknown[],
  fields: Record<string, string>,
  expiration = "2026-03-01T11:00:00Z",
) {
  const xAmzDate = amzDate(NOW);
  return signPolicy(
    {
      expiration,
      conditions: [
        ...conditions,
        { "x-amz-algorithm": "AWS4-HMAC-SHA256" },
        { "x-amz-credential": `${AKID}/${xAmzDate.slice(0, 8)}/${REGION}/s3/aws4_request` },
        { "x-amz-date": xAmzDate },
      ],
    },
    fields,
  );
}

function decodePolicy(b64: string): unknown {
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))));
}

describe("AWS sigv4-post-example", () => {
  it("the policy base64 is the page's JSON (CRLF line ends), byte for byte", () => {
    expect(base64EncodeUtf8(AWS_EXAMPLE.policyJson)).toBe(AWS_EXAMPLE.policy);
    expect(AWS_EXAMPLE.policy.length).toBe(864);
  });

  it("reproduces the published signature", async () => {
    const key = await deriveSigningKey(
      AWS_EXAMPLE.secretAccessKey,
      AWS_EXAMPLE.date,
      AWS_EXAMPLE.region,
      "s3",
    );
    expect(await hmacHex(key, AWS_EXAMPLE.policy)).toBe(AWS_EXAMPLE.signature);
  });

  it("the page's form verifies, with mixed-case names and ${filename} expanded", async () => {
    const v = await verifyPostForm({
      fields: AWS_EXAMPLE.formFields,
      bucket: AWS_EXAMPLE.bucket,
      credentials,
      region: "us-east-1",
      now: new Date("2015-12-29T00:00:00Z"),
      filename: "C:\\Users\\me\\Pictures\\MyPhoto.jpg",
    });
    expect(v.key).toBe("user/user1/MyPhoto.jpg");
    expect(v.accessKeyId).toBe(AWS_EXAMPLE.accessKeyId);
    expect(v.region).toBe("us-east-1");
    expect(v.contentType).toBe("image/jpeg");
    expect(v.acl).toBe("public-read");
    expect(v.contentLengthRange).toBeNull();
    expect(v.successActionStatus).toBe(204);
    expect(v.successActionRedirect).toBe("http://sigv4examplebucket.s3.amazonaws.com/successful_upload.html");
    expect(v.expiration.toISOString()).toBe("2015-12-30T12:00:00.000Z");
  });

  it("the page's form is refused after its expiration and for another bucket", async () => {
    const late = await rejection(
      verifyPostForm({
        fields: AWS_EXAMPLE.formFields,
        bucket: AWS_EXAMPLE.bucket,
        credentials,
        now: new Date("2015-12-30T12:00:00.001Z"),
        filename: "a.jpg",
      }),
    );
    expect([late.status, late.code, late.message]).toEqual([
      403,
      "AccessDenied",
      "Invalid according to Policy: Policy expired.",
    ]);
    const other = await rejection(
      verifyPostForm({
        fields: AWS_EXAMPLE.formFields,
        bucket: "another-bucket",
        credentials,
        now: new Date("2015-12-29T00:00:00Z"),
        filename: "a.jpg",
      }),
    );
    expect(other.message).toBe(
      'Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "sigv4examplebucket"]',
    );
  });
});

describe("createPostForm", () => {
  it("issues exactly the documented fields, in order", async () => {
    const { fields } = await issue();
    expect(Object.keys(fields)).toEqual([
      "acl",
      "Content-Type",
      "key",
      "x-amz-algorithm",
      "x-amz-credential",
      "x-amz-date",
      "policy",
      "x-amz-signature",
    ]);
    expect(fields.acl).toBe("public-read");
    expect(fields["Content-Type"]).toBe("image/jpeg");
    expect(fields["x-amz-algorithm"]).toBe("AWS4-HMAC-SHA256");
    expect(fields["x-amz-credential"]).toBe(`${AKID}/20260301/auto/s3/aws4_request`);
    expect(fields["x-amz-date"]).toBe("20260301T100000Z");
    expect(fields["x-amz-signature"]).toMatch(/^[0-9a-f]{64}$/);
  });

  it("signs a policy that pins bucket, key, acl, type and the SigV4 fields, and bounds the size", async () => {
    const { fields } = await issue({ expiresInSeconds: 3600, maxBytes: 1234 });
    expect(decodePolicy(fields.policy)).toEqual({
      expiration: "2026-03-01T11:00:00.000Z",
      conditions: [
        { bucket: BUCKET },
        { key: "fileupload/0b6f5c1e-0000-4000-8000-000000000001/site photo.jpg" },
        { acl: "public-read" },
        { "Content-Type": "image/jpeg" },
        { "x-amz-algorithm": "AWS4-HMAC-SHA256" },
        { "x-amz-credential": `${AKID}/20260301/auto/s3/aws4_request` },
        { "x-amz-date": "20260301T100000Z" },
        ["content-length-range", 0, 1234],
      ],
    });
    // The signature, recomputed with an independent HMAC (node:crypto).
    const h = (k: string | Buffer, d: string) => createHmac("sha256", k).update(d).digest();
    const key = h(h(h(h(`AWS4${SECRET}`, "20260301"), REGION), "s3"), "aws4_request");
    expect(fields["x-amz-signature"]).toBe(h(key, fields.policy).toString("hex"));
  });

  it("keeps non-ASCII key characters (UTF-8 in the base64 policy)", async () => {
    const { fields } = await issue({
      key: "fileupload/1/président — été.pdf",
      contentType: "application/pdf",
    });
    expect((decodePolicy(fields.policy) as { conditions: unknown[] }).conditions[1]).toEqual({
      key: "fileupload/1/président — été.pdf",
    });
    const v = await verify(fields);
    expect(v.key).toBe("fileupload/1/président — été.pdf");
  });

  it("refuses a bad maxBytes or lifetime", async () => {
    await expect(issue({ maxBytes: -1 })).rejects.toThrow(RangeError);
    await expect(issue({ maxBytes: 1.5 })).rejects.toThrow(RangeError);
    await expect(issue({ expiresInSeconds: 0 })).rejects.toThrow(RangeError);
  });
});

describe("verifyPostForm", () => {
  it("accepts its own form (round trip) and returns what the upload needs", async () => {
    const { fields } = await issue({ maxBytes: 5000 });
    const v = await verify(fields, { region: "auto" });
    expect(v.key).toBe("fileupload/0b6f5c1e-0000-4000-8000-000000000001/site photo.jpg");
    expect(v.contentLengthRange).toEqual({ min: 0, max: 5000 });
    expect(v.successActionStatus).toBe(204);
    expect(v.contentType).toBe("image/jpeg");
    expect(v.acl).toBe("public-read");
    expect(v.accessKeyId).toBe(AKID);
    // As a Map (the multipart parser's output) and as [name, value] pairs too.
    const asMap = new Map(Object.entries(fields).map(([k, value]) => [k.toLowerCase(), { name: k, value }]));
    expect((await verify(asMap)).key).toBe(v.key);
    expect((await verify(Object.entries(fields))).key).toBe(v.key);
    // Until the expiration instant included.
    expect((await verify(fields, { now: new Date("2026-03-01T11:00:00.000Z") })).key).toBe(v.key);
  });

  it("accepts mixed-case field names (values stay exact)", async () => {
    const { fields } = await issue();
    const mixed = {
      ACL: fields.acl,
      "content-type": fields["Content-Type"],
      Key: fields.key,
      "X-Amz-Algorithm": fields["x-amz-algorithm"],
      "X-AMZ-CREDENTIAL": fields["x-amz-credential"],
      "x-Amz-Date": fields["x-amz-date"],
      Policy: fields.policy,
      "X-Amz-Signature": fields["x-amz-signature"],
    };
    expect((await verify(mixed)).key).toBe(fields.key);
    const err = await rejection(verify({ ...mixed, "content-type": "IMAGE/JPEG" }));
    expect(err.message).toBe(
      'Invalid according to Policy: Policy Condition failed: ["eq", "$Content-Type", "image/jpeg"]',
    );
  });

  it("refuses a policy or signature changed by one byte (403 SignatureDoesNotMatch)", async () => {
    const { fields } = await issue();
    const flip = (s: string, i: number) => {
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
      const c = s[i] === "=" ? "A" : alphabet[(alphabet.indexOf(s[i]) + 1) % 64];
      return s.slice(0, i) + c + s.slice(i + 1);
    };
    for (const i of [0, 1, 17, Math.floor(fields.policy.length / 2), fields.policy.length - 1]) {
      const err = await rejection(verify({ ...fields, policy: flip(fields.policy, i) }));
      expect([err.status, err.code]).toEqual([403, "SignatureDoesNotMatch"]);
      expect(err.message).toBe(
        "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
      );
    }
    const sig = fields["x-amz-signature"];
    for (const bad of [
      `${sig.slice(0, -1)}${sig.endsWith("0") ? "1" : "0"}`,
      sig.toUpperCase(),
      sig.slice(0, -2),
      `${sig}00`,
      "",
    ]) {
      if (bad === sig) continue;
      const err = await rejection(verify({ ...fields, "x-amz-signature": bad }));
      expect([err.status, err.code], bad).toEqual([403, "SignatureDoesNotMatch"]);
    }
    // S3's diagnostic elements: the string to sign is the policy as sent.
    const err = await rejection(verify({ ...fields, policy: `${fields.policy.slice(0, -2)}` }));
    expect(err.details.AWSAccessKeyId).toBe(AKID);
    expect(err.details.StringToSign).toBe(fields.policy.slice(0, -2));
    expect(err.details.SignatureProvided).toBe(sig);
    expect(String(err.details.StringToSignBytes).split(" ")[0]).toBe(
      fields.policy.charCodeAt(0).toString(16),
    );
  });

  it("checks the signature before trusting (or even decoding) the policy", async () => {
    const { fields } = await issue();
    // A forged, more permissive policy with the original signature.
    const forged = base64EncodeUtf8(
      JSON.stringify({ expiration: "2099-01-01T00:00:00Z", conditions: [["starts-with", "$key", ""]] }),
    );
    const e1 = await rejection(verify({ ...fields, policy: forged, key: "anything" }));
    expect(e1.code).toBe("SignatureDoesNotMatch");
    // Garbage that is not even base64: still a signature failure, not a policy error.
    const e2 = await rejection(verify({ ...fields, policy: "!!not base64!!" }));
    expect(e2.code).toBe("SignatureDoesNotMatch");
  });

  it("refuses an expired policy (403)", async () => {
    const { fields } = await issue({ expiresInSeconds: 60 });
    const err = await rejection(verify(fields, { now: new Date(NOW.getTime() + 61_000) }));
    expect([err.status, err.code, err.message]).toEqual([
      403,
      "AccessDenied",
      "Invalid according to Policy: Policy expired.",
    ]);
  });

  it("refuses a field no condition covers (403 Extra input fields), except the exempt ones", async () => {
    const { fields } = await issue();
    const err = await rejection(verify({ ...fields, "X-Amz-Meta-Foo": "bar" }));
    expect([err.status, err.code, err.message]).toEqual([
      403,
      "AccessDenied",
      "Invalid according to Policy: Extra input fields: X-Amz-Meta-Foo",
    ]);
    const status = await rejection(verify({ ...fields, success_action_status: "201" }));
    expect(status.message).toBe("Invalid according to Policy: Extra input fields: success_action_status");
    // x-ignore-*, file, policy and x-amz-signature need no condition.
    const ok = await verify({ ...fields, "x-ignore-flash": "1", "X-Ignore-Other": "2", file: "inline file" });
    expect(ok.key).toBe(fields.key);
  });

  it("refuses a mismatched Content-Type (403 Policy Condition failed)", async () => {
    const { fields } = await issue();
    const err = await rejection(verify({ ...fields, "Content-Type": "image/png" }));
    expect([err.status, err.code, err.message]).toEqual([
      403,
      "AccessDenied",
      'Invalid according to Policy: Policy Condition failed: ["eq", "$Content-Type", "image/jpeg"]',
    ]);
  });

  it("refuses a key outside the signed key, including via ${filename}", async () => {
    const { fields } = await issue({ key: "fileupload/1/a.jpg" });
    const err = await rejection(verify({ ...fields, key: "fileupload/2/a.jpg" }));
    expect([err.status, err.message]).toEqual([
      403,
      'Invalid according to Policy: Policy Condition failed: ["eq", "$key", "fileupload/1/a.jpg"]',
    ]);
    const viaFilename = await rejection(
      verify({ ...fields, key: "fileupload/1/${filename}" }, { filename: "b.jpg" }),
    );
    expect(viaFilename.code).toBe("AccessDenied");
    // ...and accepts it when the expansion lands on the signed key.
    expect(
      (await verify({ ...fields, key: "fileupload/1/${filename}" }, { filename: "x/y\\a.jpg" })).key,
    ).toBe("fileupload/1/a.jpg");
  });

  it("refuses an unknown access key (403 InvalidAccessKeyId)", async () => {
    const { fields } = await issue({ accessKeyId: "AKIAUNKNOWN000000000" });
    const err = await rejection(verify(fields));
    expect([err.status, err.code, err.message]).toEqual([
      403,
      "InvalidAccessKeyId",
      "The AWS Access Key Id you provided does not exist in our records.",
    ]);
    expect(err.details.AWSAccessKeyId).toBe("AKIAUNKNOWN000000000");
    // An async lookup works the same.
    const ok = await verifyPostForm({
      fields: (await issue()).fields,
      bucket: BUCKET,
      now: NOW,
      credentials: async (id) => (id === AKID ? SECRET : null),
    });
    expect(ok.accessKeyId).toBe(AKID);
  });

  it("refuses a form signed with another secret", async () => {
    const { fields } = await issue({ secretAccessKey: "another-secret" });
    expect((await rejection(verify(fields))).code).toBe("SignatureDoesNotMatch");
  });

  it("answers missing fields as S3 does", async () => {
    const { fields } = await issue();
    const without = (...names: string[]) =>
      Object.fromEntries(Object.entries(fields).filter(([k]) => !names.includes(k)));
    // No SigV4 field at all: an anonymous POST, refused on a private bucket.
    const anon = await rejection(
      verify(without("x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature")),
    );
    expect([anon.status, anon.code, anon.message]).toEqual([403, "AccessDenied", "Access Denied"]);
    for (const [dropped, named] of [
      ["key", "key"],
      ["x-amz-algorithm", "X-Amz-Algorithm"],
      ["x-amz-credential", "X-Amz-Credential"],
      ["x-amz-date", "X-Amz-Date"],
      ["x-amz-signature", "X-Amz-Signature"],
      ["policy", "Policy"],
    ]) {
      const err = await rejection(verify(without(dropped)));
      expect([err.status, err.code], dropped).toEqual([400, "InvalidArgument"]);
      expect(err.message).toBe(
        `Bucket POST must contain a field named '${named}'.  If it is specified, please check the order of the fields.`,
      );
      expect(err.details).toEqual({ ArgumentName: named, ArgumentValue: "" });
    }
  });

  it("refuses a bad algorithm, credential or date (400 InvalidArgument)", async () => {
    const { fields } = await issue();
    const cases: [Record<string, string>, string, string][] = [
      [
        { "x-amz-algorithm": "AWS4-HMAC-SHA1" },
        "X-Amz-Algorithm",
        'X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"',
      ],
      [{ "x-amz-credential": "nonsense" }, "X-Amz-Credential", "the Credential is mal-formed"],
      [
        { "x-amz-credential": "/20260301/auto/s3/aws4_request" },
        "X-Amz-Credential",
        "a non-empty Access Key (AKID)",
      ],
      [
        { "x-amz-credential": `${AKID}/2026-03-01/auto/s3/aws4_request` },
        "X-Amz-Credential",
        "incorrect date format",
      ],
      [
        { "x-amz-credential": `${AKID}/20260301/auto/ec2/aws4_request` },
        "X-Amz-Credential",
        "incorrect service",
      ],
      [
        { "x-amz-credential": `${AKID}/20260301/auto/s3/aws5_request` },
        "X-Amz-Credential",
        "incorrect terminal",
      ],
      [
        { "x-amz-date": "2026-03-01T10:00:00Z" },
        "X-Amz-Date",
        "X-Amz-Date must be formated via ISO8601 Long format",
      ],
    ];
    for (const [change, argName, message] of cases) {
      const err = await rejection(verify({ ...fields, ...change }));
      expect([err.status, err.code], message).toEqual([400, "InvalidArgument"]);
      expect(err.message).toContain(message);
      expect(err.details.ArgumentName).toBe(argName);
    }
    const region = await rejection(verify(fields, { region: "us-east-1" }));
    expect(region.message).toBe("the region 'auto' is wrong; expecting 'us-east-1'");
    expect(region.details.Region).toBe("us-east-1");
  });

  it("checks the bucket condition against the bucket posted to (and a sent bucket field)", async () => {
    const { fields } = await issue();
    const err = await rejection(verify(fields, { bucket: "other-bucket" }));
    expect(err.message).toBe(
      `Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "${BUCKET}"]`,
    );
    expect((await verify({ ...fields, bucket: BUCKET })).key).toBe(fields.key);
    expect((await rejection(verify({ ...fields, bucket: "other-bucket" }))).code).toBe("AccessDenied");
  });

  it("supports eq, starts-with (Content-Type lists) and content-length-range conditions", async () => {
    const conditions = [
      { bucket: BUCKET },
      ["starts-with", "$key", "user/user1/"],
      ["eq", "$acl", "private"],
      ["StArTs-WiTh", "$CoNtEnT-TyPe", "image/"],
      ["starts-with", "$x-amz-meta-tag", ""],
      ["content-length-range", "5", "10"],
      ["content-length-range", 1, 8],
      { success_action_status: "201" },
    ];
    const base = {
      key: "user/user1/${filename}",
      acl: "private",
      "Content-Type": "image/jpeg",
      "x-amz-meta-tag": "",
      success_action_status: "201",
    };
    const v = await verify(await customForm(conditions, base), { filename: "photo.jpg" });
    expect(v.key).toBe("user/user1/photo.jpg");
    expect(v.contentLengthRange).toEqual({ min: 5, max: 8 });
    expect(v.successActionStatus).toBe(201);
    // "image/jpg,image/png,image/gif" passes, "image/jpg,text/plain" does not.
    expect(
      (
        await verify(
          await customForm(conditions, { ...base, "Content-Type": "image/jpg,image/png,image/gif" }),
          { filename: "a" },
        )
      ).contentType,
    ).toBe("image/jpg,image/png,image/gif");
    const list = await rejection(
      verify(await customForm(conditions, { ...base, "Content-Type": "image/jpg,text/plain" }), {
        filename: "a",
      }),
    );
    expect(list.message).toBe(
      'Invalid according to Policy: Policy Condition failed: ["StArTs-WiTh", "$CoNtEnT-TyPe", "image/"]',
    );
    // starts-with is case-sensitive on the value.
    const prefix = await rejection(verify(await customForm(conditions, { ...base, key: "User/user1/x" })));
    expect(prefix.message).toBe(
      'Invalid according to Policy: Policy Condition failed: ["starts-with", "$key", "user/user1/"]',
    );
  });

  it('fails a condition on an absent field, even starts-with "", and an operand without $', async () => {
    const absent = await rejection(
      verify(
        await customForm([{ bucket: BUCKET }, { key: "k" }, ["starts-with", "$x-amz-meta-tag", ""]], {
          key: "k",
        }),
      ),
    );
    expect(absent.message).toBe(
      'Invalid according to Policy: Policy Condition failed: ["starts-with", "$x-amz-meta-tag", ""]',
    );
    const noDollar = await rejection(
      verify(
        await customForm([{ bucket: BUCKET }, { key: "k" }, ["eq", "acl", "private"]], {
          key: "k",
          acl: "private",
        }),
      ),
    );
    expect(noDollar.message).toBe(
      'Invalid according to Policy: Policy Condition failed: ["eq", "acl", "private"]',
    );
  });

  it("checks the file size against content-length-range (inclusive)", async () => {
    const { fields } = await issue({ maxBytes: 10 });
    expect((await verify(fields, { fileSize: 10 })).contentLengthRange).toEqual({ min: 0, max: 10 });
    expect((await verify(fields, { fileSize: 0 })).key).toBe(fields.key);
    const big = await rejection(verify(fields, { fileSize: 12 }));
    expect([big.status, big.code, big.message]).toEqual([
      400,
      "EntityTooLarge",
      "Your proposed upload exceeds the maximum allowed size",
    ]);
    expect(big.details).toEqual({ ProposedSize: 12, MaxSizeAllowed: 10 });
    const small = await rejection(
      verify(
        await customForm([{ bucket: BUCKET }, { key: "k" }, ["content-length-range", 5, 10]], { key: "k" }),
        {
          fileSize: 1,
        },
      ),
    );
    expect([small.status, small.code]).toEqual([400, "EntityTooSmall"]);
    expect(small.details).toEqual({ ProposedSize: 1, MinSizeAllowed: 5 });
    expect(() => checkContentLength(null, 1e12)).not.toThrow();
    expect(() => checkContentLength({ min: 0, max: 3 }, 4)).toThrow(S3Error);
  });

  it("refuses malformed policies (400 InvalidPolicyDocument) once the signature matched", async () => {
    const cond = [{ bucket: BUCKET }, { key: "k" }];
    const cases: [unknown, string][] = [
      ["{not json", "Invalid Policy: Invalid JSON."],
      ["[1,2]", "Invalid Policy: Invalid JSON."],
      [
        '{"expiration":"2026-03-01T11:00:00Z","conditions":[["content-length-range",0,512.0]]}',
        "Invalid Policy: Invalid JSON.",
      ],
      [
        '{"expiration":"2026-03-01T11:00:00Z","conditions":[["content-length-range",0,1e3]]}',
        "Invalid Policy: Invalid JSON.",
      ],
      [{ conditions: cond }, "Invalid Policy: Policy missing expiration."],
      [{ expiration: "2026-03-01T11:00:00Z" }, "Invalid Policy: Policy missing conditions."],
      [{ EXPIRATION: "2026-03-01T11:00:00Z", conditions: cond }, "Invalid Policy: Unexpected: 'expiration'"],
      [{ expiration: "2026-03-01T11:00:00Z", CONDITIONS: cond }, "Invalid Policy: Unexpected: 'conditions'"],
      [
        { expiration: "2026-03-01 11:00:00 UTC", conditions: cond },
        "Invalid Policy: Invalid 'expiration' value: '2026-03-01 11:00:00 UTC'",
      ],
      [
        { expiration: "2026-03-01T11:00:00+02:00", conditions: cond },
        "Invalid Policy: Invalid 'expiration' value: '2026-03-01T11:00:00+02:00'",
      ],
      [
        { expiration: "2026-02-30T11:00:00Z", conditions: cond },
        "Invalid Policy: Invalid 'expiration' value: '2026-02-30T11:00:00Z'",
      ],
      [
        { expiration: "2026-03-01T11:00:00Z", conditions: {} },
        "Invalid Policy: Invalid 'conditions' value: must be a List.",
      ],
      [
        { expiration: "2026-03-01T11:00:00Z", conditions: [{}] },
        "Invalid Policy: Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.",
      ],
      [
        { expiration: "2026-03-01T11:00:00Z", conditions: [{ bucket: BUCKET, key: "k" }] },
        "Invalid Policy: Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.",
      ],
      [
        { expiration: "2026-03-01T11:00:00Z", conditions: [{ "Content-Length": 6199034 }] },
        "Invalid Policy: Invalid Simple-Condition: value must be a string.",
      ],
      [
        { expiration: "2026-03-01T11:00:00Z", conditions: [{ success_action_redirect: null }] },
        "Invalid Policy: Invalid JSON.",
      ],
      [
        { expiration: "2026-03-01T11:00:00Z", conditions: [[]] },
        "Invalid Policy: Invalid Condition: missing operation identifier.",
      ],
      [
        { expiration: "2026-03-01T11:00:00Z", conditions: [["ends-with", "$key", "x"]] },
        "Invalid Policy: Invalid Condition: unknown operation 'ends-with'.",
      ],
      [
        { expiration: "2026-03-01T11:00:00Z", conditions: [["eq", "$key"]] },
        "Invalid Policy: Invalid eq: wrong number of arguments.",
      ],
      [
        { expiration: "2026-03-01T11:00:00Z", conditions: [["content-length-range", 0]] },
        "Invalid Policy: Invalid content-length-range: wrong number of arguments.",
      ],
      [
        { expiration: "2026-03-01T11:00:00Z", conditions: [["content-length-range", -1, 0]] },
        "Invalid Policy: Invalid content-length-range: bounds must not be negative.",
      ],
      [
        { expiration: "2026-03-01T11:00:00Z", conditions: [["eq", "$key", 5]] },
        "Invalid Policy: Invalid JSON.",
      ],
      [
        { expiration: "2026-03-01T11:00:00Z", conditions: ["key"] },
        "Invalid Policy: Invalid condition test: must be a List or Object.",
      ],
    ];
    for (const [policy, message] of cases) {
      const err = await rejection(verify(await signPolicy(policy, { key: "k" })));
      expect([err.status, err.code, err.message], JSON.stringify(policy)).toEqual([
        400,
        "InvalidPolicyDocument",
        message,
      ]);
    }
    // A signed policy that is not base64.
    const raw = await signPolicy({}, { key: "k" });
    const notB64 = "%%%";
    const key = await deriveSigningKey(SECRET, raw["x-amz-date"].slice(0, 8), REGION);
    const err = await rejection(
      verify({ ...raw, policy: notB64, "x-amz-signature": await hmacHex(key, notB64) }),
    );
    expect(err.message).toBe("Invalid Policy: invalid Base64 encoding.");
  });

  it("a non-numeric content-length-range bound fails as a condition (403)", async () => {
    const err = await rejection(
      verify(
        await customForm([{ bucket: BUCKET }, { key: "k" }, ["content-length-range", "test", "10"]], {
          key: "k",
        }),
      ),
    );
    expect([err.status, err.message]).toEqual([
      403,
      'Invalid according to Policy: Policy Condition failed: ["content-length-range", "test", "10"]',
    ]);
  });

  it("reads success_action_status as S3 does (200/201/204, else 204)", async () => {
    const statuses: [string, number][] = [
      ["200", 200],
      ["201", 201],
      ["204", 204],
      ["404", 204],
      ["", 204],
    ];
    for (const [value, expected] of statuses) {
      const form = await customForm(
        [{ bucket: BUCKET }, { key: "k" }, ["starts-with", "$success_action_status", ""]],
        {
          key: "k",
          success_action_status: value,
        },
      );
      expect((await verify(form)).successActionStatus, value).toBe(expected);
    }
  });

  it("expands ${filename} in every field before matching, and leaves it when the part has no filename", async () => {
    const conditions = [
      { bucket: BUCKET },
      ["starts-with", "$key", "uploads/"],
      ["eq", "$Content-Disposition", 'attachment; filename="report.pdf"'],
    ];
    const fields = {
      key: "uploads/${filename}",
      "Content-Disposition": 'attachment; filename="${filename}"',
    };
    const form = await customForm(conditions, fields);
    const v = await verify(form, { filename: "/home/me/report.pdf" });
    expect(v.key).toBe("uploads/report.pdf");
    expect(v.fields.get("content-disposition")?.value).toBe('attachment; filename="report.pdf"');
    // filename="" → empty; no filename parameter → literal "${filename}".
    const ok = await customForm([{ bucket: BUCKET }, ["starts-with", "$key", "uploads/"]], {
      key: "uploads/${filename}",
    });
    expect((await verify(ok, { filename: "" })).key).toBe("uploads/");
    expect((await verify(ok, { filename: null })).key).toBe("uploads/${filename}");
    expect(filenameBase("C:\\Program Files\\directory1\\file.txt")).toBe("file.txt");
    expect(expandFilename("a/${filename}/${filename}", "x$&y")).toBe("a/x$&y/x$&y");
  });

  it("joins repeated fields with commas (S3's rule) before matching", async () => {
    const form = await customForm(
      [{ bucket: BUCKET }, { key: "k" }, { "x-amz-meta-tag": "Ninja,Stallman" }],
      { key: "k" },
    );
    const pairs: [string, string][] = [
      ...Object.entries(form),
      ["x-amz-meta-tag", "Ninja"],
      ["X-Amz-Meta-Tag", "Stallman"],
    ];
    expect((await verify(pairs)).fields.get("x-amz-meta-tag")?.value).toBe("Ninja,Stallman");
  });

  it("refuses a key longer than 1024 UTF-8 bytes", async () => {
    const longKey = `k/${"é".repeat(512)}`;
    const err = await rejection(
      verify(await customForm([{ bucket: BUCKET }, { key: longKey }], { key: longKey })),
    );
    expect([err.status, err.code]).toEqual([400, "KeyTooLongError"]);
  });
});
