/** The conditions of a POST policy: parsed as S3 reads them, and checked against the form. */
import type { FormField } from "../multipart";
import { invalidPolicyDocument } from "../s3-errors";

/** A parsed condition. `display` is how S3 prints it in "Policy Condition failed: ...". */
export type Condition =
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

export function parseCondition(c: unknown): Condition {
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

// Fields S3 does not require a condition for ("Each form field that you specify in a form
// (except x-amz-signature, file, policy, and field names that have an x-ignore- prefix) must
// appear in the list of conditions.").
export function isExemptField(lowerName: string): boolean {
  return (
    lowerName === "policy" ||
    lowerName === "x-amz-signature" ||
    lowerName === "file" ||
    lowerName.startsWith("x-ignore-")
  );
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

export function conditionHolds(
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
