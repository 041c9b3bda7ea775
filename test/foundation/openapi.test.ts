import { beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../src/http/errors";
import { EVENT_TYPES } from "../../src/services/events/outbox";
import { call, expectStatus } from "../helpers";

const METHODS = ["get", "put", "post", "delete", "patch"];
type ViteGlob = (pattern: string, options: object) => Record<string, unknown>;
let doc: any;

/** Every operation of the document: [method, path, operation]. */
const operations = (): [string, string, any][] =>
  Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m): [string, string, any] => [m, path, item[m]]),
  );
const resolve = (node: any) => {
  if (!node?.$ref) return node;
  const [, , kind, name] = node.$ref.split("/");
  return doc.components[kind][name];
};
const isApi = (path: string) => !path.startsWith("/storage/") && !path.startsWith("/files/");

/** Visits every object of the document (schemas inline and in components, webhooks included). */
function walk(node: any, visit: (node: any, where: string) => void, where = "#") {
  if (Array.isArray(node)) {
    for (const [i, n] of node.entries()) walk(n, visit, `${where}/${i}`);
  } else if (node && typeof node === "object") {
    visit(node, where);
    for (const [k, v] of Object.entries(node)) walk(v, visit, `${where}/${k}`);
  }
}

beforeAll(async () => {
  const r = await call("/openapi.json");
  expectStatus(r, 200);
  doc = r.body;
});

describe("/openapi.json", () => {
  it("gives every operation a unique, readable operationId", () => {
    const ids = operations().map(([, , op]) => op.operationId);
    expect(
      ids.every((id) => typeof id === "string" && /^[a-z][A-Za-z]+$/.test(id)),
      ids.join(),
    ).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const id = (m: string, p: string) => doc.paths[p][m].operationId;
    expect(id("get", "/tasks/")).toBe("listTasks");
    expect(id("post", "/tasks/")).toBe("createTask");
    expect(id("get", "/tasks/{id}/")).toBe("retrieveTask");
    expect(id("patch", "/tasks/{id}/")).toBe("partialUpdateTask");
    expect(id("put", "/tasks/{id}/")).toBe("updateTask");
    expect(id("delete", "/tasks/{id}/")).toBe("destroyTask");
    expect(id("get", "/webhooks/{id}/deliveries/")).toBe("listWebhookDeliveries");
    expect(id("post", "/authenticate/")).toBe("authenticate");
  });

  it("marks exactly the anonymous operations with an empty security requirement", async () => {
    expect(doc.security).toEqual([{ Bearer: [] }, { Token: [] }]);
    const anonymous = operations()
      .filter(([, , op]) => Array.isArray(op.security) && op.security.length === 0)
      .map(([m, p]) => `${m.toUpperCase()} ${p}`);
    expect(anonymous.sort()).toEqual([
      "GET /",
      "GET /app/",
      "GET /console/",
      "GET /docs/",
      "GET /events/stream/",
      "GET /files/documents/{id}/thumbnails/{thumbnail_name}",
      "GET /files/documents/{id}/{file_name}",
      "GET /files/exports/{id}/{token}/{file_name}",
      "GET /files/fileupload/{id}/{file_name}",
      "GET /files/outbox/{id}/{file_name}",
      "GET /files/signatures/{id}/thumbnails/{thumbnail_name}",
      "GET /files/signatures/{id}/{file_name}",
      "GET /health/",
      "GET /openapi.json",
      "GET /t/live.js",
      "GET /t/{token}/",
      "GET /t/{token}/stream/",
      "POST /accounts/",
      "POST /authenticate/",
      "POST /bootstrap/",
      "POST /sms/status/",
      "POST /storage/",
      "POST /users/activate/",
      "POST /users/verify_email/confirm/",
    ]);
    // And the document agrees with the server: these answer without a token, the others do not.
    expectStatus(await call("/tasks/"), 401);
    expect(
      (await call("/authenticate/", { body: { username: "x@example.com", password: "x" } })).status,
    ).not.toBe(401);
  });

  it("declares every tag it uses, with a description, and describes the API", () => {
    const declared = new Map<string, string>(doc.tags.map((t: any) => [t.name, t.description]));
    for (const [, , op] of operations()) {
      for (const tag of op.tags) expect(declared.get(tag), tag).toMatch(/\S{3}/);
    }
    for (const topic of ["Versions", "Errors", "Pagination", "Time zones", "Rate limits", "Uploads"]) {
      expect(doc.info.description).toContain(`## ${topic}`);
    }
    // The licence a client's legal review reads: the repository's LICENSE, by SPDX identifier.
    expect(doc.info.license).toEqual({ name: "Apache-2.0", identifier: "Apache-2.0" });
  });

  it("formats every timestamp as date-time and every tuple as items with a fixed length", () => {
    const timestamp = /(_at|^scheduled_time|^complete_after|^complete_before|^time|^timestamp)$/;
    const seen: string[] = [];
    walk(doc, (node, where) => {
      // A tuple's positions (`prefixItems`, for the tools that read it: issue 46) never stand
      // alone: `items` and a fixed length beside them describe it to the tools that do not.
      if (node.prefixItems !== undefined) {
        expect(node.items, where).toBeDefined();
        expect([node.minItems, node.maxItems], where).toEqual([
          node.prefixItems.length,
          node.prefixItems.length,
        ]);
      }
      for (const [name, schema] of Object.entries<any>(node.properties ?? {})) {
        if (!timestamp.test(name) || typeof schema !== "object") continue;
        seen.push(name);
        expect(schema.format, `${where}/properties/${name}`).toBe("date-time");
      }
    });
    expect(seen).toEqual(
      expect.arrayContaining(["created_at", "updated_at", "scheduled_time", "timestamp", "time"]),
    );
    const coordinates = doc.components.schemas.GeoPoint.properties.coordinates;
    expect(coordinates).toMatchObject({
      type: "array",
      items: { type: "number" },
      minItems: 2,
      maxItems: 2,
      prefixItems: [
        { type: "number", minimum: -180, maximum: 180 },
        { type: "number", minimum: -90, maximum: 90 },
      ],
    });
  });

  it("has an example for every JSON request body, and for the main answers", () => {
    for (const [m, p, op] of operations()) {
      const json = op.requestBody?.content?.["application/json"];
      if (json) expect(json.example ?? json.examples, `${m} ${p}`).toBeDefined();
    }
    const tasks = doc.paths["/tasks/"].post.responses["201"].content["application/json"].examples;
    expect(tasks.example1.value).toMatchObject({ category: "drop_off", state: "assigned" });
  });

  it("lists every error code the server sends, and the shared answers where they happen", () => {
    expect([...doc.components.schemas.Error.properties.code.enum].sort()).toEqual([...ERROR_CODES].sort());
    // Codes written in the source: each must be in the enum (ApiError's type enforces it too).
    // Vite's import.meta.glob (vitest transforms the test): the source files as text.
    const sources = (import.meta as ImportMeta & { glob: ViteGlob }).glob("../../src/**/*.ts", {
      query: "?raw",
      import: "default",
      eager: true,
    });
    const found = new Set<string>();
    for (const text of Object.values(sources) as string[]) {
      for (const m of text.matchAll(/new ApiError\(\s*\d+,\s*"([a-z_]+)"/g)) found.add(m[1]);
      for (const m of text.matchAll(/\bcode: "([a-z_]+)"/g)) found.add(m[1]);
      for (const m of text.matchAll(/badRequest\(\s*(?:`[^`]*`|"[^"]*"),\s*"([a-z_]+)"/g)) found.add(m[1]);
    }
    expect(found.size).toBeGreaterThanOrEqual(8);
    for (const code of found) expect(ERROR_CODES, code).toContain(code);
    for (const code of ["not_acceptable_version", "invalid_timezone", "conflict", "parse_error"]) {
      expect(ERROR_CODES).toContain(code);
    }
    for (const [m, p, op] of operations()) {
      if (!isApi(p)) continue;
      const statuses = Object.keys(op.responses);
      expect(statuses, `${m} ${p}`).toEqual(expect.arrayContaining(["405", "500"]));
      if (op.requestBody?.content?.["application/json"]) {
        expect(statuses, `${m} ${p}`).toEqual(expect.arrayContaining(["413", "415"]));
      }
    }
    for (const m of ["patch", "put", "delete"])
      expect(doc.paths["/tasks/{id}/"][m].responses["409"]).toBeDefined();
    expect(resolve(doc.paths["/tasks/"].get.responses["405"]).headers.Allow).toBeDefined();
  });

  it("documents the response and request headers as reusable components", async () => {
    const headers = doc.components.headers;
    for (const name of [
      "X-Request-Id",
      "X-API-Version",
      "RateLimit-Policy",
      "RateLimit",
      "Retry-After",
      "Location",
    ]) {
      expect(headers[name]?.description, name).toBeTruthy();
    }
    expect(headers["RateLimit-Policy"].schema.examples[0]).toBe('"default";q=20;w=1');
    for (const [m, p, op] of operations()) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        expect(resolve(response).headers?.["X-Request-Id"], `${m} ${p} ${status}`).toBeDefined();
      }
      if (op.responses["429"])
        expect(resolve(op.responses["429"]).headers["Retry-After"], `${m} ${p}`).toBeDefined();
    }
    expect(doc.paths["/tasks/"].get.responses["200"].headers.RateLimit).toEqual({
      $ref: "#/components/headers/RateLimit",
    });
    expect(doc.paths["/storage/"].post.responses["204"].headers.Location).toBeDefined();
    expect(doc.components.parameters.Accept.description).toContain("version=");
    expect(doc.components.parameters["Accept-Timezone"].in).toBe("header");
    expect(doc.paths["/tasks/"].get.parameters).toContainEqual({
      $ref: "#/components/parameters/Accept-Timezone",
    });
    // What the document says is what the server sends (a counted request: here an anonymous 401).
    const r = await call("/tasks/");
    for (const name of ["X-Request-Id", "X-API-Version", "RateLimit-Policy", "RateLimit"]) {
      expect(r.headers.get(name), name).toBeTruthy();
    }
  });

  it("describes every webhook event, its delivery headers and the signature check", () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const op = doc.webhooks[type].post;
      const names = op.parameters.map((p: any) => p.name);
      expect(names).toEqual(expect.arrayContaining(["webhook-id", "webhook-timestamp", "webhook-signature"]));
      const body = op.requestBody.content["application/json"].schema;
      expect(body.properties.type.const).toBe(type);
      expect(body.properties.timestamp.format).toBe("date-time");
      expect(op.description).toContain("HMAC-SHA256");
    }
    expect(
      doc.webhooks["task.created"].post.requestBody.content["application/json"].schema.properties.data,
    ).toEqual({
      $ref: "#/components/schemas/Task",
    });
  });

  it("names the origin the request came to in servers (the document is cached per isolate)", async () => {
    const a = await call("https://one.example.net/openapi.json");
    const b = await call("https://two.example.net/openapi.json");
    const again = await call("https://one.example.net/openapi.json");
    expect(a.body.servers).toEqual([{ url: "https://one.example.net" }]);
    expect(b.body.servers).toEqual([{ url: "https://two.example.net" }]);
    expect(again.text).toBe(a.text);
  });
});
