/**
 * What a third-party tool fed only /openapi.json relies on, checked on the served document: every
 * path the service serves is in it and every documented path is served; examples are valid and
 * name only declared members;
 * every success answer has one; names follow one convention; headers every answer carries are
 * required; and the contract checker the walk uses does catch a wrong answer.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { pathKind } from "../../src/http/openapi-document";
import { exampleEntries, REQUEST_EXAMPLES } from "../../src/http/openapi-examples";
import {
  attachmentKey,
  exportFileKey,
  FILE_PATH_TEMPLATES,
  fileUploadKey,
  fileUrl,
  outboxAttachmentKey,
  thumbnailKey,
} from "../../src/s3/keys";
import { BASE, call } from "../helpers";
import {
  checkAnswer,
  type Doc,
  findOperation,
  type Lookup,
  operationsOf,
  prepare,
  resolve,
  validateValue,
} from "./contract";

let served: Doc;
let doc: Doc;
let lookup: Lookup;

beforeAll(async () => {
  const r = await call("/openapi.json");
  expect(r.status).toBe(200);
  served = r.body;
  ({ doc, lookup } = prepare(served));
});

/** Served routes that the document covers another way, and why. */
const SERVED_ELSEWHERE: Record<string, string> = {
  "POST /storage": "the slash-less spelling of POST /storage/ (S3 clients post to the bucket URL as given)",
  "POST /files/*": "answers 405 MethodNotAllowed, documented on each GET /files/... operation",
  "PUT /files/*": "the same 405",
  "PATCH /files/*": "the same 405",
  "DELETE /files/*": "the same 405",
};

const successes = (op: any) => Object.keys(op.responses).filter((s) => /^2/.test(s));

/**
 * Success answers shown without an example: their bodies are images, PDFs, this document, or the
 * apps' pages (HTML naming the build's hashed files, which change with every build).
 */
const NO_EXAMPLE: Record<string, string> = {
  retrieveConsolePage: "the console's page, naming its build's hashed files",
  retrieveFieldAppPage: "the field app's page, naming its build's hashed files",
  downloadDocumentThumbnail: "a PNG or JPEG image",
  downloadSignature: "the signature image (PNG)",
  downloadSignatureThumbnail: "a PNG or JPEG image",
  downloadOutboxAttachment: "the proof-of-delivery PDF",
  retrieveOpenApiDocument: "this document",
  uploadFile:
    "its default answer (204) has no body; the PostResponse XML of 201 needs a success_action_status the API's forms do not set",
};

/** A schema and every schema it is made of at the same level: `$ref`s, `allOf`/`anyOf`/`oneOf`, `if`/`then`/`else`. */
function parts(schema: any, out: any[] = []): any[] {
  const s = resolve(served, schema);
  if (!s || typeof s !== "object" || out.includes(s)) return out;
  out.push(s);
  for (const k of ["allOf", "anyOf", "oneOf"]) for (const p of s[k] ?? []) parts(p, out);
  for (const k of ["if", "then", "else"]) if (s[k]) parts(s[k], out);
  return out;
}

/**
 * The members of an example its schema does not declare (a misspelt member), at any depth: an
 * object schema with `properties` and no `additionalProperties` is read as closed, as Redocly
 * reads it, but with a rule's branches counted in (redocly.yaml).
 */
function undeclared(schema: any, value: unknown, at: string): string[] {
  const ps = parts(schema);
  if (Array.isArray(value)) {
    const items = ps.flatMap((p) => [p.items, ...(p.prefixItems ?? [])]).filter(Boolean);
    return items.length ? value.flatMap((v, i) => undeclared({ anyOf: items }, v, `${at}/${i}`)) : [];
  }
  if (!value || typeof value !== "object") return [];
  if (ps.some((p) => p.additionalProperties !== undefined && p.additionalProperties !== false)) return [];
  const named = ps.filter((p) => p.properties);
  if (!named.length) return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const subs = named.map((p) => p.properties[k]).filter(Boolean);
    return subs.length ? undeclared({ anyOf: subs }, v, `${at}/${k}`) : [`${at}/${k}`];
  });
}

describe("the OpenAPI document and the service", () => {
  it("documents every path the service serves, and serves every documented path", () => {
    const app = createApp();
    const served = [app.api, app.storage, app.docs, app.pages].flatMap((a) =>
      a.routes
        .filter((r) => r.method !== "ALL" && r.method !== "OPTIONS" && r.method !== "HEAD" && r.path !== "*")
        .map((r) => ({ method: r.method, path: r.path })),
    );
    const asRegex = (p: string) =>
      new RegExp(
        `^${p
          .replace(/[.+?^$()|[\]\\]/g, "\\$&")
          .replace(/:[^/]+/g, "[^/]+")
          .replace(/\*$/, ".*")}$`,
      );
    const sample = (template: string) => template.replace(/\{[^}]+\}/g, "x1");
    const documented = operationsOf(doc);
    // Every documented operation is answered by a route of the service.
    for (const o of documented) {
      const match = served.some(
        (r) => r.method === o.method.toUpperCase() && asRegex(r.path).test(sample(o.path)),
      );
      expect(match, `${o.method.toUpperCase()} ${o.path} is documented but not served`).toBe(true);
    }
    // Every served route is documented (a wildcard: some documented path under it).
    const undocumented = served
      .map((r) => `${r.method} ${r.path}`)
      .filter((key) => !(key in SERVED_ELSEWHERE))
      .filter((key) => {
        const [method, path] = key.split(" ");
        return !documented.some(
          (o) => o.method.toUpperCase() === method && asRegex(path).test(sample(o.path)),
        );
      });
    expect(undocumented).toEqual([]);
  });

  it("describes a download for every key shape the service hands out", () => {
    const id = "0195a3c0-0001-7000-8000-000000000001";
    const keys: [string, string][] = [
      [fileUploadKey(id, "delivery note.txt"), "downloadFileUpload"],
      [attachmentKey("document", id, "delivery_note.txt"), "downloadDocument"],
      [attachmentKey("signature", id, "signature.png"), "downloadSignature"],
      [thumbnailKey("document", id, "png"), "downloadDocumentThumbnail"],
      [thumbnailKey("signature", id, "jpg"), "downloadSignatureThumbnail"],
      [exportFileKey(id, "Zm9yLXRoZS10ZXN0", "tasks", "csv"), "downloadExport"],
      [outboxAttachmentKey(crypto.randomUUID(), "pod-x.pdf"), "downloadOutboxAttachment"],
    ];
    for (const [key, operationId] of keys) {
      const found = findOperation(doc, "get", new URL(fileUrl(BASE, key)).pathname);
      expect(found?.op.operationId, key).toBe(operationId);
    }
    const files = operationsOf(doc).filter((o) => o.path.startsWith("/files/"));
    expect(files.map((o) => o.path.slice("/files/".length)).sort()).toEqual(
      Object.values(FILE_PATH_TEMPLATES).sort(),
    );
    for (const o of files) {
      // Served with the stored type, whatever it is; ranges and conditional requests as served.
      expect(Object.keys(o.op.responses["200"].content)).toEqual(["*/*"]);
      // Export files are private: a missing, forged or expired signed link is 403.
      const signed = o.op.operationId === "downloadExport" ? ["403"] : [];
      expect(Object.keys(o.op.responses).sort()).toEqual(
        // 400: an unknown version in `Accept` or zone in `Accept-Timezone` (issue 46).
        ["200", "206", "304", "400", "404", "405", "412", "416", "500", "503", ...signed].sort(),
      );
      expect(o.op.parameters.map((p: any) => resolve(doc, p).name)).toEqual(
        expect.arrayContaining(["range", "if-none-match", "if-match", "if-range"]),
      );
      expect(o.op.responses["206"].headers["Content-Range"].required).toBe(true);
    }
  });

  it("requires X-Request-Id and X-API-Version on every answer, as every sub-app sends them", async () => {
    for (const name of ["X-Request-Id", "X-API-Version"])
      expect(doc.components.headers[name].required).toBe(true);
    for (const o of operationsOf(doc)) {
      for (const [status, response] of Object.entries<any>(o.op.responses)) {
        const headers = resolve(doc, response).headers ?? {};
        for (const name of ["X-Request-Id", "X-API-Version"]) {
          expect(resolve(doc, headers[name])?.required, `${o.op.operationId} ${status} ${name}`).toBe(true);
        }
      }
    }
    // One answer of each sub-app, an error and a 404 of a stored file among them.
    for (const path of [
      "/tasks/",
      "/health/",
      "/openapi.json",
      "/files/documents/x/y.txt",
      "/t/AAAAAAAAAAAAAAAAAAAAAA/",
    ]) {
      const r = await call(path);
      expect(r.headers.get("X-Request-Id"), path).toBeTruthy();
      expect(r.headers.get("X-API-Version"), path).toBeTruthy();
    }
  });

  it("documents what an anonymous operation answers to a bad token (401 on GET / and /health/)", async () => {
    const uuid = "0195a3c0-0001-7000-8000-000000000001";
    for (const o of operationsOf(doc)) {
      if (!(Array.isArray(o.op.security) && o.op.security.length === 0) || pathKind(o.path) !== "api")
        continue;
      const path = o.path.replace(/\{[^}]+\}/g, uuid);
      const hasJson = !!o.op.requestBody?.content?.["application/json"];
      const r = await call(path, {
        method: o.method.toUpperCase(),
        headers: { Authorization: "Bearer not-a-token" },
        ...(hasJson ? { body: {} } : o.method === "post" ? { raw: "" } : {}),
      });
      const { problems } = checkAnswer(doc, lookup, o.method, path, r);
      expect(problems, `${o.method.toUpperCase()} ${o.path}`).toEqual([]);
    }
    for (const path of ["/", "/health/"]) {
      expect((await call(path, { headers: { Authorization: "Bearer not-a-token" } })).status).toBe(401);
    }
  });

  it("gives every success answer an example, and every example is valid against its schema", () => {
    const missing: string[] = [];
    for (const o of operationsOf(served)) {
      const id = o.op.operationId;
      const withBody = successes(o.op).filter((s) => resolve(served, o.op.responses[s]).content);
      const shown = withBody.some((s) =>
        Object.values<any>(resolve(served, o.op.responses[s]).content).some((m) => m.example ?? m.examples),
      );
      if (withBody.length && !shown && !(id in NO_EXAMPLE)) missing.push(id);
      const media: [string, any, any][] = [
        ...Object.entries<any>(o.op.requestBody?.content ?? {}).map(([type, m]): [string, any, any] => [
          `${id} request ${type}`,
          m,
          doc.paths[o.path][o.method].requestBody.content[type],
        ]),
        ...Object.entries<any>(o.op.responses).flatMap(([status, response]) =>
          Object.entries<any>(resolve(served, response).content ?? {}).map(
            ([type, m]): [string, any, any] => [
              `${id} ${status} ${type}`,
              m,
              resolve(doc, doc.paths[o.path][o.method].responses[status]).content[type],
            ],
          ),
        ),
      ];
      for (const [where, m, checked] of media) {
        const values = [
          ...(m.example === undefined ? [] : [m.example]),
          ...Object.values<any>(m.examples ?? {}).map((e) => e.value),
        ];
        for (const value of values) {
          if (/json/.test(where)) {
            expect(validateValue(lookup, checked.schema, value, where)).toEqual([]);
            expect(undeclared(m.schema, value, where), "members the schema does not declare").toEqual([]);
          } else expect(typeof value, where).toBe("string");
        }
      }
    }
    expect(missing).toEqual([]);
    // The members check finds a misspelt member, and reads a rule's branches as JSON Schema does.
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    expect(undeclared(ref("TaskCreate"), { categroy: "pick_up" }, "#")).toEqual(["#/categroy"]);
    expect(
      undeclared(
        ref("NotificationTemplateCreate"),
        { event: "task_assigned", channel: "email", subject: "Hi" },
        "#",
      ),
    ).toEqual([]);
    // The examples that replace the ones a fresh account could not use (issue 26).
    const task = exampleEntries(REQUEST_EXAMPLES.createTask)[0][1] as any;
    expect(task.metafields).toEqual({ door_code: "4711" });
    expect(exampleEntries(REQUEST_EXAMPLES.createMetafield)[0][1]).toMatchObject({ key: "door_code" });
  });

  it("names request bodies <Resource>Create, <Resource>Update, <Resource>Patch, or <Resource><Action>", () => {
    const pascal = (s: string) => s.replace(/(^|_)(\w)/g, (_, __, c: string) => c.toUpperCase());
    const singular = (s: string) =>
      s === "sms"
        ? s
        : s
            .replace(/ies$/, "y")
            .replace(/sses$/, "ss")
            .replace(/([^s])s$/, "$1");
    const names = new Set<string>();
    for (const o of operationsOf(served)) {
      const body = o.op.requestBody?.content?.["application/json"]?.schema;
      if (!body) continue;
      const ref = body.$ref ?? body.oneOf?.[0]?.$ref;
      expect(ref, `${o.op.operationId}: a named body schema`).toBeTruthy();
      const name = ref.split("/").at(-1);
      names.add(name);
      const segs = o.path.split("/").filter((s: string) => s && !s.startsWith("{"));
      const resource = pascal(singular(segs[0]));
      const verb = { post: "Create", put: "Update", patch: "Patch" }[o.method as "post"];
      const expected =
        o.path === "/authenticate/"
          ? "SessionCreate"
          : segs.length > 1
            ? `${resource}${segs.slice(1).map(pascal).join("")}`
            : `${resource}${verb}`;
      expect(name, `${o.method.toUpperCase()} ${o.path}`).toBe(expected);
    }
    for (const name of Object.keys(served.components.schemas)) {
      expect(name, "no second convention").not.toMatch(/(Write|PostBody|Replace)$/);
    }
    expect(names.size).toBeGreaterThan(40);
  });

  it("writes a nullable use of a component as anyOf [component, null], never the component nullable", () => {
    // zod-to-openapi writes a component from its first use: a nullable one made it nullable
    // everywhere, and a later one `allOf: [component, {type: [.., "null"]}]`, which no null meets.
    for (const [name, schema] of Object.entries<any>(served.components.schemas))
      expect([schema.type ?? []].flat(), `components.schemas.${name}`).not.toContain("null");
    const wrong: string[] = [];
    const walk = (node: any, at: string) => {
      if (!node || typeof node !== "object") return;
      const parts = node.allOf;
      if (Array.isArray(parts) && parts.some((p: any) => Array.isArray(p?.type) && p.type.includes("null")))
        wrong.push(at);
      for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`);
    };
    walk(served, "#");
    expect(wrong).toEqual([]);
    const task = served.components.schemas.TaskCreate.properties;
    expect(task.contact.anyOf).toEqual([{ $ref: "#/components/schemas/Contact" }, { type: "null" }]);
    // Not null where the service refuses null (with its own message): the component itself.
    expect(served.components.schemas.ContactAddressCreate.properties.address.allOf[0]).toEqual({
      $ref: "#/components/schemas/AddressInput",
    });
  });

  it("lists the request examples in a reader's order: a metafield before the tasks that use it", () => {
    const order = operationsOf(served).map((o) => o.op.operationId);
    const precedes = (a: string, b: string) =>
      expect(order.indexOf(a), `${a} before ${b}`).toBeLessThan(order.indexOf(b));
    precedes("bootstrapFirstAdmin", "createAccount");
    precedes("createUser", "partialUpdateAccountRole");
    precedes("createMetafield", "createTask");
    precedes("createTask", "createTaskCommand");
    precedes("createFileUpload", "uploadFile");
    precedes("uploadFile", "createDocument");
    precedes("partialUpdateDocument", "batchDeleteDocuments");
    precedes("createForm", "createFormField");
    expect(served.tags.map((t: any) => t.name).indexOf("Metafields")).toBeLessThan(
      served.tags.map((t: any) => t.name).indexOf("Tasks"),
    );
  });
});

describe("the contract checker", () => {
  it("reports a wrong body, an undocumented status, a missing required header and a wrong media type", () => {
    const headers = (h: Record<string, string>) => new Headers({ "Content-Type": "application/json", ...h });
    const both = { "X-Request-Id": "r-12345678", "X-API-Version": "2.11.4" };
    const ok = { status: 200, headers: headers(both), text: '{"status":"ok","database":"ok"}', body: null };
    expect(checkAnswer(doc, lookup, "get", "/health/", ok).problems).toEqual([]);
    const wrongBody = { ...ok, text: '{"status":"fine"}' };
    expect(checkAnswer(doc, lookup, "get", "/health/", wrongBody).problems.join()).toMatch(/status|database/);
    expect(checkAnswer(doc, lookup, "get", "/health/", { ...ok, status: 418 }).problems.join()).toMatch(
      /not documented/,
    );
    const noVersion = { ...ok, headers: headers({ "X-Request-Id": "r-12345678" }) };
    expect(checkAnswer(doc, lookup, "get", "/health/", noVersion).problems.join()).toMatch(/X-API-Version/);
    const html = { ...ok, headers: new Headers({ ...both, "Content-Type": "text/html" }) };
    expect(checkAnswer(doc, lookup, "get", "/health/", html).problems.join()).toMatch(/Content-Type/);
    // A batch answer is an array of the resource; an object of another shape is not.
    const order = { ...ok, status: 201, text: "[]" };
    expect(checkAnswer(doc, lookup, "post", "/orders/", order).problems).toEqual([]);
    expect(
      checkAnswer(doc, lookup, "post", "/orders/", { ...order, text: '{"id": 1}' }).problems,
    ).not.toEqual([]);
  });
});
