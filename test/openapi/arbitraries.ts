/**
 * fast-check arbitraries generated from the document's JSON Schema (2020-12) alone, as a
 * property-based tester (Schemathesis, a generated client's fuzzer) builds requests: what a
 * schema says is all these know. `valid` gives values the schema allows; `broken` gives, for a
 * schema with a constraint, a value that breaks exactly one of them (and which the service must
 * refuse with 400, issue 46).
 *
 * Keywords honoured: `type`, `enum`, `const`, `format`, `pattern` (ECMA-262, lookaheads too),
 * `minLength`/`maxLength`, `minimum`/`maximum` (and the exclusive ones), `minItems`/`maxItems`,
 * `uniqueItems`, `prefixItems`, `properties`/`required`, `$ref`, `allOf` (merged), `oneOf`/`anyOf`
 * (of values, or of an object's alternatives: `required` sets), and `if`/`then`/`else` (an
 * object's rules across fields, alone or in `allOf`). Generation is seeded by the caller.
 */
import fc from "fast-check";
import { resolve } from "./contract";

type Json = any;
type Doc = Record<string, any>;

/** Hyperlinks point at this origin (the host is not compared; the ids are random: not found). */
const ORIGIN = "https://api.test";

/**
 * A rule across an object's fields: where `if` holds, `then` applies (`yes`), elsewhere `else`
 * (`no`) (2020-12 §10.2.2). Renamed: an object with a `then` member reads as a thenable.
 */
type Condition = { if: Json; yes?: Json; no?: Json };

/** Where `flat` keeps an object's conditions (every `if`/`then`/`else` of it and its `allOf`). */
const CONDITIONS = "x-conditions";
/** Where `merge` keeps the patterns a string must also match (two rules' patterns on one value). */
const PATTERNS = "x-patterns";

/**
 * The schema with `$ref`s resolved and `allOf` merged (the document's `allOf`s extend objects, or
 * hold an object's conditions); the conditions are collected under CONDITIONS.
 */
export function flat(doc: Doc, schema: Json): Json {
  const s = resolve(doc, schema);
  if (!s || typeof s !== "object") return s;
  const own: Condition[] = s.if ? [{ if: s.if, yes: s.then, no: s.else }] : [];
  if (!Array.isArray(s.allOf) && own.length === 0) return s;
  const { allOf, if: _i, then: _t, else: _e, ...rest } = s;
  const out: Json = { ...rest, [CONDITIONS]: [...(rest[CONDITIONS] ?? []), ...own] };
  if (rest.properties) out.properties = { ...rest.properties };
  if (rest.required) out.required = [...rest.required];
  for (const p of (allOf ?? []).map((x: Json) => flat(doc, x))) {
    const { properties, required, [CONDITIONS]: conditions, ...other } = p;
    Object.assign(out, other);
    if (properties) {
      out.properties ??= {};
      // The part's members and the object's own: both hold (the own ones refine the part's).
      for (const [k, v] of Object.entries<Json>(properties))
        out.properties[k] = out.properties[k] ? merge(doc, v, out.properties[k]) : v;
    }
    for (const r of required ?? []) {
      out.required ??= [];
      if (!out.required.includes(r)) out.required.push(r);
    }
    out[CONDITIONS].push(...(conditions ?? []));
  }
  if (out[CONDITIONS].length === 0) delete out[CONDITIONS];
  return out;
}

/**
 * Two schemas that both hold for one value (a member's schema and a branch's or a rule's
 * refinement of it), as one: the refinement's keywords over the member's. A refinement that
 * names a component is that component; two patterns are both kept.
 */
function merge(doc: Doc, base: Json, refinement: Json): Json {
  if (refinement?.$ref) return refinement;
  const b = flat(doc, base) ?? {};
  // A nullable member (`anyOf: [component, null]`) narrowed to a type: that alternative.
  if (Array.isArray(b.anyOf) && typeof refinement.type === "string") {
    const alternative = b.anyOf.find((x: Json) => types(flat(doc, x)).includes(refinement.type));
    if (alternative) return merge(doc, alternative, refinement);
  }
  const out: Json = { ...b, ...refinement };
  if (b.pattern && refinement.pattern && b.pattern !== refinement.pattern)
    out[PATTERNS] = [...(b[PATTERNS] ?? []), b.pattern];
  // A nullable member narrowed by a refinement with a type: the refinement's type.
  if (refinement.type !== undefined || refinement.const !== undefined || refinement.enum) delete out.anyOf;
  return out;
}

/** An object schema narrowed by one branch: its properties refine the base's, its `required` adds. */
function withBranch(doc: Doc, base: Json, branch: Json): Json {
  const properties = { ...base.properties };
  for (const [k, v] of Object.entries<Json>(branch.properties ?? {}))
    properties[k] = properties[k] ? merge(doc, properties[k], v) : v;
  return {
    ...base,
    properties,
    required: [...new Set([...(base.required ?? []), ...(branch.required ?? [])])],
  };
}

const types = (s: Json): string[] => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);

const equal = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Whether a value satisfies an `if` schema, as the document writes them: `required`, and
 * members' `const`, `enum`, `not`, `minItems`, `type` (the keywords a rule's condition uses).
 */
function holds(s: Json, v: unknown): boolean {
  const kind = v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
  if (s.type !== undefined && !types(s).some((t) => t === kind || (t === "integer" && Number.isInteger(v))))
    return false;
  if (s.const !== undefined && !equal(s.const, v)) return false;
  if (Array.isArray(s.enum) && !s.enum.some((e: unknown) => equal(e, v))) return false;
  if (s.not && holds(s.not, v)) return false;
  if (s.minItems !== undefined && !(Array.isArray(v) && v.length >= s.minItems)) return false;
  if (s.required || s.properties) {
    if (!v || typeof v !== "object" || Array.isArray(v)) return true;
    const o = v as Record<string, unknown>;
    if ((s.required ?? []).some((k: string) => !(k in o))) return false;
    for (const [k, p] of Object.entries<Json>(s.properties ?? {}))
      if (k in o && !holds(p, o[k])) return false;
  }
  return true;
}

/** A regular expression of the document's (ECMA-262, Unicode). */
const regExp = (pattern: string) => new RegExp(pattern, "u");

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/**
 * RFC 3339 `date-time`s over the whole range the format allows (years 0000–9999, any offset
 * within ±23:59, 0–9 fractional digits), mostly near the present: what a generator that knows
 * only the format sends. A schema's `pattern` narrows it (a filter), as it does for such tools.
 */
const rfc3339 = fc
  .tuple(
    fc.oneof(
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 9999 }) },
      { weight: 4, arbitrary: fc.integer({ min: 1968, max: 2101 }) },
    ),
    fc.integer({ min: 0, max: 365 * 24 * 60 - 1 }),
    fc.integer({ min: 0, max: 59 }),
    fc.oneof(fc.constant(""), fc.stringMatching(/^\.[0-9]{1,9}$/)),
    fc.constantFrom("T", "t"),
    fc.oneof(
      fc.constantFrom("Z", "z"),
      fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }).map((offset) => {
        const a = Math.abs(offset);
        return `${offset < 0 ? "-" : "+"}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
      }),
    ),
  )
  .map(([year, minute, second, fraction, t, zone]) => {
    // A day and minute of a year without 29 February, so that every year has it.
    const d = new Date(Date.UTC(2001, 0, 1) + minute * 60_000);
    const day = `${pad(year, 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
    return `${day}${t}${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(second)}${fraction}${zone}`;
  });

/** RFC 3339 `full-date`s over years 0000–9999 (29 February only in leap years: 2001 has none). */
const fullDate = fc
  .tuple(
    fc.oneof(
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 9999 }) },
      { weight: 4, arbitrary: fc.integer({ min: 1968, max: 2101 }) },
    ),
    fc.integer({ min: 0, max: 364 }),
  )
  .map(([year, day]) => `${pad(year, 4)}${new Date(Date.UTC(2001, 0, 1 + day)).toISOString().slice(4, 10)}`);

function stringOf(s: Json): fc.Arbitrary<string> {
  const minLength = s.minLength ?? 0;
  const maxLength = Math.min(s.maxLength ?? 40, Math.max(minLength, 40));
  const patterns: RegExp[] = [...(s[PATTERNS] ?? []), ...(s.pattern ? [s.pattern] : [])].map(regExp);
  const fits = (v: string) =>
    v.length >= minLength &&
    v.length <= (s.maxLength ?? Number.POSITIVE_INFINITY) &&
    patterns.every((p) => p.test(v));
  // A format's values, as a generator that knows the format makes them; the schema's `pattern`
  // and lengths hold too (a filter: JSON Schema 2020-12 applies every keyword).
  const formatted = (arb: fc.Arbitrary<string>) => arb.filter(fits);
  switch (s.format) {
    case "date-time":
      return formatted(rfc3339);
    case "date":
      return formatted(fullDate);
    case "uuid":
      return formatted(fc.uuid({ version: 4 }));
    case "email":
      // RFC 5321 mailboxes (`0@com` among them), which `format: email` allows.
      return formatted(fc.emailAddress());
    case "uri":
    case "url":
      // A hyperlink to an object of the API, or an https URL elsewhere (webhook and image URLs):
      // both are well-formed http(s) URLs.
      return formatted(
        fc.oneof(
          fc.uuid({ version: 4 }).map((id) => `${ORIGIN}/tasks/${id}/`),
          fc.stringMatching(/^[a-z]{1,10}$/).map((h) => `https://${h}.example.com/in`),
        ),
      );
  }
  if (s.pattern) {
    let matching: fc.Arbitrary<string>;
    try {
      matching = fc.stringMatching(regExp(s.pattern));
    } catch {
      // A pattern fast-check cannot generate from (lookaheads: "no such placeholder"): the
      // strings of the length, those the patterns allow (nearly all, for such patterns).
      matching = fc.string({ minLength, maxLength, unit: "grapheme-ascii" });
    }
    return matching.filter(fits);
  }
  const plain = fc.string({ minLength, maxLength, unit: "grapheme-ascii" });
  return patterns.length ? plain.filter(fits) : plain;
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
    return fc.oneof(...branches.map((b: Json) => valid(doc, withBranch(doc, base, flat(doc, b)), depth)));
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
        const item = valid(doc, s.items ?? {}, depth + 1);
        return s.uniqueItems
          ? fc.uniqueArray(item, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
          : fc.array(item, { minLength, maxLength });
      }
      default:
        return objectOf(doc, s, depth);
    }
  });
  if (arbitraries.length === 0) return s.properties ? objectOf(doc, s, depth) : fc.constant("x");
  return arbitraries.length === 1 ? arbitraries[0] : fc.oneof(...arbitraries);
}

/** A schema no value meets (`false`, `not: {}`): its member may not be sent (2020-12 §10.2.1.4). */
export const forbidden = (s: Json) =>
  s === false || (s && typeof s.not === "object" && s.not !== null && Object.keys(s.not).length === 0);

function objectOf(doc: Doc, s: Json, depth: number): fc.Arbitrary<unknown> {
  const properties: Record<string, Json> = s.properties ?? {};
  const required: string[] = s.required ?? [];
  // Optional properties are left out past a depth, so that recursive schemas end; members no
  // value meets, always.
  const keys = Object.keys(properties).filter(
    (k) => (depth < 3 || required.includes(k)) && !forbidden(flat(doc, properties[k])),
  );
  const record = Object.fromEntries(keys.map((k) => [k, valid(doc, properties[k], depth + 1)]));
  const plain = fc.record(record, { requiredKeys: required.filter((k) => k in record) });
  const conditions: Condition[] = s[CONDITIONS] ?? [];
  if (conditions.length === 0) return plain;
  // Each rule in turn: the branch that applies to the value so far regenerates the members it
  // names (those present, and those it requires), under both the member's schema and its own.
  return conditions.reduce<fc.Arbitrary<unknown>>(
    (arb, c) =>
      arb.chain((v) => {
        const o = v as Record<string, unknown>;
        const branch = holds(c.if, o) ? c.yes : c.no;
        if (!branch) return fc.constant(o);
        const b = flat(doc, branch);
        const named = Object.keys(b.properties ?? {}).filter((k) => k in o);
        const keys = [...new Set([...named, ...(b.required ?? [])])];
        const overlay = Object.fromEntries(
          keys.map((k) => {
            const own = b.properties?.[k];
            const member = properties[k]
              ? own
                ? merge(doc, properties[k], own)
                : properties[k]
              : (own ?? {});
            return [k, valid(doc, member, depth + 1)];
          }),
        );
        return fc.record(overlay).map((x) => ({ ...o, ...x }));
      }),
    plain,
  );
}

/** One documented constraint broken, and where (a path into the value, for the report). */
export type Broken = { value: unknown; what: string };

/** A string that does not match `pattern`, if one of a few plain ones does not. */
function notMatching(pattern: string): string | undefined {
  const re = regExp(pattern);
  return ["", "~", "{{zz_not_a_field}}", "zz-not-matching"].find((c) => !re.test(c));
}

/** A value the member's schema `s` refuses, by the first keyword that can say so; with what. */
function violation(doc: Doc, member: Json, s: Json): [unknown, string] | null {
  const m = member ? flat(doc, member) : {};
  if (s.const !== undefined)
    return [typeof s.const === "boolean" ? !s.const : "zz-not-a-choice", `not ${JSON.stringify(s.const)}`];
  if (Array.isArray(s.enum)) {
    const other = (m?.enum ?? ["zz-not-a-choice", null]).find((e: unknown) => !s.enum.includes(e));
    return other === undefined ? null : [other, "not in its enum"];
  }
  if (s.minItems) return [[], `fewer than ${s.minItems} items`];
  if (s.maxLength !== undefined) return ["x".repeat(s.maxLength + 1), `longer than ${s.maxLength}`];
  if (s.pattern) {
    const bad = notMatching(s.pattern);
    return bad === undefined ? null : [bad, `not matching ${s.pattern.slice(0, 40)}`];
  }
  if (s.type === "string") return [null, "null where a string is due"];
  return null;
}

/** Values for which `c.if` holds (`want`) or not: the condition's members set to do so. */
function making(doc: Doc, s: Json, c: Condition, value: Record<string, unknown>, want: boolean) {
  if (holds(c.if, value) === want) return value;
  const out = { ...value };
  for (const [k, cond] of Object.entries<Json>(c.if.properties ?? {})) {
    const choices: unknown[] = cond.const !== undefined ? [cond.const] : (cond.enum ?? []);
    const all: unknown[] = flat(doc, s.properties?.[k] ?? {})?.enum ?? choices;
    // A condition on the member's type (`recurrence` given as an object): one value of it.
    const typed = () =>
      fc.sample(valid(doc, merge(doc, s.properties?.[k] ?? {}, cond), 1), { numRuns: 1, seed: 0 })[0];
    const pick = want
      ? choices.length
        ? choices[0]
        : typed()
      : all.find((x) => !choices.some((y) => equal(x, y)));
    if (pick === undefined) return null;
    out[k] = pick;
  }
  return holds(c.if, out) === want ? out : null;
}

/**
 * For an object schema and a valid value of it: values that break one constraint of one
 * top-level property each (a required one left out, an enum, a format, a range, a pattern, a
 * length, a type, items not unique), all of an object's alternatives (`anyOf` of `required`
 * sets), and each rule across fields (`if`/`then`/`else`: the condition made to hold, or not,
 * and the branch's first constraint broken). Nested objects are not descended into: one level
 * is what a fuzzer's "negative" phase mostly exercises, and enough to find a rule the document
 * does not state.
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
    const set = (v: unknown, what: string) =>
      out.push({ value: { ...value, [key]: v }, what: `${key}: ${what}` });
    if (forbidden(p)) {
      set("x", "a member that may not be sent");
      continue;
    }
    if (!p || p.readOnly) continue;
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
      if (p.pattern && !p.enum) {
        const bad = notMatching(p.pattern);
        if (bad !== undefined) set(bad, `${JSON.stringify(bad)} not matching its pattern`);
      }
      set(12345, "a number where a string is due");
    }
    if (kinds.includes("integer") || kinds.includes("number")) {
      if (p.minimum !== undefined) set(p.minimum - 1, `below ${p.minimum}`);
      if (p.maximum !== undefined) set(p.maximum + 1, `above ${p.maximum}`);
      if (!kinds.includes("string")) set("not a number", "a string where a number is due");
    }
    if (kinds.length === 1 && kinds[0] === "array") {
      if (p.minItems) set([], `fewer than ${p.minItems} items`);
      if (p.uniqueItems) {
        const items = Array.isArray(value[key]) ? (value[key] as unknown[]) : [];
        if (items.length) set([items[0], items[0]], "an item twice (uniqueItems)");
      }
      set("not an array", "a string where an array is due");
    }
    if (kinds.length === 1 && kinds[0] === "boolean") set("maybe", "not a boolean");
    if (!kinds.includes("null") && kinds.length > 0 && !p.oneOf && !p.anyOf)
      set(null, "null where it is not nullable");
  }
  // An object's alternatives (`anyOf` of `required` sets): none of them given.
  const alternatives: Json[] | undefined = s.anyOf;
  if (Array.isArray(alternatives) && alternatives.every((b) => Array.isArray(flat(doc, b).required))) {
    const keys = new Set(alternatives.flatMap((b) => flat(doc, b).required as string[]));
    out.push({
      value: Object.fromEntries(Object.entries(value).filter(([k]) => !keys.has(k))),
      what: `none of ${[...keys].join(", ")} (anyOf)`,
    });
  }
  // Each rule across fields: its branch applying, and broken.
  for (const c of (s[CONDITIONS] ?? []) as Condition[]) {
    for (const [branch, want] of [
      [c.yes, true],
      [c.no, false],
    ] as const) {
      if (!branch) continue;
      const base = making(doc, s, c, value, want);
      if (!base) continue;
      const b = flat(doc, branch);
      const when = `${want ? "if" : "unless"} ${JSON.stringify(c.if.properties ?? {})}`;
      const missing = (b.required ?? []).find((k: string) => !(s.required ?? []).includes(k));
      if (missing) {
        const { [missing]: _, ...rest } = base;
        out.push({ value: rest, what: `${when}: ${missing} (required) left out` });
        continue;
      }
      for (const [k, rule] of Object.entries<Json>(b.properties ?? {})) {
        const v = violation(doc, s.properties?.[k], rule);
        if (!v) continue;
        out.push({ value: { ...base, [k]: v[0] }, what: `${when}: ${k} ${v[1]}` });
        break;
      }
    }
  }
  return out;
}
