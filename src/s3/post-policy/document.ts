/** The policy document: base64 of UTF-8 JSON with `expiration` and `conditions`. */
import { invalidPolicyDocument } from "../s3-errors";
import { base64Decode } from "./base64";
import { type Condition, parseCondition } from "./conditions";

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

export interface ParsedPolicy {
  expiration: Date;
  conditions: Condition[];
}

/**
 * Decode and check the shape of the policy (only ever called after the signature matched).
 * Errors are S3's 400 InvalidPolicyDocument "Invalid Policy: ...".
 */
export function parsePolicy(policyB64: string): ParsedPolicy {
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
