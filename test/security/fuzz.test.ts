import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { call, type Reply } from "../helpers";
import { populated } from "./populate";

/**
 * Malformed bodies against every write operation of the OpenAPI document: nothing may answer
 * 5xx. Ids in paths are real objects of the account, so each body reaches the validation and
 * the service behind it, not a 404 in front of them.
 */

const deep = (depth: number, leaf: unknown = 1): unknown => {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? { a: v } : [v];
  return v;
};
const deepText = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

/** Ill-formed strings, for properties whose schema is a string. */
const ILL_FORMED = [
  "",
  "\u0000",
  "a\r\nBcc: x@example.test",
  "\ud800",
  "x".repeat(100_000),
  "=cmd|' /C calc'!A0",
  "\u202egnp.exe",
  "2030-02-30T25:61:00Z",
];
/** Values of the wrong type, for every property. */
const WRONG_TYPES: unknown[] = [null, true, 1e308, "x", [], { a: { b: [] } }];

type Prop = { name: string; type: string | undefined };

/** The properties a write operation's JSON body names, with their type ($refs and unions resolved). */
function bodyProperties(doc: any, op: any): Prop[] {
  const seen = new Map<string, string | undefined>();
  const resolve = (schema: any): any =>
    schema?.$ref ? resolve(doc.components.schemas[schema.$ref.split("/").pop()]) : schema;
  const typeOf = (schema: any): string | undefined => {
    const s = resolve(schema);
    const t = Array.isArray(s?.type) ? s.type.find((x: string) => x !== "null") : s?.type;
    return t ?? (s?.properties ? "object" : s?.anyOf ? typeOf(s.anyOf[0]) : undefined);
  };
  const walk = (schema: any, depth = 0) => {
    const s = resolve(schema);
    if (!s || depth > 6) return;
    for (const k of ["oneOf", "anyOf", "allOf"]) for (const x of s[k] ?? []) walk(x, depth + 1);
    if (s.items) walk(s.items, depth + 1);
    for (const [p, ps] of Object.entries<any>(s.properties ?? {})) if (!seen.has(p)) seen.set(p, typeOf(ps));
  };
  walk(op.requestBody?.content?.["application/json"]?.schema);
  return [...seen].map(([name, type]) => ({ name, type }));
}

type Case = { label: string; raw?: string; body?: unknown };

function bodiesFor(props: Prop[]): Case[] {
  const out: Case[] = [
    { label: "deep array 4000", raw: deepText(4000) },
    { label: "deep object 3000", body: { a: deep(3000) } },
    { label: "empty object", body: {} },
    { label: "array of 150,000 invalid items", raw: `[${Array(150_000).fill("1").join(",")}]` },
    { label: "array of 10,000 invalid items", raw: `[${Array(10_000).fill("1").join(",")}]` },
    { label: "a string", body: "x" },
    { label: "null", raw: "null" },
  ];
  for (const { name, type } of props) {
    for (const v of WRONG_TYPES) out.push({ label: `${name}=${JSON.stringify(v)}`, body: { [name]: v } });
    if (type === "string" || type === undefined)
      for (const s of ILL_FORMED)
        out.push({ label: `${name}=${JSON.stringify(s.slice(0, 20))}`, body: { [name]: s } });
    if (type === "object" || type === "array" || type === undefined) {
      out.push({ label: `${name}=deep`, body: { [name]: deep(3500) } });
      out.push({
        label: `${name}={every key wrong}`,
        body: { [name]: Object.fromEntries(props.map((q) => [q.name, {}])) },
      });
    }
    if (type === "array" || type === undefined) {
      out.push({ label: `${name}=150k items`, raw: `{"${name}":[${Array(150_000).fill("{}").join(",")}]}` });
      out.push({
        label: `${name}=10k items`,
        raw: `{"${name}":[${Array(10_000).fill('{"x":1}').join(",")}]}`,
      });
    }
  }
  return out;
}

describe("fuzzing every write operation of the document", () => {
  it("no malformed body makes a 5xx: deep, huge, wrong types, ill-formed strings", {
    timeout: 600_000,
  }, async () => {
    const { a, ids } = await populated();
    const token = a.admin.token;
    const doc = (await call("/openapi.json")).body;
    const failures: string[] = [];
    let sent = 0;
    const check = (where: string, r: Reply) => {
      sent++;
      if (r.status >= 500) failures.push(`${where}: ${r.status} ${r.text.slice(0, 200)}`);
    };
    for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
      if (path.startsWith("/files/") || path.startsWith("/storage/") || path.startsWith("/t/")) continue;
      // Signing out or bootstrapping would end the walk's token or need a secret it has not.
      if (path === "/logout/" || path === "/bootstrap/") continue;
      const collection = path.split("/")[1];
      const url = path
        .replace("{id}", ids[collection] ?? crypto.randomUUID())
        .replace("{delivery_id}", ids.delivery);
      for (const [method, op] of Object.entries(ops)) {
        if (!["post", "put", "patch"].includes(method)) continue;
        for (const b of bodiesFor(bodyProperties(doc, op))) {
          const r = await call(url, {
            method: method.toUpperCase(),
            token,
            ...(b.raw !== undefined
              ? { raw: b.raw, headers: { "Content-Type": "application/json" } }
              : { body: b.body }),
          });
          check(`${method.toUpperCase()} ${path} ${b.label}`, r);
        }
        // And random JSON values, property-based (fast-check), a few per operation.
        await fc.assert(
          fc.asyncProperty(fc.jsonValue({ maxDepth: 6 }), async (value) => {
            const r = await call(url, { method: method.toUpperCase(), token, body: value });
            check(`${method.toUpperCase()} ${path} ${JSON.stringify(value).slice(0, 80)}`, r);
            return true;
          }),
          { numRuns: 10, seed: 2026 },
        );
      }
    }
    // Anonymous entry points too.
    for (const path of ["/authenticate/", "/accounts/", "/users/activate/", "/users/verify_email/confirm/"]) {
      check(
        `${path} deep`,
        await call(path, { raw: deepText(4000), headers: { "Content-Type": "application/json" } }),
      );
      check(`${path} deep object`, await call(path, { body: { username: deep(3500) } }));
    }
    expect(sent).toBeGreaterThan(3000);
    expect(failures).toEqual([]);
  });
});
