import type { MiddlewareHandler } from "hono";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../lib/json-depth";
import type { AppEnv } from "./context";
import { ApiError, type FieldErrors, ValidationError } from "./errors";

/**
 * JSON bodies are read once, here, and checked before any handler sees them (so nothing is
 * written for a bad one):
 * - strict UTF-8 (RFC 8259 §8.1): invalid bytes are a 400 `parse_error`, never U+FFFD;
 * - every string (keys too) must be well-formed Unicode: a lone surrogate (`"\ud800"`) cannot be
 *   stored or sent on as UTF-8, so it is a field error rather than a 500 after a write;
 * - NUL is refused in every string, as DRF's CharField does ("Null characters are not allowed.");
 * - free-form JSON (`metafields`, a form response's `data`, `form_default_values`, at any depth) is capped per field at `JSON_FIELD_MAX_BYTES`
 *   serialized (default 64 KiB), well under what a D1 value may hold.
 */
const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const FREE_FORM_FIELDS = new Set(["metafields", "data", "form_default_values"]);
export const DEFAULT_JSON_FIELD_MAX_BYTES = 64 * 1024;
/**
 * Longest list a body may hold anywhere. The API's own limits are far lower (500 commands, 100
 * orders, 500 tasks an order); this bound keeps a list of 150,000 wrong items from costing a
 * validation error each (and the validator its stack) before those limits are even read.
 */
export const MAX_JSON_ARRAY_ITEMS = 10_000;

export function jsonFieldMaxBytes(env: { JSON_FIELD_MAX_BYTES?: string }): number {
  const n = Number(env.JSON_FIELD_MAX_BYTES);
  return env.JSON_FIELD_MAX_BYTES && Number.isInteger(n) && n > 0 ? n : DEFAULT_JSON_FIELD_MAX_BYTES;
}

function stringProblem(s: string): string | null {
  if (LONE_SURROGATE.test(s)) return "Ill-formed Unicode: a lone surrogate is not allowed.";
  if (s.includes("\u0000")) return "Null characters are not allowed.";
  return null;
}

function put(out: FieldErrors, path: (string | number)[], message: string) {
  let node: FieldErrors = out;
  for (let i = 0; i < path.length - 1; i++) {
    const k = String(path[i]);
    if (!node[k] || Array.isArray(node[k])) node[k] = {};
    node = node[k] as FieldErrors;
  }
  const leaf = path.length ? String(path[path.length - 1]) : "non_field_errors";
  const prev = node[leaf];
  node[leaf] = [...(Array.isArray(prev) ? (prev as string[]) : []), message];
}

/** Field errors for the body's strings and free-form fields, keyed by where they are. */
export function checkJsonValue(value: unknown, maxFieldBytes: number): FieldErrors | null {
  const out: FieldErrors = {};
  let found = false;
  const enc = new TextEncoder();
  const walk = (v: unknown, path: (string | number)[]) => {
    if (typeof v === "string") {
      const p = stringProblem(v);
      if (p) {
        put(out, path, p);
        found = true;
      }
      return;
    }
    if (Array.isArray(v)) {
      if (v.length > MAX_JSON_ARRAY_ITEMS) {
        put(
          out,
          path,
          `Ensure this list has no more than ${MAX_JSON_ARRAY_ITEMS} items (it has ${v.length}).`,
        );
        found = true;
        return;
      }
      for (const [i, x] of v.entries()) walk(x, [...path, i]);
      return;
    }
    if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        const kp = stringProblem(k);
        if (kp) {
          put(out, [...path, "non_field_errors"], `Field name: ${kp}`);
          found = true;
          continue;
        }
        if (FREE_FORM_FIELDS.has(k) && x !== null && x !== undefined) {
          const size = enc.encode(JSON.stringify(x)).byteLength;
          if (size > maxFieldBytes) {
            put(
              out,
              [...path, k],
              `Ensure this field has no more than ${maxFieldBytes} bytes when serialized (it has ${size}).`,
            );
            found = true;
            continue;
          }
        }
        walk(x, [...path, k]);
      }
    }
  };
  walk(value, []);
  if (!found) return null;
  // An array body answers an array of error maps aligned with the input (contract §3).
  return out;
}

function toArrayErrors(errors: FieldErrors, body: unknown[]): FieldErrors[] {
  return body.map((_, i) => (errors[String(i)] as FieldErrors | undefined) ?? {});
}

const parseError = (detail: string) => new ApiError(400, "parse_error", `JSON parse error - ${detail}`);

export const strictJson: MiddlewareHandler<AppEnv> = async (c, next) => {
  const type = c.req.header("Content-Type") ?? "";
  const method = c.req.method;
  if (!/json/i.test(type) || method === "GET" || method === "HEAD") return next();
  const bytes = await c.req.arrayBuffer();
  if (bytes.byteLength === 0) return next();
  let text: string;
  try {
    text = fatalUtf8.decode(bytes);
  } catch {
    throw parseError("the body is not valid UTF-8.");
  }
  if (nestsDeeperThan(text, MAX_JSON_DEPTH))
    throw parseError(`the body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw parseError(String((err as Error).message ?? err).slice(0, 200));
  }
  // A list body past the bound is refused as a whole (as a batch past its limit is), not with
  // one error map per item.
  if (Array.isArray(parsed) && parsed.length > MAX_JSON_ARRAY_ITEMS)
    throw new ValidationError({
      non_field_errors: [
        `Ensure this list has no more than ${MAX_JSON_ARRAY_ITEMS} items (it has ${parsed.length}).`,
      ],
    });
  const errors = checkJsonValue(parsed, jsonFieldMaxBytes(c.env));
  if (errors) throw new ValidationError(Array.isArray(parsed) ? toArrayErrors(errors, parsed) : errors);
  // The validator reads the body from this cache: the parse above is the only one.
  (c.req as unknown as { bodyCache: Record<string, Promise<unknown>> }).bodyCache.json =
    Promise.resolve(parsed);
  return next();
};
