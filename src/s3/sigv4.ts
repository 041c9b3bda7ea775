/**
 * AWS Signature Version 4 primitives for the storage POST policy (WebCrypto only, so the
 * same code runs in workerd and in any browser-like runtime).
 *
 * The signing-key derivation is the one of "Signature Calculations for the Authorization
 * Header" / "Authenticating Requests: Browser-Based Uploads Using POST (AWS Signature
 * Version 4)" in the S3 API reference:
 *
 *   DateKey              = HMAC-SHA256("AWS4" + <SecretAccessKey>, "<YYYYMMDD>")
 *   DateRegionKey        = HMAC-SHA256(DateKey, "<aws-region>")
 *   DateRegionServiceKey = HMAC-SHA256(DateRegionKey, "<aws-service>")
 *   SigningKey           = HMAC-SHA256(DateRegionServiceKey, "aws4_request")
 *
 * For a POST policy the string to sign is the base64 `policy` form field itself, and the
 * signature is the lowercase hex HMAC-SHA256 of it under SigningKey.
 */

export const SIGV4_ALGORITHM = "AWS4-HMAC-SHA256";
export const SIGV4_TERMINATOR = "aws4_request";

const utf8 = new TextEncoder();

export type BytesLike = ArrayBuffer | ArrayBufferView;

function toBytes(data: string | BytesLike): Uint8Array {
  if (typeof data === "string") return utf8.encode(data);
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

/** Lowercase hex of some bytes (SigV4 always uses lowercase hex). */
export function toHex(data: BytesLike): string {
  const bytes = toBytes(data);
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += bytes[i].toString(16).padStart(2, "0");
  return out;
}

/** SHA-256 of a UTF-8 string or of bytes, as lowercase hex. */
export async function sha256Hex(data: string | BytesLike): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", toBytes(data)));
}

/** HMAC-SHA256(key, data), raw bytes. A string key or message is taken as UTF-8. */
export async function hmac(key: string | BytesLike, data: string | BytesLike): Promise<ArrayBuffer> {
  const k = await crypto.subtle.importKey("raw", toBytes(key), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return crypto.subtle.sign("HMAC", k, toBytes(data));
}

/** HMAC-SHA256(key, data) as lowercase hex. */
export async function hmacHex(key: string | BytesLike, data: string | BytesLike): Promise<string> {
  return toHex(await hmac(key, data));
}

/**
 * The SigV4 signing key for one day, region and service (S3 docs, "Calculating a Signature").
 * `date` is the credential scope's YYYYMMDD, not the full x-amz-date.
 */
export async function deriveSigningKey(
  secret: string,
  date: string,
  region: string,
  service = "s3",
): Promise<ArrayBuffer> {
  const kDate = await hmac(`AWS4${secret}`, date);
  const kRegion = await hmac(kDate, region);
  const kService = await hmac(kRegion, service);
  return hmac(kService, SIGV4_TERMINATOR);
}

function pad2(n: number): string {
  return n.toString().padStart(2, "0");
}

/** `YYYYMMDDTHHMMSSZ` (ISO 8601 basic format, UTC), the form of `x-amz-date`. */
export function amzDate(d: Date): string {
  if (Number.isNaN(d.getTime())) throw new RangeError("amzDate: invalid Date");
  return (
    `${d.getUTCFullYear().toString().padStart(4, "0")}${pad2(d.getUTCMonth() + 1)}${pad2(d.getUTCDate())}` +
    `T${pad2(d.getUTCHours())}${pad2(d.getUTCMinutes())}${pad2(d.getUTCSeconds())}Z`
  );
}

/** `YYYYMMDD` (UTC), the date of the credential scope. */
export function amzShortDate(d: Date): string {
  return amzDate(d).slice(0, 8);
}

/** `<YYYYMMDD>/<region>/<service>/aws4_request`. */
export function credentialScope(date: string, region: string, service = "s3"): string {
  return `${date}/${region}/${service}/${SIGV4_TERMINATOR}`;
}

type SubtleWithTimingSafeEqual = SubtleCrypto & {
  timingSafeEqual?: (a: ArrayBufferView | ArrayBuffer, b: ArrayBufferView | ArrayBuffer) => boolean;
};

/**
 * Constant-time equality of two byte strings. Uses workerd's `crypto.subtle.timingSafeEqual`
 * when present, else an XOR-accumulate loop with no early exit. On a length mismatch the
 * first input is compared with itself so that the work done does not depend on where the
 * inputs differ; the result is still false.
 */
export function timingSafeEqualBytes(a: Uint8Array, b: Uint8Array): boolean {
  const sameLength = a.byteLength === b.byteLength;
  const other = sameLength ? b : a;
  const subtle = crypto.subtle as SubtleWithTimingSafeEqual;
  let equal: boolean;
  if (typeof subtle.timingSafeEqual === "function") {
    equal = subtle.timingSafeEqual(a, other);
  } else {
    let diff = 0;
    for (let i = 0; i < a.byteLength; i++) diff |= a[i] ^ other[i];
    equal = diff === 0;
  }
  return sameLength && equal;
}

/**
 * Constant-time comparison of two hex strings, e.g. a computed signature and the
 * `x-amz-signature` a client sent. The strings are compared byte for byte as given (no case
 * folding), so that nothing about the secret value leaks through an early exit.
 */
export function timingSafeEqualHex(a: string, b: string): boolean {
  return timingSafeEqualBytes(utf8.encode(a), utf8.encode(b));
}
