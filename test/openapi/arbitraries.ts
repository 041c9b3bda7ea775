/**
 * fast-check arbitraries generated from the document's JSON Schema (2020-12) alone, as a
 * property-based tester (Schemathesis, a generated client's fuzzer) builds requests: what a
 * schema says is all these know. `valid` gives values the schema allows; `broken` gives, for a
 * schema with a constraint, a value that breaks exactly one of them (and which the service must
 * refuse with 400, issue 46).
 */
import fc from "fast-check";
import { resolve } from "./contract";

type Json = any;
type Doc = Record<string, any>;

/** Hyperlinks point at this origin (the host is not compared; the ids are random: not found). */
const ORIGIN = "https://api.test";

/** The schema with `$ref`s resolved and `allOf` merged (the document's `allOf`s extend objects). */
export function flat(doc: Doc, schema: Json): Json {
  const s = resolve(doc, schema);
  if (!s || typeof s !== "object" || !Array.isArray(s.allOf)) return s;
  const parts = s.allOf.map((p: Json) => flat(doc, p));
  const { allOf: _, ...rest } = s;
  const out: Json = { ...rest, properties: { ...rest.properties }, required: [...(rest.required ?? [])] };
  for (const p of parts) {
    const { properties, required, ...other } = p;
    Object.assign(out, other);
    Object.assign(out.properties, properties);
    for (const r of required ?? []) if (!out.required.includes(r)) out.required.push(r);
  }
  return out;
}

/** An object schema narrowed by one branch: its properties replace the base's, its `required` adds. */
function withBranch(base: Json, branch: Json): Json {
  return {
    ...base,
    properties: { ...base.properties, ...branch.properties },
    required: [...new Set([...(base.required ?? []), ...(branch.required ?? [])])],
  };
}

const types = (s: Json): string[] => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);

function stringOf(s: Json): fc.Arbitrary<string> {
  const minLength = s.minLength ?? 0;
  const maxLength = Math.min(s.maxLength ?? 40, Math.max(minLength, 40));
  switch (s.format) {
    case "date-time":
      return fc
        .date({
          min: new Date("2000-01-01T00:00:00Z"),
          max: new Date("2099-12-31T23:59:59Z"),
          noInvalidDate: true,
        })
        .map((d) => d.toISOString());
    case "date":
      return fc
        .date({
          min: new Date("2000-01-01T00:00:00Z"),
          max: new Date("2099-12-31T00:00:00Z"),
          noInvalidDate: true,
        })
        .map((d) => d.toISOString().slice(0, 10));
    case "uuid":
      return fc.uuid({ version: 4 });
    case "email":
      return fc.stringMatching(/^[a-z]{1,10}@[a-z]{1,10}\.example$/);
    case "uri":
    case "url":
      // A hyperlink to an object of the API (what every `format: uri` input of this API is), or
      // an https URL elsewhere (webhook and image URLs): both are well-formed http(s) URLs.
      return fc.oneof(
        fc.uuid({ version: 4 }).map((id) => `${ORIGIN}/tasks/${id}/`),
        fc.stringMatching(/^[a-z]{1,10}$/).map((h) => `https://${h}.example.com/in`),
      );
  }
  if (s.pattern) {
    return fc
      .stringMatching(new RegExp(s.pattern, "u"))
      .filter((v) => v.length >= minLength && v.length <= (s.maxLength ?? Number.POSITIVE_INFINITY));
  }
  return fc.string({ minLength, maxLength, unit: "grapheme-ascii" });
}

function numberOf(s: Json, integer: boolean): fc.Arbitrary<number> {
  const min =
    s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (integer ? 1 : 1e-6) : -1e6);
  const max =
    s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - (integer ? 1 : 1e-6) : 1e6);
  return integer
    ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) })
    : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

/** Values the schema allows. `depth` bounds recursion (a task's `routes` of tasks...). */
export function valid(doc: Doc, schema: Json, depth = 0): fc.Arbitrary<unknown> {
  const s = flat(doc, schema);
  if (!s || typeof s !== "object" || Object.keys(s).length === 0) return fc.constant("x");
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  const branches = s.oneOf ?? s.anyOf;
  if (Array.isArray(branches) && s.properties) {
    // An object with alternatives (`anyOf` of `required` sets): each branch's members over the base.
    const { oneOf: _o, anyOf: _a, ...base } = s;
    return fc.oneof(...branches.map((b: Json) => valid(doc, withBranch(base, flat(doc, b)), depth)));
  }
  if (Array.isArray(branches)) return fc.oneof(...branches.map((b: Json) => valid(doc, b, depth + 1)));
  const kinds = types(s);
  const arbitraries = kinds.map((t): fc.Arbitrary<unknown> => {
    switch (t) {
      case "null":
        return fc.constant(null);
      case "boolean":
        return fc.boolean();
      case "integer":
        return numberOf(s, true);
      case "number":
        return numberOf(s, false);
      case "string":
        return stringOf(s);
      case "array": {
        if (Array.isArray(s.prefixItems))
          return fc.tuple(...s.prefixItems.map((p: Json) => valid(doc, p, depth + 1)));
        const minLength = s.minItems ?? 0;
        const maxLength = Math.min(s.maxItems ?? 3, Math.max(minLength, depth > 2 ? minLength : 3));
        return fc.array(valid(doc, s.items ?? {}, depth + 1), { minLength, maxLength });
      }
      default:
        return objectOf(doc, s, depth);
    }
  });
  if (arbitraries.length === 0) return s.properties ? objectOf(doc, s, depth) : fc.constant("x");
  return arbitraries.length === 1 ? arbitraries[0] : fc.oneof(...arbitraries);
}

function objectOf(doc: Doc, s: Json, depth: number): fc.Arbitrary<unknown> {
  const properties: Record<string, Json> = s.properties ?? {};
  const required: string[] = s.required ?? [];
  // Optional properties are left out past a depth, so that recursive schemas end.
  const keys = Object.keys(properties).filter((k) => depth < 3 || required.includes(k));
  const record = Object.fromEntries(keys.map((k) => [k, valid(doc, properties[k], depth + 1)]));
  return fc.record(record, { requiredKeys: required.filter((k) => k in record) });
}

/** One documented constraint broken, and where (a path into the value, for the report). */
export type Broken = { value: unknown; what: string };

/**
 * For an object schema and a valid value of it: values that break one constraint of one
 * top-level property each (a required one left out, an enum, a format, a range, a pattern, a
 * length, a type). Nested objects are not descended into: one level is what a fuzzer's
 * "negative" phase mostly exercises, and enough to find a rule the document does not state.
 */
export function broken(doc: Doc, schema: Json, value: Record<string, unknown>): Broken[] {
  const s = flat(doc, schema);
  const out: Broken[] = [];
  for (const key of s.required ?? []) {
    const { [key]: _, ...rest } = value;
    out.push({ value: rest, what: `${key} (required) left out` });
  }
  for (const [key, raw] of Object.entries<Json>(s.properties ?? {})) {
    const p = flat(doc, raw);
    if (!p || p.readOnly) continue;
    const set = (v: unknown, what: string) =>
      out.push({ value: { ...value, [key]: v }, what: `${key}: ${what}` });
    const kinds = types(p);
    if (Array.isArray(p.enum) && !p.enum.includes("zz-not-a-choice"))
      set("zz-not-a-choice", "not in its enum");
    if (kinds.length === 1 && kinds[0] === "string") {
      if (p.format === "date-time" || p.format === "date") set("31/31/2020", `not a ${p.format}`);
      if (p.format === "uuid") set("not-a-uuid", "not a uuid");
      if (p.format === "uri") set("not a url", "not a uri");
      if (p.format === "email") set("no-at-sign", "not an e-mail");
      if (p.maxLength !== undefined) set("x".repeat(p.maxLength + 1), `longer than ${p.maxLength}`);
      if (p.minLength !== undefined && p.minLength > 0) set("", `shorter than ${p.minLength}`);
      set(12345, "a number where a string is due");
    }
    if (kinds.includes("integer") || kinds.includes("number")) {
      if (p.minimum !== undefined) set(p.minimum - 1, `below ${p.minimum}`);
      if (p.maximum !== undefined) set(p.maximum + 1, `above ${p.maximum}`);
      if (!kinds.includes("string")) set("not a number", "a string where a number is due");
    }
    if (kinds.length === 1 && kinds[0] === "array") {
      if (p.minItems) set([], `fewer than ${p.minItems} items`);
      set("not an array", "a string where an array is due");
    }
    if (kinds.length === 1 && kinds[0] === "boolean") set("maybe", "not a boolean");
    if (!kinds.includes("null") && kinds.length > 0 && !p.oneOf && !p.anyOf)
      set(null, "null where it is not nullable");
  }
  return out;
}
