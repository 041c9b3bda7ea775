/**
 * The document's rules are the service's (issue 46): what a property-based tester or a client
 * generated from /openapi.json alone assumes must hold. Requests are generated from the
 * document's JSON Schema (arbitraries.ts, fast-check, seeded), for every operation:
 *
 * - a body or query generated from its schema is accepted, unless it names objects that do not
 *   exist (random ids: 404, or 400 `Invalid hyperlink - Object does not exist.`), or breaks one
 *   of the few rules JSON Schema cannot state (UNSTATABLE: then with that rule's message only);
 * - what is generated is valid against the document (the generator honours its keywords);
 * - one breaking a documented constraint (`required`, `enum`, `format`, `pattern`,
 *   `minimum`/`maximum`, `maxLength`, `minItems`, `uniqueItems`, a type, an object's `anyOf`
 *   alternatives, a rule's `if`/`then`/`else`) is refused with 400;
 * - `Allow` names only methods that answer something but 404/405 on that path (RFC 9110 §10.2.1);
 * - an empty query parameter name is refused where unknown names are (contract §3).
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { firstOccurrence, parseLocal } from "../../src/domain/recurrence";
import { pathKind } from "../../src/http/openapi-document";
import { newFileUpload, postForm, uploadFile } from "../files/helpers";
import { call, newAccount, type Reply, type TestAccount } from "../helpers";
import { broken, flat, valid } from "./arbitraries";
import { checkAnswer, type Doc, type Lookup, operationsOf, prepare, validateValue } from "./contract";

let doc: Doc;
let lookup: Lookup;
let acc: TestAccount;
const SEED = 46;
const RUNS = 4;

beforeAll(async () => {
  const r = await call("/openapi.json");
  expect(r.status).toBe(200);
  ({ doc, lookup } = prepare(r.body));
  acc = await newAccount();
  // On duty, so that generated positions are stored (off duty is a state: 409 `off_duty`).
  const roles = await call("/account_roles/", { token: acc.admin.token });
  const mine = roles.body.results.find((r: { user: string }) => r.user.endsWith(`/${acc.admin.userId}/`));
  const duty = await call(`/account_roles/${mine.id}/`, {
    method: "PATCH",
    token: acc.admin.token,
    body: { on_duty: true },
  });
  expect(duty.status).toBe(200);
});

/**
 * Operations a generated request must not reach, and why: they end the caller's session, or take
 * a body that is not JSON (their own tests cover them).
 */
const SKIPPED: Record<string, string> = {
  logout: "revokes the token the rest of the test uses",
  uploadFile: "a multipart form (S3 POST Object), not JSON; test/files covers it",
  bootstrapFirstAdmin: "takes the deployment's bootstrap token in a header (test/accounts covers it)",
  streamEvents: "a WebSocket: without `Upgrade` it is 426 whatever the query (test/live covers it)",
};

type Body = Record<string, any>;

/** The task bodies of a request: a task's, a recurrence's template, an order's `tasks_data`. */
function taskBodies(b: unknown): Body[] {
  if (Array.isArray(b)) return b.flatMap(taskBodies);
  if (!b || typeof b !== "object") return [];
  const o = b as Body;
  return [o, ...taskBodies(o.template), ...(Array.isArray(o.tasks_data) ? o.tasks_data : [])];
}

const time = (v: unknown) => (typeof v === "string" ? Date.parse(v) : Number.NaN);

/** A task's window out of order: `complete_before` earlier than `complete_after`. */
const windowReversed = (b: unknown) =>
  taskBodies(b).some((t) => time(t.complete_before) < time(t.complete_after));

/**
 * A `scheduled` task whose `scheduled_time` is not in the future when it is made: as sent, or
 * moved to a recurrence's first occurrence (its body, or its order's, carries `recurrence`).
 */
const scheduledPast = (b: unknown) =>
  [b, ...(Array.isArray(b) ? b : [])].some((o) =>
    taskBodies(o).some(
      (t) =>
        t.state === "scheduled" &&
        ((o as Body)?.recurrence != null || !(time(t.scheduled_time) > Date.now())),
    ),
  );

/** A recurrence whose `end` is before its `start`, or before the rule's first occurrence. */
function endTooEarly(r: Body | null | undefined): boolean {
  if (!r || r.end == null || typeof r.rule !== "string" || typeof r.start !== "string") return false;
  const [start, end] = [parseLocal(r.start), parseLocal(r.end)];
  if (start === null || end === null) return false;
  const schedule = { rule: r.rule, start: r.start, end: null, timezone: r.timezone || "UTC" };
  return (
    end < start ||
    (firstOccurrence({ ...schedule, end: r.end }) === null && firstOccurrence(schedule) !== null)
  );
}

/**
 * The rules JSON Schema 2020-12 cannot state (issue 46 item 2; docs/api.md, "The document's
 * rules"): a comparison of two values of one request, or of a value with the clock, or a rule
 * across two query parameters (each has a schema of its own). A request generated from the
 * document may break one; its 400 is then accepted, but only with that rule's message and only
 * when the request does break it. Everything else the service checks, the document states.
 */
type Unstatable = { message: string; breaks: (value: any) => boolean };
const WINDOW: Unstatable = {
  message: "complete_before must not be earlier than complete_after.",
  breaks: windowReversed,
};
const SCHEDULED: Unstatable = {
  message: "A scheduled task needs a scheduled_time in the future.",
  breaks: scheduledPast,
};
const recurrenceEnd = (of: (b: any) => Body | null | undefined): Unstatable[] => [
  { message: "end must not be earlier than start.", breaks: (b) => endTooEarly(of(b)) },
  {
    message: "This rule has no occurrence from start on (within 10 years).",
    breaks: (b) => endTooEarly(of(b)),
  },
];
const UNSTATABLE: Record<string, Unstatable[]> = {
  partialUpdateAccount: [
    {
      message: "The shift must end after it starts.",
      breaks: (b) =>
        typeof b.optimize_earliest_start === "string" &&
        typeof b.optimize_latest_end === "string" &&
        b.optimize_earliest_start >= b.optimize_latest_end,
    },
  ],
  createTask: [WINDOW, SCHEDULED, ...recurrenceEnd((b) => b.recurrence)],
  createOrder: [WINDOW, SCHEDULED, ...recurrenceEnd((b) => b.recurrence)],
  createRecurrence: [WINDOW, ...recurrenceEnd((b) => b)],
  updateRecurrence: [WINDOW, ...recurrenceEnd((b) => b)],
  partialUpdateRecurrence: [WINDOW, ...recurrenceEnd((b) => b)],
  listEvents: [{ message: "Give `after` or `before`, not both.", breaks: (q) => !!q.after && !!q.before }],
  // A position's device time may be at most 5 minutes ahead of the server's (contract §28).
  createPositions: [
    {
      message: "This time is more than 5 minutes ahead of the server's clock.",
      breaks: (b) => (Array.isArray(b) ? b : [b]).some((p: Body) => time(p?.time) > Date.now() + 5 * 60_000),
    },
  ],
};

/** Path parameters: random, so every object named does not exist (404 is an answer). */
function pathFor(path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    name === "id" || name.endsWith("_id") ? crypto.randomUUID() : `x${crypto.randomUUID().slice(0, 8)}`,
  );
}

/** Every leaf message of a DRF-shaped error body, with the field it is about. */
function messages(body: unknown, field = ""): { field: string; message: string }[] {
  if (typeof body === "string") return [{ field, message: body }];
  if (Array.isArray(body)) return body.flatMap((b) => messages(b, field));
  if (body && typeof body === "object")
    return Object.entries(body).flatMap(([k, v]) => messages(v, /^\d+$/.test(k) ? field : k));
  return [];
}

/**
 * The answer to a request that names objects that do not exist (random ids). Not "Invalid
 * hyperlink - No URL match.": a hyperlink's syntax is the document's `pattern` (issue 56).
 */
const NOT_EXISTING =
  /does not exist|not found|no such|invalid token|expired|invalid cursor|unable to log in with provided credentials|you have no role in this account/i;
/** Export columns of metafields the account does not define (the key names a definition). */
const NO_SUCH_METAFIELDS = /^Unknown fields: (?:(?:order\.)?metafields\.[a-z][a-z0-9_]*(?:, |\.$))+$/;

/**
 * What a request may get whose shape is right: a success, or an object it names not found, or
 * the caller's role refused, or a rule JSON Schema cannot state that it breaks.
 */
function accepted(r: Reply, operationId: string, value: unknown, stored: readonly string[] = []): boolean {
  if (r.status < 300 || r.status === 404 || r.status === 403) return true;
  if (r.status !== 400) return false;
  const unstatable = (UNSTATABLE[operationId] ?? []).filter((u) => u.breaks(value));
  // A task's `address` is required when the contact address it names, which would give it, is
  // not found (random ids): that 400 also says the contact address does not exist.
  const said = messages(r.body);
  const addressFromMissing =
    taskBodies(value).some(
      (t) => t.address == null && (t.contact_address || t.contact_address_external_id),
    ) && said.some((m) => m.field.startsWith("contact_address") && NOT_EXISTING.test(m.message));
  return said.every(
    ({ field, message }) =>
      NOT_EXISTING.test(message) ||
      NO_SUCH_METAFIELDS.test(message) ||
      unstatable.some((u) => u.message === message) ||
      stored.includes(`${field}: ${message}`) ||
      (addressFromMissing && field === "address" && message === "This field is required."),
  );
}

const sample = <T>(arb: fc.Arbitrary<T>, n = RUNS) => fc.sample(arb, { numRuns: n, seed: SEED });

function send(
  method: string,
  path: string,
  opts: { body?: unknown; query?: string; headers?: Record<string, string> } = {},
) {
  return call(`${path}${opts.query ? `?${opts.query}` : ""}`, {
    method: method.toUpperCase(),
    token: acc.admin.token,
    body: opts.body,
    headers: opts.headers,
  });
}

/**
 * The request headers an operation documents, generated from their schemas as a tester does
 * (`Accept-Timezone` from the `TimeZone` names, issue 56). Not `Accept`: OpenAPI 3.1 §4.8.12.1
 * has tools ignore a header parameter named `Accept`, `Content-Type` or `Authorization`.
 */
function headersOf(o: { op: any }): fc.Arbitrary<Record<string, string>> {
  const params = (o.op.parameters ?? [])
    .map((p: any) => flat(doc, p))
    .filter((p: any) => p.in === "header" && !/^(accept|content-type|authorization)$/i.test(p.name));
  return fc.record(Object.fromEntries(params.map((p: any) => [p.name, valid(doc, p.schema).map(String)])), {
    requiredKeys: params.filter((p: any) => p.required).map((p: any) => p.name),
  }) as fc.Arbitrary<Record<string, string>>;
}

/** The object schema of an operation's JSON body (the object branch of `T | T[]` bodies). */
function objectBody(o: { op: any }): any {
  const schema = flat(doc, o.op.requestBody.content["application/json"].schema);
  return (schema.oneOf ?? [schema]).map((s: any) => flat(doc, s)).find((s: any) => s.properties);
}

const jsonOps = () =>
  operationsOf(doc).filter(
    (o) => !SKIPPED[o.op.operationId] && o.op.requestBody?.content?.["application/json"]?.schema,
  );

/** The API's operations: a stored file's query is its signature (a capability, 403 when wrong). */
const apiOps = () => operationsOf(doc).filter((o) => pathKind(o.path) === "api");

const queryParams = (o: { op: any }) =>
  (o.op.parameters ?? []).map((p: any) => flat(doc, p)).filter((p: any) => p.in === "query");

/**
 * PUT and PATCH operations whose stored object the test does not make, and why: the caller's own
 * account and user, whose generated changes (a pinned API version, a password) would change
 * what the rest of the test runs as.
 */
const NOT_STORED: Record<string, string> = {
  partialUpdateAccount: "the caller's account: a body may pin another API version",
  partialUpdateUser:
    "the caller's own user would have to be the object (a password change revokes the token)",
};

/**
 * Answers that depend on the object as stored, which no schema of a PUT or PATCH body can state
 * (docs/api.md, "The document's rules"), as `field: message`: a PATCH is checked merged with the
 * stored fields (a definition's `applies_to`, a template's `channel`, a recurrence's `start` and
 * `kind`), and an `external_id` or `key` must not be another object's.
 */
const STORED: Record<string, string[]> = {
  partialUpdateMetafield: [
    "source: Only task metafields can be copied from a contact address.",
    "is_required_before_complete: Only task metafields can be required before completion.",
  ],
  partialUpdateNotificationTemplate: [
    "subject: This field is required for e-mail templates.",
    "body: Ensure this field has no more than 1600 characters (one SMS).",
  ],
  partialUpdateRecurrence: [
    "end: end must not be earlier than start.",
    "end: This rule has no occurrence from start on (within 10 years).",
    // `template` is checked as the stored `kind`'s body when the PATCH does not name the kind.
    "account: This field is required.",
    "category: This field is required.",
    "address: This field is required.",
  ],
};
/** Another stored object already has this value (a unique field): stored state, on any write. */
const TAKEN = /already exists/;

const storedIds = new Map<string, string | null>();

/**
 * An object of the collection `/<collection>/{id}/` names (one per collection), made by the
 * collection's POST with bodies generated from its schema, the first one answered 201/202: its
 * id, or null.
 */
async function storedObject(path: string): Promise<string | null> {
  const collection = path.replace(/\{id\}\/$/, "");
  if (storedIds.has(collection)) return storedIds.get(collection)!;
  storedIds.set(collection, null);
  const schema = doc.paths[collection]?.post?.requestBody?.content?.["application/json"]?.schema;
  if (!schema) return null;
  for (const body of fc.sample(valid(doc, schema), { numRuns: 30, seed: SEED + 1 })) {
    const r = await send("post", collection, { body });
    if (r.status === 201 || r.status === 202) {
      storedIds.set(collection, (Array.isArray(r.body) ? r.body[0] : r.body).id);
      break;
    }
  }
  return storedIds.get(collection)!;
}

describe("the document's rules are the service's (issue 46)", () => {
  it("a body generated from its schema is accepted, unless it names objects that do not exist", async () => {
    const wrong: string[] = [];
    for (const o of jsonOps()) {
      const schema = o.op.requestBody.content["application/json"].schema;
      for (const [body, headers] of sample(fc.tuple(valid(doc, schema), headersOf(o)))) {
        // The generator's own check: what it makes, the document allows.
        const invalid = validateValue(lookup, schema, body, o.op.operationId);
        if (invalid.length) wrong.push(`${o.op.operationId} generated ${invalid.join("; ")}`);
        const r = await send(o.method, pathFor(o.path), { body, headers });
        if (!accepted(r, o.op.operationId, body))
          wrong.push(
            `${o.op.operationId} ${JSON.stringify(body).slice(0, 300)} ${JSON.stringify(headers)} → ${r.status} ${r.text.slice(0, 300)}`,
          );
      }
    }
    expect(wrong).toEqual([]);
  });

  it("a body breaking one documented constraint is refused with 400", async () => {
    const wrong: string[] = [];
    for (const o of jsonOps()) {
      const object = objectBody(o);
      if (!object) continue;
      const [base] = sample(valid(doc, object), 1) as Record<string, unknown>[];
      for (const b of broken(doc, object, base)) {
        const r = await send(o.method, pathFor(o.path), { body: b.value });
        // An object named by the path that does not exist may be found missing first.
        const missing = r.status === 404 && o.path.includes("{");
        if (r.status !== 400 && !missing)
          wrong.push(`${o.op.operationId} ${b.what} → ${r.status} ${r.text.slice(0, 200)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("a query generated from the documented parameters is accepted; one breaking a constraint is 400", async () => {
    const wrong: string[] = [];
    for (const o of apiOps()) {
      if (o.method !== "get" || SKIPPED[o.op.operationId]) continue;
      const params = queryParams(o).filter((p: any) => p.schema && p.style !== "deepObject");
      if (params.length === 0) continue;
      const shape = {
        type: "object",
        properties: Object.fromEntries(params.map((p: any) => [p.name, p.schema])),
        required: params.filter((p: any) => p.required).map((p: any) => p.name),
      };
      const encode = (q: Record<string, unknown>) =>
        new URLSearchParams(
          Object.entries(q).flatMap(([k, v]) =>
            Array.isArray(v) ? v.map((x) => [k, String(x)]) : v === null ? [] : [[k, String(v)]],
          ),
        ).toString();
      const path = pathFor(o.path);
      for (const [q, headers] of sample(fc.tuple(valid(doc, shape), headersOf(o))) as [
        Record<string, unknown>,
        Record<string, string>,
      ][]) {
        const r = await send("get", path, { query: encode(q), headers });
        if (!accepted(r, o.op.operationId, q))
          wrong.push(
            `${o.op.operationId} ?${encode(q)} ${JSON.stringify(headers)} → ${r.status} ${r.text.slice(0, 200)}`,
          );
      }
      const [base] = sample(valid(doc, shape), 1) as Record<string, unknown>[];
      for (const b of broken(doc, shape, base)) {
        // A query has no types but text, and a parameter left out is none.
        if (/a (number|string) where|null where|required/.test(b.what)) continue;
        const r = await send("get", path, { query: encode(b.value as Record<string, unknown>) });
        if (r.status !== 400)
          wrong.push(`${o.op.operationId} ${b.what} → ${r.status} ${r.text.slice(0, 200)}`);
      }
      // A parameter sent empty (`?created_at__gte=`) whose schema refuses "" is malformed, as any
      // value it refuses: 400, not ignored (issue 56).
      for (const p of params) {
        if (validateValue(lookup, p.schema, "", p.name).length === 0) continue;
        const r = await send("get", path, { query: `${encodeURIComponent(p.name)}=` });
        if (r.status !== 400) wrong.push(`${o.op.operationId} ?${p.name}= (empty) → ${r.status}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("an empty or unknown query parameter name is 400 wherever the operation lists its parameters", async () => {
    const wrong: string[] = [];
    for (const o of apiOps()) {
      if (o.method !== "get" || queryParams(o).length === 0 || SKIPPED[o.op.operationId]) continue;
      const path = pathFor(o.path);
      for (const query of ["=x", "=", "zz_unknown=1"]) {
        const r = await send("get", path, { query });
        if (r.status !== 400) wrong.push(`${o.op.operationId} ?${query} → ${r.status}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("every operation documents the 400 of a request header it cannot take, as the service answers it", async () => {
    const wrong: string[] = [];
    for (const o of operationsOf(doc)) {
      if (o.method !== "get" || SKIPPED[o.op.operationId]) continue;
      for (const headers of <Record<string, string>[]>[
        { Accept: "application/json; version=9.9.9" },
        ...((o.op.parameters ?? []).some((p: any) => p.$ref?.endsWith("/Accept-Timezone"))
          ? [{ "Accept-Timezone": "Mars/Olympus_Mons" }]
          : []),
        // Ignored, never refused (issue 45 item 8, issue 46 item 1).
        { "X-D1-Bookmark": "0A919", "X-Request-Id": "no" },
      ]) {
        const path = pathFor(o.path);
        const r = await call(path, { headers });
        const expected = "X-D1-Bookmark" in headers ? r.status !== 400 : r.status === 400;
        const { problems } = checkAnswer(doc, lookup, "get", path, r);
        if (!expected || problems.length)
          wrong.push(`${o.op.operationId} ${JSON.stringify(headers)} → ${r.status} ${problems.join("; ")}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("Allow names only the methods of the path's own operations (RFC 9110 §10.2.1)", async () => {
    const wrong: string[] = [];
    // The API's paths (S3's `POST /storage/` answers OPTIONS as S3 does: a CORS preflight).
    const fixed = Object.keys(doc.paths).filter((p) => !p.includes("{") && pathKind(p) === "api");
    for (const path of fixed) {
      const documented = Object.keys(doc.paths[path])
        .filter((m) => ["get", "put", "post", "delete", "patch"].includes(m))
        .map((m) => m.toUpperCase());
      const r = await call(path, { method: "OPTIONS", token: acc.admin.token });
      if (r.status !== 405) {
        wrong.push(`OPTIONS ${path} → ${r.status}`);
        continue;
      }
      const allow = (r.headers.get("Allow") ?? "").split(/,\s*/).filter(Boolean);
      const expected = [...documented, ...(documented.includes("GET") ? ["HEAD"] : [])].sort();
      if (allow.join() !== expected.join())
        wrong.push(`${path}: Allow ${allow.join()}, documented ${expected}`);
      for (const method of allow) {
        if (method === "HEAD" || (method === "POST" && path === "/logout/")) continue;
        const answer = await call(path, {
          method,
          token: acc.admin.token,
          body: method === "GET" ? undefined : {},
        });
        if (answer.status === 404 || answer.status === 405)
          wrong.push(`${method} ${path} → ${answer.status}`);
      }
      // A method the path does not have (its `/{id}/` sibling may): 405 with the same Allow.
      for (const method of ["GET", "PATCH", "DELETE", "PUT"].filter((m) => !allow.includes(m))) {
        const answer = await call(path, {
          method,
          token: acc.admin.token,
          body: method === "GET" ? undefined : {},
        });
        if (answer.status !== 405 || answer.headers.get("Allow") !== allow.join(", "))
          wrong.push(`${method} ${path} → ${answer.status} Allow ${answer.headers.get("Allow")}`);
      }
    }
    expect(wrong).toEqual([]);
  });
  it("PUT and PATCH on a stored object: a generated body is accepted, one breaking a constraint is 400 (issue 56)", async () => {
    // A PUT or PATCH to an object that does not exist is 404 before its body is read, so the
    // tests above cannot see these bodies' rules: here each runs on an object made first.
    const wrong: string[] = [];
    const covered: string[] = [];
    for (const o of jsonOps()) {
      if (!["put", "patch"].includes(o.method) || !/^\/[a-z_]+\/\{id\}\/$/.test(o.path)) continue;
      if (NOT_STORED[o.op.operationId]) continue;
      const id = await storedObject(o.path);
      if (!id) continue;
      covered.push(o.op.operationId);
      const path = o.path.replace("{id}", id);
      const schema = o.op.requestBody.content["application/json"].schema;
      for (const body of sample(valid(doc, schema))) {
        const invalid = validateValue(lookup, schema, body, o.op.operationId);
        if (invalid.length) wrong.push(`${o.op.operationId} generated ${invalid.join("; ")}`);
        const r = await send(o.method, path, { body });
        const taken = messages(r.body).filter((m) => TAKEN.test(m.message));
        const stored = [...(STORED[o.op.operationId] ?? []), ...taken.map((m) => `${m.field}: ${m.message}`)];
        if (!accepted(r, o.op.operationId, body, stored))
          wrong.push(
            `${o.op.operationId} ${JSON.stringify(body).slice(0, 300)} → ${r.status} ${r.text.slice(0, 300)}`,
          );
      }
      const object = objectBody(o);
      const [base] = sample(valid(doc, object), 1) as Record<string, unknown>[];
      for (const b of broken(doc, object, base)) {
        const r = await send(o.method, path, { body: b.value });
        if (r.status !== 400)
          wrong.push(`${o.op.operationId} ${b.what} → ${r.status} ${r.text.slice(0, 200)}`);
      }
    }
    expect(wrong).toEqual([]);
    // Whatever the seed, the objects whose rules the document once lacked (issue 56 items 4, 5).
    expect(covered).toEqual(
      expect.arrayContaining([
        "updateContactAddress",
        "partialUpdateContactAddress",
        "updateNotificationTemplate",
        "partialUpdateNotificationTemplate",
      ]),
    );
  }, 300_000);
  it("the upload form (POST /storage/): a part is `required` exactly when a form without it is refused (issue 56)", async () => {
    const schema = flat(doc, doc.paths["/storage/"].post.requestBody.content["multipart/form-data"].schema);
    const required = new Set<string>(schema.required ?? []);
    const fu = await newFileUpload(acc.admin.token, "note.txt", "text/plain");
    const bytes = new TextEncoder().encode("a note");
    const post = (fields: Record<string, string>, file: Uint8Array | null) =>
      postForm(fu.s3_signature.url, fields, file, { filename: "note.txt", fileType: "text/plain" });
    const wrong: string[] = [];
    for (const part of Object.keys(schema.properties)) {
      const { [part]: _, ...fields } = fu.s3_signature.fields as Record<string, string>;
      const r = await post(fields, part === "file" ? null : bytes);
      if (r.status >= 400 !== required.has(part))
        wrong.push(
          `${part}: ${required.has(part) ? "required" : "optional"} in the document, a form without it → ${r.status}`,
        );
    }
    expect(wrong).toEqual([]);
    // And the whole form is taken.
    expect((await post(fu.s3_signature.fields, bytes)).status).toBe(204);
  });

  it("a stored file answers 405 with `Allow: GET, HEAD` to every other method (RFC 9110 §10.2.1, issue 56)", async () => {
    const fu = await uploadFile(acc.admin.token, "allow.txt", "text/plain", new TextEncoder().encode("x"));
    const path = `/files/${fu.s3_signature.fields.key}`;
    expect((await call(path)).status).toBe(200);
    const wrong: string[] = [];
    // RFC 9110's and WebDAV's (RFC 4918) methods that the runtime lets a request carry.
    for (const method of ["POST", "PUT", "PATCH", "DELETE", "TRACE", "PROPFIND", "MKCOL"]) {
      const r = await call(path, { method, raw: method === "TRACE" ? undefined : "x" });
      if (r.status !== 405 || r.headers.get("Allow") !== "GET, HEAD")
        wrong.push(`${method} → ${r.status} Allow ${r.headers.get("Allow")}`);
    }
    expect(wrong).toEqual([]);
  });
});
