import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addUser, BASE, call, expectStatus, newAccount } from "../helpers";

describe("versions (contract §1)", () => {
  it("puts X-API-Version and X-Request-Id on every response, errors included", async () => {
    const { admin } = await newAccount();
    for (const r of [
      await call("/users/me/", { token: admin.token }),
      await call("/users/me/"),
      await call("/nope/"),
      await call("/users/me/", { token: admin.token, version: "9.9.9" }),
    ]) {
      expect(r.headers.get("X-Request-Id")).toMatch(/^[\w-]{8,}$/);
      expect(r.headers.get("X-API-Version")).toMatch(/^\d+\.\d+\.\d+$/);
    }
  });

  it("uses the declared version, else the account's pinned one, else the current one", async () => {
    const { admin, account } = await newAccount();
    expect((await call("/users/me/", { token: admin.token })).headers.get("X-API-Version")).toBe("2.11.4");
    expect(
      (await call("/users/me/", { token: admin.token, version: "2.9.0" })).headers.get("X-API-Version"),
    ).toBe("2.9.0");
    const patched = await call(`/accounts/${account.id}/`, {
      method: "PATCH",
      token: admin.token,
      body: { api_version: "2.9.0" },
    });
    expectStatus(patched, 200);
    expect(patched.body.api_version).toBe("2.9.0");
    expect((await call("/users/me/", { token: admin.token })).headers.get("X-API-Version")).toBe("2.9.0");
    // Pinned before 2.10.0, so a path without slash is served for this account's callers.
    expectStatus(await call("/users/me", { token: admin.token }), 200);
    expect((await call("/openapi.json")).headers.get("X-API-Version")).toBe("2.11.4");
  });

  it("answers 400 to an unknown or malformed version", async () => {
    for (const v of ["9.9.9", "2.12.0", "abc", "2.10"]) {
      const r = await call("/openapi.json", { version: v });
      expectStatus(r, 400);
      expect(r.body.detail).toContain("version");
    }
    expectStatus(await call("/openapi.json", { version: "2.4.36" }), 200);
  });
});

describe("trailing slash", () => {
  it("is 404 from 2.10.0 on", async () => {
    const { admin } = await newAccount();
    expectStatus(await call("/users/me", { token: admin.token, version: "2.10.0" }), 404);
    expectStatus(await call("/users/me", { token: admin.token, version: "2.11.4" }), 404);
  });

  it("is served transparently before 2.10.0, POST bodies included", async () => {
    const { admin } = await newAccount();
    const r = await call("/users/me", { token: admin.token, version: "2.9.0" });
    expectStatus(r, 200);
    expect(r.body.id).toBe(admin.userId);
    const auth = await call("/authenticate", {
      version: "2.9.0",
      body: { username: admin.email, password: admin.password },
    });
    expectStatus(auth, 200);
    expect(auth.body.user).toBe(admin.user);
  });
});

describe("time zones", () => {
  it("renders timestamps in the Accept-Timezone zone's offset, UTC with Z otherwise", async () => {
    const { admin, account } = await newAccount();
    const utc = await call(`/accounts/${account.id}/`, { token: admin.token });
    expect(utc.body.created_at).toMatch(/Z$/);
    const tallinn = await call(`/accounts/${account.id}/`, {
      token: admin.token,
      headers: { "Accept-Timezone": "Europe/Tallinn" },
    });
    expectStatus(tallinn, 200);
    const offset = tallinn.body.created_at.slice(-6);
    expect(["+02:00", "+03:00"]).toContain(offset);
    expect(Date.parse(tallinn.body.created_at)).toBe(Date.parse(utc.body.created_at));
  });

  it("answers 400 to an unknown zone", async () => {
    const { admin } = await newAccount();
    const r = await call("/users/me/", {
      token: admin.token,
      headers: { "Accept-Timezone": "Mars/Olympus" },
    });
    expectStatus(r, 400);
    expect(r.body.code).toBe("invalid_timezone");
  });
});

describe("errors and bodies (contract §3)", () => {
  it("maps validation errors to DRF's shape and ignores unknown body fields", async () => {
    const { admin } = await newAccount();
    const r = await call("/users/", {
      token: admin.token,
      body: { email: "not-an-email", role: "boss", whatever: 1 },
    });
    expectStatus(r, 400);
    expect(Object.keys(r.body).sort()).toEqual(["email", "role"]);
    expect(Array.isArray(r.body.email)).toBe(true);
    const missing = await call("/users/", { token: admin.token, body: { unknown_field: true } });
    expect(missing.body.email).toEqual(["This field is required."]);
  });

  it("rejects unknown query parameters on list views, naming them", async () => {
    const { admin } = await newAccount();
    const r = await call("/users/?colour=red&role=admin", { token: admin.token });
    expectStatus(r, 400);
    expect(r.body).toEqual({ colour: ["Unknown query parameter."] });
  });

  it("answers 400 to malformed JSON and 415 to a body that is not JSON", async () => {
    const { admin } = await newAccount();
    const bad = await call("/users/", {
      token: admin.token,
      raw: '{"email": ',
      headers: { "Content-Type": "application/json" },
      method: "POST",
    });
    expectStatus(bad, 400);
    expect(bad.body.detail).toMatch(/JSON/i);
    const form = await call("/users/", {
      token: admin.token,
      raw: "a=b",
      headers: { "Content-Type": "text/plain" },
      method: "POST",
    });
    expectStatus(form, 415);
  });

  it("answers 413 to a JSON body over 10 MiB before reading it whole", async () => {
    const { admin } = await newAccount();
    const big = `{"email": "${"a".repeat(10 * 1024 * 1024 + 10)}"}`;
    const r = await call("/users/", {
      token: admin.token,
      raw: big,
      headers: { "Content-Type": "application/json" },
      method: "POST",
    });
    expectStatus(r, 413);
    expect(r.body.code).toBe("request_too_large");
  });

  it("answers 405 with Allow for a known path and another method", async () => {
    const { admin } = await newAccount();
    const r = await call("/users/me/", { token: admin.token, method: "DELETE" });
    expectStatus(r, 405);
    expect(r.headers.get("Allow")).toContain("GET");
  });

  it("answers 404 in the error shape for unknown paths", async () => {
    const r = await call("/no-such-thing/");
    expectStatus(r, 404);
    expect(r.body).toEqual({ detail: "Not found.", code: "not_found" });
  });
});

describe("roles and accounts (contract §2)", () => {
  it("forbids a worker the admin-only endpoints (403)", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    expectStatus(
      await call("/users/", { token: worker.token, body: { email: "x@example.test", role: "worker" } }),
      403,
    );
    expectStatus(
      await call(`/accounts/${acc.account.id}/`, {
        method: "PATCH",
        token: worker.token,
        body: { name: "x" },
      }),
      403,
    );
    expectStatus(await call("/account_roles/", { token: worker.token }), 403);
    // and reads what is its own
    expectStatus(await call("/users/me/", { token: worker.token }), 200);
  });

  it("hides another account's users and account (404)", async () => {
    const a = await newAccount();
    const b = await newAccount();
    expectStatus(await call(`/users/${b.admin.userId}/`, { token: a.admin.token }), 404);
    expectStatus(await call(`/accounts/${b.account.id}/`, { token: a.admin.token }), 404);
    expectStatus(await call(`/users/${a.admin.userId}/`, { token: a.admin.token }), 200);
    expectStatus(await call("/users/not-a-uuid/", { token: a.admin.token }), 404);
  });

  it("closes sign-up when ALLOW_SIGNUP is not true", async () => {
    const { createApp } = await import("../../src/app");
    const app = createApp();
    const res = await app.fetch(
      new Request(`${BASE}/accounts/`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "CF-Connecting-IP": "198.51.100.7" },
        body: JSON.stringify({ name: "x", email: "closed@example.test", password: "12345678" }),
      }),
      { ...env, ALLOW_SIGNUP: "false" },
    );
    expect(res.status).toBe(403);
  });

  it("lets admins change account settings and manage roles", async () => {
    const acc = await newAccount();
    const r = await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: {
        transit_active_limit: 2,
        feature_allow_worker_reordering: true,
        failed_reasons: ["Closed"],
        review_emails_to_assignee: true,
      },
    });
    expectStatus(r, 200);
    expect(r.body).toMatchObject({
      transit_active_limit: 2,
      feature_allow_worker_reordering: true,
      failed_reasons: ["Closed"],
    });
    const worker = await addUser(acc, "worker");
    const roles = await call("/account_roles/?role=worker", { token: acc.admin.token });
    expectStatus(roles, 200);
    expect(roles.body.results).toHaveLength(1);
    const roleId = roles.body.results[0].id;
    const promoted = await call(`/account_roles/${roleId}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { role: "manager" },
    });
    expect(promoted.body.role).toBe("manager");
    expectStatus(await call("/account_roles/", { token: worker.token }), 200);
  });
});

describe("pagination (contract §4)", () => {
  it("walks a list with next and previous cursors, never losing or repeating an item", async () => {
    const acc = await newAccount();
    for (let i = 0; i < 4; i++) await addUser(acc, "worker", `w${i}`);
    const seen: string[] = [];
    let r = await call("/users/?page_size=2", { token: acc.admin.token });
    expectStatus(r, 200);
    expect(r.body.previous).toBeNull();
    const firstPage = r.body.results.map((u: any) => u.id);
    seen.push(...firstPage);
    // An insert between page fetches lands after the cursor and shows up exactly once.
    await addUser(acc, "worker", "late");
    while (r.body.next) {
      r = await call(r.body.next, { token: acc.admin.token });
      expectStatus(r, 200);
      seen.push(...r.body.results.map((u: any) => u.id));
    }
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);
    const second = await call(`/users/?page_size=2`, { token: acc.admin.token });
    const back = await call((await call(second.body.next, { token: acc.admin.token })).body.previous, {
      token: acc.admin.token,
    });
    expect(back.body.results.map((u: any) => u.id)).toEqual(firstPage);
  });

  it("bounds page_size at 500 and rejects a bad cursor", async () => {
    const { admin } = await newAccount();
    expectStatus(await call("/users/?page_size=501", { token: admin.token }), 400);
    expectStatus(await call("/users/?cursor=%%%", { token: admin.token }), 400);
  });
});

describe("rate limit (contract §10)", () => {
  it("allows 20 requests per second per token, then 429 with Retry-After", async () => {
    const { createApp } = await import("../../src/app");
    const app = createApp();
    const limitedEnv = { ...env, RATE_LIMIT_PER_SECOND: "20" };
    // Windows are whole seconds (durable-objects/rate-limiter). On a loaded machine a burst may
    // straddle a boundary, each window granting its own 20: such a burst is fired again, with
    // a fresh token, until one falls within a single window.
    let replies: Response[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      const { admin } = await newAccount();
      const fire = () =>
        app.fetch(
          new Request(`${BASE}/users/me/`, { headers: { Authorization: `Bearer ${admin.token}` } }),
          limitedEnv,
        );
      const started = Date.now();
      replies = await Promise.all(Array.from({ length: 30 }, fire));
      if (Math.floor(Date.now() / 1000) === Math.floor(started / 1000)) break;
    }
    const ok = replies.filter((r) => r.status === 200);
    const limited = replies.filter((r) => r.status === 429);
    expect(ok.length).toBeLessThanOrEqual(20);
    expect(limited.length).toBeGreaterThanOrEqual(10);
    expect(limited[0].headers.get("Retry-After")).toMatch(/^\d+$/);
    expect(((await limited[0].json()) as any).code).toBe("throttled");
    // IETF draft-ietf-httpapi-ratelimit-headers, current form, and the earlier fields kept.
    expect(ok[0].headers.get("RateLimit-Policy")).toBe('"default";q=20;w=1');
    const current = ok[0].headers.get("RateLimit")!.match(/^"default";r=(\d+);t=(\d+)$/);
    expect(current, ok[0].headers.get("RateLimit") ?? "").not.toBeNull();
    expect(Number(current![1])).toBeLessThan(20);
    expect(Number(current![2])).toBeGreaterThanOrEqual(1);
    expect(ok[0].headers.get("RateLimit-Limit")).toBe("20");
    expect(Number(ok[0].headers.get("RateLimit-Remaining"))).toBe(Number(current![1]));
    expect(limited[0].headers.get("RateLimit")).toMatch(/^"default";r=0;t=\d+$/);
  });
});

describe("OpenAPI", () => {
  it("serves /openapi.json generated from the route schemas and a docs page", async () => {
    const r = await call("/openapi.json");
    expectStatus(r, 200);
    expect(r.body.openapi).toBe("3.1.0");
    for (const path of [
      "/authenticate/",
      "/accounts/",
      "/users/",
      "/users/{id}/",
      "/account_roles/",
      "/session_tokens/",
      "/logout/",
    ]) {
      expect(Object.keys(r.body.paths), path).toContain(path);
    }
    expect(r.body.paths["/users/"].post.requestBody.content["application/json"].schema).toBeTruthy();
    const docs = await call("/docs/");
    expectStatus(docs, 200);
    expect((await call("/docs/init.js")).text).toContain("/openapi.json");
  });
});

describe("server errors", () => {
  it("shows the request id, never a stack trace", async () => {
    const { renderError } = await import("../../src/http/errors");
    const { Hono } = await import("hono");
    const app = new Hono<any>();
    app.use("*", async (c, next) => {
      c.set("requestId", "req-test-123");
      await next();
    });
    app.get("/boom", () => {
      throw new Error("secret internals at line 42");
    });
    app.onError((err, c) => renderError(err, c as any));
    const res = await app.request("/boom");
    expect(res.status).toBe(500);
    const body = (await res.json()) as any;
    expect(body.detail).toContain("req-test-123");
    expect(JSON.stringify(body)).not.toContain("secret internals");
  });
});
