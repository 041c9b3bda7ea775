import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { BASE, call, expectStatus, newAccount } from "../helpers";

afterEach(() => vi.restoreAllMocks());

describe("API root and health", () => {
  it("the root links the docs, the document and the main collections, without a token", async () => {
    const r = await call("/");
    expectStatus(r, 200);
    expect(r.body).toMatchObject({
      docs: `${BASE}/docs/`,
      openapi: `${BASE}/openapi.json`,
      health: `${BASE}/health/`,
      tasks: `${BASE}/tasks/`,
      orders: `${BASE}/orders/`,
      task_commands: `${BASE}/task_commands/`,
    });
  });

  it("health is 200 without a token when D1 answers, and reveals no configuration", async () => {
    const r = await call("/health/");
    expectStatus(r, 200);
    expect(r.body).toEqual({ status: "ok", database: "ok" });
  });

  it("health is 503 when D1 does not answer", async () => {
    const broken = {
      prepare() {
        throw new Error("D1_ERROR: database unavailable");
      },
    };
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const ctx = createExecutionContext();
    const res = await createApp().fetch(new Request(`${BASE}/health/`), { ...env, DB: broken }, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: "unavailable", database: "unavailable" });
  });
});

describe("CORS", () => {
  const origin = "https://dispatch.example.org";

  it("answers a preflight of the document and the anonymous endpoints from any origin", async () => {
    for (const path of ["/openapi.json", "/authenticate/", "/health/"]) {
      const r = await call(path, {
        method: "OPTIONS",
        headers: { Origin: origin, "Access-Control-Request-Method": "POST" },
      });
      expect(r.status, path).toBe(204);
      expect(r.headers.get("Access-Control-Allow-Origin"), path).toBe("*");
      expect(r.headers.get("Access-Control-Allow-Headers"), path).toContain("Authorization");
    }
    const doc = await call("/openapi.json", { headers: { Origin: origin } });
    expect(doc.headers.get("Access-Control-Allow-Origin")).toBe("*");
  });

  it("the authenticated API allows only the origins of CORS_ORIGINS", async () => {
    const acc = await newAccount();
    const refused = await call("/tasks/", { token: acc.admin.token, headers: { Origin: origin } });
    expectStatus(refused, 200);
    expect(refused.headers.get("Access-Control-Allow-Origin")).toBeNull();

    const app = createApp();
    const ctx = createExecutionContext();
    const configured = { ...env, CORS_ORIGINS: `https://other.example.org, ${origin}` };
    const preflight = await app.fetch(
      new Request(`${BASE}/tasks/`, {
        method: "OPTIONS",
        headers: {
          Origin: origin,
          "Access-Control-Request-Method": "GET",
          "Access-Control-Request-Headers": "authorization",
        },
      }),
      configured,
      ctx,
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("Access-Control-Allow-Origin")).toBe(origin);
    const list = await app.fetch(
      new Request(`${BASE}/tasks/`, {
        headers: { Origin: origin, Authorization: `Bearer ${acc.admin.token}` },
      }),
      configured,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(list.status).toBe(200);
    expect(list.headers.get("Access-Control-Allow-Origin")).toBe(origin);
    expect(list.headers.get("Access-Control-Expose-Headers")).toContain("X-Request-Id");
  });
});

describe("request logs", () => {
  it("one JSON line per request with its fields, and no token, password or path", async () => {
    const acc = await newAccount();
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(" "));
    });
    const password = acc.admin.password;
    const signIn = await call("/authenticate/", { body: { username: acc.admin.email, password } });
    expectStatus(signIn, 200);
    const token = signIn.body.token as string;
    const task = await call("/tasks/", {
      token,
      body: { account: acc.account.url, category: "drop_off", address: { raw_address: "Tallinn" } },
    });
    expectStatus(task, 201);
    const read = await call(`/tasks/${task.body.id}/?expand=routes`, { token, version: "2.11.4" });
    expectStatus(read, 200);
    vi.restoreAllMocks();

    const entries = lines.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    const mine = entries.find((e) => e.request_id === read.headers.get("X-Request-Id"));
    expect(mine).toMatchObject({
      type: "request",
      method: "GET",
      route: "/tasks/:id/",
      status: 200,
      version: "2.11.4",
      account: acc.account.id,
      user: acc.admin.userId,
    });
    expect(typeof mine.duration_ms).toBe("number");
    const all = lines.join("\n");
    expect(all).not.toContain(token);
    expect(all).not.toContain(password);
    expect(all).not.toContain(task.body.id);
  });
});
