import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { addUser, call, expectStatus, newAccount, signIn, uniqueEmail } from "../helpers";
import { stored } from "../stored";

describe("sign-up and authentication", () => {
  it("signs up, authenticates with a JWT (2.10.0+) and calls an authenticated endpoint", async () => {
    const email = uniqueEmail();
    const r = await call("/accounts/", { body: { name: "Acme", email, password: "pass-word-123" } });
    expectStatus(r, 201);
    expect(r.body).toMatchObject({
      name: "Acme",
      api_version: "2.11.4",
      transit_active_limit: 1,
      failed_reasons: [],
    });
    expect(r.body.url).toBe(`https://api.test/accounts/${r.body.id}/`);

    const auth = await call("/authenticate/", { body: { username: email, password: "pass-word-123" } });
    expectStatus(auth, 200);
    expect(Object.keys(auth.body)).toEqual(["token"]);
    expect(auth.body.token.split(".")).toHaveLength(3);

    const me = await call("/users/me/", { token: auth.body.token });
    expectStatus(me, 200);
    expect(me.body).toMatchObject({ email, role: "admin", account: r.body.url });
  });

  it("answers the legacy body with a long-lived access token before 2.10.0, usable with the Token scheme", async () => {
    const { admin, account } = await newAccount();
    const auth = await call("/authenticate/", {
      version: "2.9.0",
      body: { username: admin.email, password: admin.password },
    });
    expectStatus(auth, 200);
    expect(auth.body).toEqual({ token: expect.any(String), user: admin.user, account: account.url });
    expect(auth.body.token.split(".")).toHaveLength(1);
    const me = await call("/users/me/", { token: auth.body.token, scheme: "Token" });
    expectStatus(me, 200);
    expect(me.body.id).toBe(admin.userId);
  });

  it("gives the same 400 for a wrong password and an unknown user", async () => {
    const { admin } = await newAccount();
    const wrong = await call("/authenticate/", {
      body: { username: admin.email, password: "nope-nope-nope" },
    });
    const unknown = await call("/authenticate/", {
      body: { username: uniqueEmail(), password: "nope-nope-nope" },
    });
    expectStatus(wrong, 400);
    expectStatus(unknown, 400);
    expect(wrong.body).toEqual({ non_field_errors: ["Unable to log in with provided credentials."] });
    expect(unknown.body).toEqual(wrong.body);
  });

  it("stores passwords as PBKDF2-SHA256 hashes, never in clear", async () => {
    const { admin } = await newAccount();
    const row = await stored
      .prepare("SELECT password_hash FROM users WHERE id = ?")
      .bind(admin.userId)
      .first<{ password_hash: string }>();
    expect(row!.password_hash).toMatch(/^pbkdf2_sha256\$100000\$[\w-]+\$[\w-]+$/);
    expect(row!.password_hash).not.toContain(admin.password);
  });

  it("rejects missing credentials with 401 and WWW-Authenticate", async () => {
    const r = await call("/users/me/");
    expectStatus(r, 401);
    expect(r.body).toEqual({
      detail: "Authentication credentials were not provided.",
      code: "not_authenticated",
    });
    expect(r.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);
  });

  it("revokes the token on logout: using it afterwards is 401", async () => {
    const { admin } = await newAccount();
    expectStatus(await call("/logout/", { method: "POST", token: admin.token }), 204);
    const r = await call("/users/me/", { token: admin.token });
    expectStatus(r, 401);
    expect(r.body.code).toBe("authentication_failed");
  });

  it("rejects an expired token, alg none, a token signed with another key, and garbage", async () => {
    const { admin } = await newAccount();
    const [h, p] = admin.token.split(".");
    const claims = JSON.parse(atob(p.replace(/-/g, "+").replace(/_/g, "/")));
    const enc = (o: unknown) =>
      btoa(JSON.stringify(o)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");

    const none = `${enc({ alg: "none", typ: "session+jwt", kid: "test-2" })}.${p}.`;
    const otherKey = await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", kid: "test-2", typ: "session+jwt" })
      .sign(new TextEncoder().encode("a-completely-different-secret-key-value-0123456789"));
    const expired = await new SignJWT({ ...claims, exp: Math.floor(Date.now() / 1000) - 10 })
      .setProtectedHeader({ alg: "HS256", kid: "test-2", typ: "session+jwt" })
      .sign(
        Uint8Array.from(atob("dGVzdC1rZXktdHdvLXRlc3Qta2V5LXR3by10ZXN0LWtleQ=="), (c) => c.charCodeAt(0)),
      );
    const tampered = `${h}.${enc({ ...claims, sub: "0190aaaa-0000-7000-8000-000000000000" })}.${admin.token.split(".")[2]}`;

    for (const token of [none, otherKey, expired, tampered, "not-a-token", "fda_unknown"]) {
      const r = await call("/users/me/", { token });
      expect(r.status, `token ${token.slice(0, 30)}`).toBe(401);
      expect(r.body.code).toBe("authentication_failed");
    }
    // The genuine token still works, so the 401s above are about the tokens, not the account.
    expectStatus(await call("/users/me/", { token: admin.token }), 200);
  });

  it("a sign-in ignores a stale token in the request (contract §2), and still counts a failure", async () => {
    const { admin } = await newAccount();
    expectStatus(await call("/logout/", { method: "POST", token: admin.token }), 204);
    expectStatus(await call("/users/me/", { token: admin.token }), 401);
    for (const token of [admin.token, "not-a-token"]) {
      const again = await call("/authenticate/", {
        token,
        body: { username: admin.email, password: admin.password },
      });
      expectStatus(again, 200);
      expectStatus(await call("/users/me/", { token: again.body.token }), 200);
    }
    const wrong = await call("/authenticate/", {
      token: admin.token,
      body: { username: admin.email, password: "not the password" },
    });
    expectStatus(wrong, 400);
    const counted = await stored
      .prepare("SELECT failures FROM sign_in_failures WHERE key = ?")
      .bind(`user:${admin.email}`)
      .first<{ failures: number }>();
    expect(counted?.failures).toBe(1);
  });

  it("verifies tokens signed with an older key of the ring (kid rotation)", async () => {
    const { admin } = await newAccount();
    const claims = JSON.parse(atob(admin.token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
    const oldKey = Uint8Array.from(atob("dGVzdC1rZXktb25lLXRlc3Qta2V5LW9uZS10ZXN0LWtleQ=="), (c) =>
      c.charCodeAt(0),
    );
    const signedWithOld = await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", kid: "test-1", typ: "session+jwt" })
      .sign(oldKey);
    expectStatus(await call("/users/me/", { token: signedWithOld }), 200);
  });

  it("refreshes a session (same session, new expiry) and exchanges a legacy token for a JWT", async () => {
    const { admin } = await newAccount();
    const r = await call("/session_tokens/refresh/", { method: "POST", token: admin.token });
    expectStatus(r, 200);
    const jti = (t: string) => JSON.parse(atob(t.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))).jti;
    expect(jti(r.body.token)).toBe(jti(admin.token));
    expectStatus(await call("/users/me/", { token: r.body.token }), 200);

    const legacy = await call("/authenticate/", {
      version: "2.9.0",
      body: { username: admin.email, password: admin.password },
    });
    const swapped = await call("/session_tokens/refresh/", {
      method: "POST",
      token: legacy.body.token,
      scheme: "Token",
    });
    expectStatus(swapped, 200);
    expect(swapped.body.token.split(".")).toHaveLength(3);
    expectStatus(await call("/users/me/", { token: swapped.body.token }), 200);
  });

  it("authorizes a 15-minute JWT scoped to one account, revoked with its session", async () => {
    const { admin, account } = await newAccount();
    const other = await newAccount();
    const r = await call("/session_tokens/authorize/", {
      token: admin.token,
      body: { account: account.url },
    });
    expectStatus(r, 200);
    const claims = JSON.parse(atob(r.body.token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
    expect(claims.exp - claims.iat).toBe(900);
    expect(claims.acc).toBe(account.id);
    expectStatus(await call(`/accounts/${account.id}/`, { token: r.body.token }), 200);

    const denied = await call("/session_tokens/authorize/", {
      token: admin.token,
      body: { account: other.account.url },
    });
    expectStatus(denied, 400);

    expectStatus(await call("/logout/", { method: "POST", token: admin.token }), 204);
    expectStatus(await call(`/accounts/${account.id}/`, { token: r.body.token }), 401);
  });

  it("/session_tokens/ and /accounts/ page with page_size and refuse unknown query parameters", async () => {
    const acc = await newAccount();
    const sessions = [acc.admin.token];
    for (let i = 0; i < 3; i++) sessions.push((await signIn(acc.admin.email, acc.admin.password)).token);
    const seen: string[] = [];
    let url: string | null = "/session_tokens/?page_size=1";
    while (url) {
      const page: any = await call(url, { token: acc.admin.token });
      expectStatus(page, 200);
      expect(page.body.results).toHaveLength(1);
      seen.push(page.body.results[0].id);
      url = page.body.next;
    }
    expect(new Set(seen).size).toBe(4);
    for (const path of ["/session_tokens/", "/accounts/"]) {
      const bad = await call(`${path}?nope=1`, { token: acc.admin.token });
      expectStatus(bad, 400);
      expect(bad.body).toEqual({ nope: ["Unknown query parameter."] });
      expectStatus(await call(`${path}?page_size=0`, { token: acc.admin.token }), 400);
    }
    const accounts = await call("/accounts/?page_size=1", { token: acc.admin.token });
    expect(accounts.body).toMatchObject({ next: null, previous: null });
    expect(accounts.body.results.map((a: any) => a.id)).toEqual([acc.account.id]);
  });

  it("lets only integration users create session tokens; lists and revokes the caller's sessions", async () => {
    const acc = await newAccount();
    const integration = await addUser(acc, "integration");
    expectStatus(await call("/session_tokens/", { token: acc.admin.token, body: { name: "x" } }), 403);

    const created = await call("/session_tokens/", { token: integration.token, body: { name: "ERP sync" } });
    expectStatus(created, 201);
    expect(created.body).toMatchObject({
      name: "ERP sync",
      kind: "session",
      user: integration.user,
      token: expect.any(String),
    });
    expectStatus(await call("/users/me/", { token: created.body.token }), 200);

    const list = await call("/session_tokens/", { token: integration.token });
    expectStatus(list, 200);
    expect(list.body.results.map((s: any) => s.id)).toContain(created.body.id);
    expect(list.body.results.every((s: any) => s.token === undefined)).toBe(true);

    expectStatus(
      await call(`/session_tokens/${created.body.id}/`, { method: "DELETE", token: integration.token }),
      204,
    );
    expectStatus(await call("/users/me/", { token: created.body.token }), 401);
    // Another user's session is not visible: 404.
    expectStatus(
      await call(`/session_tokens/${created.body.id}/`, { method: "DELETE", token: acc.admin.token }),
      404,
    );
  });

  it("stores access tokens only as hashes", async () => {
    const { admin } = await newAccount();
    const legacy = await call("/authenticate/", {
      version: "2.9.0",
      body: { username: admin.email, password: admin.password },
    });
    const { results } = await stored
      .prepare("SELECT token_hash FROM auth_tokens WHERE user_id = ? AND kind = 'access'")
      .bind(admin.userId)
      .all<{ token_hash: string }>();
    expect(results).toHaveLength(1);
    expect(results[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(results[0].token_hash).not.toContain(legacy.body.token);
  });
});
