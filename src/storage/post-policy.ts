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

import type { FormField } from "./multipart";
import {
  accessDenied,
  entityTooLarge,
  entityTooSmall,
  invalidArgument,
  invalidPolicyDocument,
  missingField,
  policyConditionFailed,
  S3Error,
} from "./s3-errors";
import {
  amzDate,
  amzShortDate,
  credentialScope,
  deriveSigningKey,
  hmacHex,
  SIGV4_ALGORITHM,
  SIGV4_TERMINATOR,
  timingSafeEqualHex,
} from "./sigv4";

const SERVICE = "s3";
/** S3's key length limit: "The name for a key is a sequence of Unicode characters whose UTF-8 encoding is at most 1024 bytes long." */
const MAX_KEY_BYTES = 1024;

const utf8 = new TextEncoder();

// ------------------------------------------------------------------------------------------
// base64 (of UTF-8)
// ------------------------------------------------------------------------------------------

/** Standard base64 of the UTF-8 bytes of `text` (the policy's encoding: "UTF-8 and base64"). */
export function base64EncodeUtf8(text: string): string {
  const bytes = utf8.encode(text);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

/** Decode base64 to bytes; null when it is not base64. */
function base64Decode(text: string): Uint8Array | null {
  try {
    const bin = atob(text);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

// ------------------------------------------------------------------------------------------
// Issuing a form
// ------------------------------------------------------------------------------------------

export interface CreatePostFormOptions {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  bucket: string;
  key: string;
  contentType: string;
  acl?: string;
  /** Largest accepted file, in bytes (`["content-length-range", 0, maxBytes]`). */
  maxBytes: number;
  expiresInSeconds?: number;
  now?: Date;
}

export interface PostForm {
  /**
   * Exactly: acl, Content-Type, key, x-amz-algorithm, x-amz-credential, x-amz-date, policy,
   * x-amz-signature, in that order (the order interface §2.1 lists them; a client posts them
   * before `file`).
   */
  fields: Record<string, string>;
}

/**
 * Issue a signed POST form for one object key. The policy pins the bucket, the exact key,
 * the acl, the Content-Type and the three SigV4 fields, and bounds the size, so the form
 * uploads exactly one object of the announced type.
 */
export async function createPostForm(opts: CreatePostFormOptions): Promise<PostForm> {
  const acl = opts.acl ?? "public-read";
  const expiresInSeconds = opts.expiresInSeconds ?? 3600;
  const now = opts.now ?? new Date();
  if (!Number.isSafeInteger(opts.maxBytes) || opts.maxBytes < 0) {
    throw new RangeError("createPostForm: maxBytes must be a non-negative integer");
  }
  if (!(expiresInSeconds > 0)) throw new RangeError("createPostForm: expiresInSeconds must be positive");

  const xAmzDate = amzDate(now);
  const date = amzShortDate(now);
  const credential = `${opts.accessKeyId}/${credentialScope(date, opts.region, SERVICE)}`;
  const policyDocument = {
    // ISO 8601 in UTC with milliseconds, the form of the S3 docs' examples.
    expiration: new Date(now.getTime() + expiresInSeconds * 1000).toISOString(),
    conditions: [
      { bucket: opts.bucket },
      { key: opts.key },
      { acl },
      { "Content-Type": opts.contentType },
      { "x-amz-algorithm": SIGV4_ALGORITHM },
      { "x-amz-credential": credential },
      { "x-amz-date": xAmzDate },
      ["content-length-range", 0, opts.maxBytes],
    ],
  };
  const policy = base64EncodeUtf8(JSON.stringify(policyDocument));
  const signingKey = await deriveSigningKey(opts.secretAccessKey, date, opts.region, SERVICE);
  const signature = await hmacHex(signingKey, policy);
  return {
    fields: {
      acl,
      "Content-Type": opts.contentType,
      key: opts.key,
      "x-amz-algorithm": SIGV4_ALGORITHM,
      "x-amz-credential": credential,
      "x-amz-date": xAmzDate,
      policy,
      "x-amz-signature": signature,
    },
  };
}

// ------------------------------------------------------------------------------------------
// Verifying a received form
// ------------------------------------------------------------------------------------------

/** The secret for an access key id, or undefined/null when the key is unknown. */
export type CredentialLookup = (
  accessKeyId: string,
) => string | undefined | null | Promise<string | undefined | null>;

/** Form fields: the multipart parser's Map, a plain object, or [name, value] pairs. */
export type FormFieldsInput =
  | Map<string, FormField>
  | Record<string, string>
  | Iterable<readonly [string, string]>;

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

export interface ContentLengthRange {
  min: number;
  max: number;
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

/** Normalize the fields to a Map by lowercased name; repeated names are joined with ",". */
export function normalizeFields(input: FormFieldsInput): Map<string, FormField> {
  const out = new Map<string, FormField>();
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    const prev = out.get(key);
    if (prev) prev.value = `${prev.value},${value}`;
    else out.set(key, { name, value });
  };
  if (input instanceof Map) {
    for (const f of input.values()) add(f.name, f.value);
  } else if (typeof (input as Iterable<unknown>)[Symbol.iterator] === "function") {
    for (const [name, value] of input as Iterable<readonly [string, string]>) add(name, value);
  } else {
    for (const [name, value] of Object.entries(input as Record<string, string>)) add(name, value);
  }
  return out;
}

/**
 * The file name `${filename}` stands for: "If the browser or client provides a full or
 * partial path to the file, only the text following the last slash (/) or backslash (\) is
 * used" (S3 "Creating an HTML Form", key field).
 */
export function filenameBase(filename: string): string {
  const i = Math.max(filename.lastIndexOf("/"), filename.lastIndexOf("\\"));
  return filename.slice(i + 1);
}

// biome-ignore lint/suspicious/noTemplateCurlyInString: S3's literal `${filename}` form variable.
export const FILENAME_VARIABLE = "${filename}";

/** Replace every `${filename}` in a field value ("recognized by all form fields"). */
export function expandFilename(value: string, filename: string | null | undefined): string {
  if (filename === null || filename === undefined) return value;
  return value.split(FILENAME_VARIABLE).join(filenameBase(filename));
}

/** Throw S3's EntityTooLarge / EntityTooSmall when `size` is outside `range` (inclusive). */
export function checkContentLength(range: ContentLengthRange | null, size: number): void {
  if (!range) return;
  if (size > range.max) throw entityTooLarge(size, range.max);
  if (size < range.min) throw entityTooSmall(size, range.min);
}

/** A parsed condition. `display` is how S3 prints it in "Policy Condition failed: ...". */
type Condition =
  | {
      op: "eq" | "starts-with";
      /** Lowercased field name without `$`, or null when the operand lacks `$` (never matches). */
      field: string | null;
      value: string;
      display: string;
    }
  | { op: "content-length-range"; min: number | null; max: number | null; display: string };

/** S3 prints a condition as a JSON array with ", " separators, in the policy's spelling. */
function displayCondition(items: unknown[]): string {
  return `[${items.map((x) => JSON.stringify(x)).join(", ")}]`;
}

/** A content-length-range bound: an integer, or a string of digits (S3 accepts "5"). */
function rangeBound(v: unknown): number | null {
  if (typeof v === "number") return v;
  if (typeof v === "string" && /^\d{1,15}$/.test(v)) return Number(v);
  return null;
}

function parseCondition(c: unknown): Condition {
  if (Array.isArray(c)) {
    if (c.length === 0 || typeof c[0] !== "string") {
      throw invalidPolicyDocument("Invalid Condition: missing operation identifier.");
    }
    const opName = c[0];
    const op = opName.toLowerCase();
    if (op !== "eq" && op !== "starts-with" && op !== "content-length-range") {
      throw invalidPolicyDocument(`Invalid Condition: unknown operation '${opName}'.`);
    }
    if (c.length !== 3) throw invalidPolicyDocument(`Invalid ${opName}: wrong number of arguments.`);
    const display = displayCondition(c);
    if (op === "content-length-range") {
      const min = rangeBound(c[1]);
      const max = rangeBound(c[2]);
      // Not documented; RGW's S3 tests expect a negative bound to be a 400.
      if ((min !== null && min < 0) || (max !== null && max < 0)) {
        throw invalidPolicyDocument("Invalid content-length-range: bounds must not be negative.");
      }
      return { op, min, max, display };
    }
    // Non-string operands: S3 answers "Invalid JSON." for them.
    if (typeof c[1] !== "string" || typeof c[2] !== "string") throw invalidPolicyDocument("Invalid JSON.");
    const ref = c[1];
    return {
      op,
      field: ref.startsWith("$") ? ref.slice(1).toLowerCase() : null,
      value: c[2],
      display,
    };
  }
  if (c !== null && typeof c === "object") {
    const entries = Object.entries(c);
    if (entries.length !== 1) {
      throw invalidPolicyDocument(
        "Invalid Simple-Condition: Simple-Conditions must have exactly one property specified.",
      );
    }
    const [name, value] = entries[0];
    if (value === null) throw invalidPolicyDocument("Invalid JSON.");
    if (typeof value !== "string")
      throw invalidPolicyDocument("Invalid Simple-Condition: value must be a string.");
    // S3 reports a simple condition as the equivalent `eq` array (["eq", "$key", "..."]).
    return {
      op: "eq",
      field: name.toLowerCase(),
      value,
      display: displayCondition(["eq", `$${name}`, value]),
    };
  }
  throw invalidPolicyDocument("Invalid condition test: must be a List or Object.");
}

// "ISO8601 GMT date format": S3 accepts `...Z` with or without fractional seconds, and
// refuses an offset or a space for the `T` ("Invalid 'expiration' value").
const EXPIRATION_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$/;

function parseExpiration(v: unknown): Date | null {
  if (typeof v !== "string") return null;
  const m = EXPIRATION_RE.exec(v);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number);
  const ms = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0;
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const date = new Date(t);
  // Reject calendar overflow such as 2015-02-30.
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return null;
  if (h > 23 || mi > 59 || s > 59) return null;
  return date;
}

interface ParsedPolicy {
  expiration: Date;
  conditions: Condition[];
}

/**
 * Decode and check the shape of the policy (only ever called after the signature matched).
 * Errors are S3's 400 InvalidPolicyDocument "Invalid Policy: ...".
 */
function parsePolicy(policyB64: string): ParsedPolicy {
  const bytes = base64Decode(policyB64);
  if (!bytes) throw invalidPolicyDocument("invalid Base64 encoding.");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw invalidPolicyDocument("Invalid JSON.");
  }
  // Numbers may only be content-length-range bounds, which S3 reads as integers: a
  // fractional or exponent literal (512.0, 1e6) is "Invalid JSON." on S3. JSON.parse's
  // reviver exposes the literal's source text where the runtime supports it.
  let badNumber = false;
  let doc: unknown;
  try {
    doc = JSON.parse(text, function (
      this: unknown,
      _key: string,
      value: unknown,
      context?: { source?: string },
    ) {
      if (typeof value === "number") {
        if (!Number.isSafeInteger(value)) badNumber = true;
        else if (typeof context?.source === "string" && /[.eE]/.test(context.source)) badNumber = true;
      }
      return value;
    } as (this: unknown, key: string, value: unknown) => unknown);
  } catch {
    throw invalidPolicyDocument("Invalid JSON.");
  }
  if (badNumber || doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    throw invalidPolicyDocument("Invalid JSON.");
  }
  // Top-level names are case-sensitive (RGW's S3 tests: "CONDITIONS", "EXPIRATION" are 400s);
  // S3 names an unexpected member lowercased, in single quotes.
  for (const name of Object.keys(doc)) {
    if (name !== "expiration" && name !== "conditions") {
      throw invalidPolicyDocument(`Unexpected: '${name.toLowerCase()}'`);
    }
  }
  const record = doc as Record<string, unknown>;
  if (!("expiration" in record)) throw invalidPolicyDocument("Policy missing expiration.");
  if (!("conditions" in record)) throw invalidPolicyDocument("Policy missing conditions.");
  const expiration = parseExpiration(record.expiration);
  if (!expiration) {
    const shown =
      typeof record.expiration === "string" ? record.expiration : JSON.stringify(record.expiration);
    throw invalidPolicyDocument(`Invalid 'expiration' value: '${shown}'`);
  }
  if (!Array.isArray(record.conditions)) {
    throw invalidPolicyDocument("Invalid 'conditions' value: must be a List.");
  }
  return { expiration, conditions: record.conditions.map(parseCondition) };
}

// Fields S3 does not require a condition for ("Each form field that you specify in a form
// (except x-amz-signature, file, policy, and field names that have an x-ignore- prefix) must
// appear in the list of conditions.").
function isExemptField(lowerName: string): boolean {
  return (
    lowerName === "policy" ||
    lowerName === "x-amz-signature" ||
    lowerName === "file" ||
    lowerName.startsWith("x-ignore-")
  );
}

const CREDENTIAL_FORMAT =
  'the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".';

interface ParsedCredential {
  accessKeyId: string;
  date: string;
  region: string;
}

function parseCredential(credential: string, expectedRegion: string | undefined): ParsedCredential {
  const bad = (message: string, extra: Record<string, string> = {}) => {
    const err = invalidArgument(message, "X-Amz-Credential", credential);
    Object.assign(err.details, extra);
    return err;
  };
  const parts = credential.split("/");
  if (parts.length !== 5) throw bad(CREDENTIAL_FORMAT);
  const [accessKeyId, date, region, service, terminal] = parts;
  if (accessKeyId === "") throw bad("a non-empty Access Key (AKID) must be provided in the credential.");
  if (!/^\d{8}$/.test(date)) {
    throw bad(
      `incorrect date format "${date}". This date in the credential must be in the format "yyyyMMdd".`,
    );
  }
  if (region === "") throw bad(CREDENTIAL_FORMAT);
  if (expectedRegion !== undefined && region !== expectedRegion) {
    throw bad(`the region '${region}' is wrong; expecting '${expectedRegion}'`, { Region: expectedRegion });
  }
  if (service !== SERVICE)
    throw bad(`incorrect service "${service}". This endpoint belongs to "${SERVICE}".`);
  if (terminal !== SIGV4_TERMINATOR) {
    throw bad(`incorrect terminal "${terminal}". This endpoint uses "${SIGV4_TERMINATOR}".`);
  }
  return { accessKeyId, date, region };
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

function valueMatches(op: "eq" | "starts-with", field: string, actual: string, expected: string): boolean {
  if (op === "eq") return actual === expected;
  // "Content-Types values for a starts-with condition that include commas are interpreted as
  // lists. Each value in the list must meet the condition for the whole condition to pass."
  if (field === "content-type" && actual.includes(",")) {
    return actual.split(",").every((v) => v.trim().startsWith(expected));
  }
  return actual.startsWith(expected);
}

function conditionHolds(
  cond: Extract<Condition, { op: "eq" | "starts-with" }>,
  fields: Map<string, FormField>,
  bucket: string,
): boolean {
  if (cond.field === null) return false; // an operand without `$` names no field
  if (cond.field === "bucket") {
    // The bucket is the one posted to, not a form field (S3 tests: a form signed for one
    // bucket and posted to another is refused). A `bucket` field, which aws-sdk-js-v3 sends,
    // must agree too.
    const sent = fields.get("bucket");
    return (
      valueMatches(cond.op, "bucket", bucket, cond.value) &&
      (sent === undefined || valueMatches(cond.op, "bucket", sent.value, cond.value))
    );
  }
  const f = fields.get(cond.field);
  // A condition on an absent field fails, even `starts-with ""` (S3's recorded answer).
  if (f === undefined) return false;
  return valueMatches(cond.op, cond.field, f.value, cond.value);
}
