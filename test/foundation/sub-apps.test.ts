import { describe, expect, it } from "vitest";
import { call, expectStatus, newAccount } from "../helpers";

/**
 * The Worker is three sub-apps chosen by path, each with its own middleware chain (src/app.ts):
 * what one chain does must not leak into another.
 */
describe("sub-apps and their middleware chains", () => {
  it("the document and the docs read no token: a bad one is not a 401 there, but is in the API", async () => {
    const bogus = "not-a-real-token";
    expectStatus(await call("/openapi.json", { token: bogus }), 200);
    expectStatus(await call("/docs/", { token: bogus }), 200);
    const api = await call("/tasks/", { token: bogus });
    expectStatus(api, 401);
  });

  it("stored files read no token and are never rate limited as API calls", async () => {
    const missing = await call(`/files/${crypto.randomUUID()}/nothing.txt`, { token: "stale" });
    expectStatus(missing, 404);
    expect(missing.text).toContain("<Code>NoSuchKey</Code>");
    expect(missing.headers.get("RateLimit-Policy")).toBeNull();
    // The upload endpoint is counted (per client address), as the API is.
    const upload = await call("/storage/", {
      method: "POST",
      raw: "x",
      headers: { "Content-Type": "text/plain" },
    });
    expect(upload.headers.get("RateLimit-Policy")).toMatch(/^"default";q=\d+;w=1$/);
  });

  it("the trailing-slash rule and the JSON envelope are the API's only", async () => {
    const acc = await newAccount();
    // 2.10.0+: an API path without its slash is 404; the document's path has none and is served.
    expectStatus(await call("/tasks", { token: acc.admin.token, version: "2.10.0" }), 404);
    expectStatus(await call("/openapi.json", { version: "2.10.0" }), 200);
  });

  it("each sub-app answers 405 with Allow for its own paths", async () => {
    const doc = await call("/openapi.json", { method: "DELETE" });
    expectStatus(doc, 405);
    expect(doc.headers.get("Allow")).toBe("GET, HEAD");
    const storage = await call("/storage/", { method: "PUT", raw: "x" });
    expectStatus(storage, 405);
    expect(storage.headers.get("Allow")).toBe("OPTIONS, POST");
    const acc = await newAccount();
    const api = await call("/tasks/", { method: "PUT", token: acc.admin.token, body: {} });
    expectStatus(api, 405);
    expect(api.headers.get("Allow")).toBe("GET, HEAD, POST");
  });
});
