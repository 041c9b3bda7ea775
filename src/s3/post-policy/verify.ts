/**
 * The signed storage upload form: an S3 POST policy with AWS Signature Version 4
 * (contract §8, interface §2.1 and §4.2).
 *
 * `createPostForm` issues the form the service returns in `s3_signature.fields`;
 * `verifyPostForm` is the check the Worker's `{upload_url}` runs on a received form, done the
 * way S3's POST Object does it, in this order:
 *
 *   1. required fields present (names case-insensitive: "The post parameters are case
 *      insensitive", S3 sigv4-post-example);
 *   2. `x-amz-credential` parsed, its access key known;
 *   3. the signature: hex HMAC-SHA256 of the base64 `policy` string exactly as received,
 *      under the SigV4 key derived from the credential's date and region, compared in
 *      constant time, before anything in the policy is decoded or trusted;
 *   4. the policy decoded and its shape checked (400 InvalidPolicyDocument);
 *   5. expiration (403 "Policy expired.");
 *   6. every condition (403 "Policy Condition failed: [...]");
 *   7. every form field covered by a condition, except `policy`, `x-amz-signature`, `file`
 *      and `x-ignore-*` (403 "Extra input fields: <name>").
 *
 * References: S3 developer guide "Browser-Based Uploads Using POST (AWS Signature Version
 * 4)", "Creating an HTML Form", "Creating a POST Policy" (sigv4-HTTPPOSTConstructPolicy),
 * "Authenticating Requests: Browser-Based Uploads Using POST", "POST Object"
 * (RESTObjectPOST). Where the docs are silent, messages follow S3's recorded answers.
 */

import type { FormField } from "../multipart";
import { accessDenied, invalidArgument, missingField, policyConditionFailed, S3Error } from "../s3-errors";
import { deriveSigningKey, hmacHex, SIGV4_ALGORITHM, timingSafeEqualHex } from "../sigv4";
import { conditionHolds, isExemptField } from "./conditions";
import { parseCredential, SERVICE } from "./credential";
import { parsePolicy } from "./document";
import {
  type ContentLengthRange,
  checkContentLength,
  expandFilename,
  type FormFieldsInput,
  normalizeFields,
} from "./fields";

/** S3's key length limit: "The name for a key is a sequence of Unicode characters whose UTF-8 encoding is at most 1024 bytes long." */
const MAX_KEY_BYTES = 1024;

const utf8 = new TextEncoder();

/** The secret for an access key id, or undefined/null when the key is unknown. */
export type CredentialLookup = (
  accessKeyId: string,
) => string | undefined | null | Promise<string | undefined | null>;

export interface VerifyPostFormOptions {
  fields: FormFieldsInput;
  /** The bucket the form was posted to: the policy's `bucket` condition is checked against it. */
  bucket: string;
  credentials: CredentialLookup;
  now?: Date;
  /** When set, the credential's region must be this one (S3: 400 "the region ... is wrong"). */
  region?: string;
  /**
   * The file part's `filename` parameter, for `${filename}` in field values; null or
   * undefined when the part has none (S3 then leaves `${filename}` as is).
   */
  filename?: string | null;
  /** The file's size when already known; checked against `content-length-range`. */
  fileSize?: number;
}

export interface VerifiedPostForm {
  /** The object key, `${filename}` expanded. */
  key: string;
  accessKeyId: string;
  /** The credential scope's region. */
  region: string;
  /** All fields by lowercased name, `${filename}` expanded. */
  fields: Map<string, FormField>;
  /** The policy's size bounds (inclusive), intersected if it has several; null if none. */
  contentLengthRange: ContentLengthRange | null;
  /** 200, 201 or 204 as requested; anything else (or absent) is 204, as on S3. */
  successActionStatus: 200 | 201 | 204;
  successActionRedirect: string | null;
  /** The `Content-Type` field (the object's Content-Type on S3), or null. */
  contentType: string | null;
  acl: string | null;
  expiration: Date;
}

/**
 * Verify a received POST form as S3 does (see the module comment for the order). Throws an
 * `S3Error`; resolves with what the caller needs to store the file: the expanded key, the
 * size bounds to enforce while streaming (`byteLimiter`), and the response to give.
 */
export async function verifyPostForm(opts: VerifyPostFormOptions): Promise<VerifiedPostForm> {
  const now = opts.now ?? new Date();
  const raw = normalizeFields(opts.fields);
  const get = (name: string) => raw.get(name)?.value;

  // 1. Required fields. With none of the SigV4 fields the request is anonymous, which S3
  //    refuses on a bucket that is not publicly writable (ours never is): 403 "Access
  //    Denied". SigV2 forms (AWSAccessKeyId/signature) are not accepted: the contract makes
  //    the form SigV4. Otherwise a missing field is S3's 400 InvalidArgument naming it.
  const sigv4Fields = ["x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature"];
  if (!sigv4Fields.some((f) => raw.has(f))) throw accessDenied();
  const required: [string, string][] = [
    ["key", "key"],
    ["x-amz-algorithm", "X-Amz-Algorithm"],
    ["x-amz-credential", "X-Amz-Credential"],
    ["x-amz-date", "X-Amz-Date"],
    ["x-amz-signature", "X-Amz-Signature"],
    ["policy", "Policy"],
  ];
  for (const [name, canonical] of required) {
    if (!raw.has(name)) throw missingField(canonical);
  }
  const algorithm = get("x-amz-algorithm")!;
  const credential = get("x-amz-credential")!;
  const xAmzDate = get("x-amz-date")!;
  const signature = get("x-amz-signature")!;
  const policyB64 = get("policy")!;

  if (algorithm !== SIGV4_ALGORITHM) {
    throw invalidArgument(`X-Amz-Algorithm only supports "${SIGV4_ALGORITHM}"`, "X-Amz-Algorithm", algorithm);
  }

  // 2. Credential and access key.
  const cred = parseCredential(credential, opts.region);
  if (!/^\d{8}T\d{6}Z$/.test(xAmzDate)) {
    // sic: S3's message says "formated".
    throw invalidArgument("X-Amz-Date must be formated via ISO8601 Long format", "X-Amz-Date", xAmzDate);
  }
  const secret = await opts.credentials(cred.accessKeyId);
  if (secret === undefined || secret === null) {
    throw new S3Error(
      403,
      "InvalidAccessKeyId",
      "The AWS Access Key Id you provided does not exist in our records.",
      {
        AWSAccessKeyId: cred.accessKeyId,
      },
    );
  }

  // 3. The signature, over the policy text exactly as received (never re-encoded), checked
  //    before the policy is decoded: "For signature calculation this policy is the string
  //    you sign." A truncated policy is therefore a SignatureDoesNotMatch, as on S3.
  const signingKey = await deriveSigningKey(secret, cred.date, cred.region, SERVICE);
  const expected = await hmacHex(signingKey, policyB64);
  if (!timingSafeEqualHex(expected, signature)) {
    const bytes = utf8.encode(policyB64);
    throw new S3Error(
      403,
      "SignatureDoesNotMatch",
      "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
      {
        AWSAccessKeyId: cred.accessKeyId,
        StringToSign: policyB64,
        SignatureProvided: signature,
        StringToSignBytes: Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" "),
      },
    );
  }

  // 4. The policy document.
  const policy = parsePolicy(policyB64);

  // 5. Expiration: "the POST policy is not valid after" that instant.
  if (now.getTime() > policy.expiration.getTime()) {
    throw accessDenied("Invalid according to Policy: Policy expired.");
  }

  // 6. Conditions, against the fields with ${filename} expanded: "All variables within the
  //    form are expanded prior to validating the POST policy."
  const fields = new Map<string, FormField>();
  for (const [k, f] of raw) fields.set(k, { name: f.name, value: expandFilename(f.value, opts.filename) });

  const covered = new Set<string>();
  let range: ContentLengthRange | null = null;
  for (const cond of policy.conditions) {
    if (cond.op === "content-length-range") {
      if (cond.min === null || cond.max === null) throw policyConditionFailed(cond.display);
      range = range
        ? { min: Math.max(range.min, cond.min), max: Math.min(range.max, cond.max) }
        : { min: cond.min, max: cond.max };
      continue;
    }
    if (cond.field !== null) covered.add(cond.field);
    if (!conditionHolds(cond, fields, opts.bucket)) throw policyConditionFailed(cond.display);
  }

  // 7. Coverage: a field no condition names is refused, named as sent.
  for (const [lower, f] of fields) {
    if (!isExemptField(lower) && !covered.has(lower)) {
      throw accessDenied(`Invalid according to Policy: Extra input fields: ${f.name}`);
    }
  }

  const key = fields.get("key")!.value;
  if (key === "") throw missingField("key");
  const keyBytes = utf8.encode(key).length;
  if (keyBytes > MAX_KEY_BYTES) {
    throw new S3Error(400, "KeyTooLongError", "Your key is too long", {
      Size: keyBytes,
      MaxSizeAllowed: MAX_KEY_BYTES,
    });
  }
  if (opts.fileSize !== undefined) checkContentLength(range, opts.fileSize);

  const status = fields.get("success_action_status")?.value;
  return {
    key,
    accessKeyId: cred.accessKeyId,
    region: cred.region,
    fields,
    contentLengthRange: range,
    successActionStatus: status === "200" ? 200 : status === "201" ? 201 : 204,
    successActionRedirect:
      fields.get("success_action_redirect")?.value ?? fields.get("redirect")?.value ?? null,
    contentType: fields.get("content-type")?.value ?? null,
    acl: fields.get("acl")?.value ?? null,
    expiration: policy.expiration,
  };
}
