import { applyD1Migrations, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { BASE, newAccount } from "../helpers";

const TOKEN = "bootstrap-token-0123456789abcdef0123456789abcdef";

async function post(path: string, target: Env, body: unknown, headers: Record<string, string> = {}) {
  const ctx = createExecutionContext();
  const res = await createApp().fetch(
    new Request(`${BASE}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "CF-Connecting-IP": "203.0.113.9", ...headers },
      body: JSON.stringify(body),
    }),
    target,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: (await res.json()) as any };
}

describe("the first admin of a deployment with sign-up closed", () => {
  it("is created once with the bootstrap secret, on an empty database only", async () => {
    await applyD1Migrations(env.EMPTY_DB, env.TEST_MIGRATIONS);
    const deployed = { ...env, DB: env.EMPTY_DB, ALLOW_SIGNUP: "false", BOOTSTRAP_TOKEN: TOKEN } as Env;
    const admin = { name: "Operator", email: "ops@example.org", password: "a long first password" };

    const signUp = await post("/accounts/", deployed, admin);
    expect(signUp.status).toBe(403);
    const noToken = await post("/bootstrap/", deployed, admin);
    expect(noToken.status).toBe(403);
    const wrong = await post("/bootstrap/", deployed, admin, { "X-Bootstrap-Token": `${TOKEN}x` });
    expect(wrong.status).toBe(403);
    const unset = await post("/bootstrap/", { ...deployed, BOOTSTRAP_TOKEN: "" } as Env, admin, {
      "X-Bootstrap-Token": "",
    });
    expect(unset.status).toBe(403);
    const bad = await post("/bootstrap/", deployed, { name: "Operator" }, { "X-Bootstrap-Token": TOKEN });
    expect(bad.status).toBe(400);
    expect(bad.body.email).toEqual(["This field is required."]);

    const first = await post("/bootstrap/", deployed, admin, { "X-Bootstrap-Token": TOKEN });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.name).toBe("Operator");
    const again = await post(
      "/bootstrap/",
      deployed,
      { ...admin, email: "second@example.org" },
      { "X-Bootstrap-Token": TOKEN },
    );
    expect(again.status).toBe(403);
    expect(again.body.code).toBe("permission_denied");

    const signIn = await post("/authenticate/", deployed, {
      username: admin.email,
      password: admin.password,
    });
    expect(signIn.status).toBe(200);
    expect(typeof signIn.body.token).toBe("string");
    const users = await env.EMPTY_DB.prepare("SELECT COUNT(*) AS n FROM users").first<{ n: number }>();
    expect(users?.n).toBe(1);
  });

  it("is refused on a database that already has accounts, even with the secret", async () => {
    await newAccount();
    const r = await post(
      "/bootstrap/",
      { ...env, ALLOW_SIGNUP: "false", BOOTSTRAP_TOKEN: TOKEN } as Env,
      { name: "Intruder", email: "intruder@example.org", password: "a long password here" },
      { "X-Bootstrap-Token": TOKEN },
    );
    expect(r.status).toBe(403);
    expect(r.body.detail).toBe("This deployment already has an account.");
  });
});
