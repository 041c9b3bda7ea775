import { afterEach, describe, expect, it, vi } from "vitest";
import { addUser, call, expectStatus, newAccount } from "../helpers";
import { jwtPayload } from "./helpers";

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

const hijack = (token: string, userId: string) => call(`/users/${userId}/hijack/`, { method: "POST", token });

describe("hijack (contract §14)", () => {
  it("answers a 1-hour session of the user with the admin in the act claim (RFC 8693)", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const r = await hijack(acc.admin.token, worker.userId);
    expectStatus(r, 200);
    const claims = jwtPayload(r.body.token);
    expect(claims.sub).toBe(worker.userId);
    expect(claims.act).toEqual({ sub: acc.admin.userId });
    // One hour; `iat` is taken when the token is signed, a moment after `exp` is computed.
    expect(claims.exp - claims.iat).toBeGreaterThanOrEqual(3599);
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(3600);
    const me = await call("/users/me/", { token: r.body.token });
    expectStatus(me, 200);
    expect(me.body.id).toBe(worker.userId);
    expect(me.body.role).toBe("worker");
  });

  it("records a user.hijacked event and an audit line; requests are logged with the admin", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const lines: any[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => {
      lines.push(JSON.parse(line));
    });
    const r = await hijack(acc.admin.token, worker.userId);
    expectStatus(r, 200);
    await call("/tasks/", { token: r.body.token });
    vi.restoreAllMocks();
    const audit = lines.find((l) => l.type === "audit" && l.action === "user.hijacked");
    expect(audit).toMatchObject({ account: acc.account.id, user: worker.userId, actor: acc.admin.userId });
    const request = lines.find((l) => l.type === "request" && l.route === "/tasks/");
    expect(request).toMatchObject({ user: worker.userId, actor: acc.admin.userId, status: 200 });

    // Listed once past the settle delay (contract §9): the clock moves a minute.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 60_000);
    const events = await call("/events/?type=user.hijacked", { token: acc.admin.token });
    expectStatus(events, 200);
    expect(events.body.results).toHaveLength(1);
    const data = events.body.results[0].data ?? events.body.results[0].payload;
    expect(JSON.stringify(data)).toContain(worker.userId);
    expect(JSON.stringify(data)).toContain(acc.admin.userId);
  });

  it("never another admin, never the caller, never from a hijack token; workers and managers may not", async () => {
    const acc = await newAccount();
    const admin2 = await addUser(acc, "admin");
    const manager = await addUser(acc, "manager");
    const worker = await addUser(acc, "worker");
    expectStatus(await hijack(acc.admin.token, admin2.userId), 403);
    expectStatus(await hijack(acc.admin.token, acc.admin.userId), 403);
    expectStatus(await hijack(manager.token, worker.userId), 403);
    expectStatus(await hijack(worker.token, manager.userId), 403);
    const asManager = await hijack(acc.admin.token, manager.userId);
    expectStatus(asManager, 200);
    // A hijack token cannot hijack, refresh, or make other tokens.
    expectStatus(await hijack(asManager.body.token, worker.userId), 403);
    expectStatus(
      await call("/session_tokens/refresh/", { method: "POST", token: asManager.body.token }),
      403,
    );
    expectStatus(
      await call("/session_tokens/authorize/", {
        token: asManager.body.token,
        body: { account: acc.account.url },
      }),
      403,
    );
    expectStatus(await call("/session_tokens/", { token: asManager.body.token, body: { name: "x" } }), 403);
  });

  it("never a user of another account (404), and the token stays in the admin's account", async () => {
    const a = await newAccount("A");
    const b = await newAccount("B");
    const bWorker = await addUser(b, "worker");
    expectStatus(await hijack(a.admin.token, bWorker.userId), 404);
    expectStatus(await hijack(a.admin.token, b.admin.userId), 404);
  });

  it("expires after an hour (clock moved) and dies with the admin's token", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const r = await hijack(acc.admin.token, worker.userId);
    expectStatus(await call("/users/me/", { token: r.body.token }), 200);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 3600 * 1000 + 1000);
    expectStatus(await call("/users/me/", { token: r.body.token }), 401);
    vi.useRealTimers();

    const again = await hijack(acc.admin.token, worker.userId);
    expectStatus(await call("/users/me/", { token: again.body.token }), 200);
    expectStatus(await call("/logout/", { method: "POST", token: acc.admin.token }), 204);
    expectStatus(await call("/users/me/", { token: again.body.token }), 401);
  });

  it("made from an authorization JWT, it dies when the admin signs out of the session behind it", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const authz = await call("/session_tokens/authorize/", {
      token: acc.admin.token,
      body: { account: acc.account.url },
    });
    expectStatus(authz, 200);
    const r = await hijack(authz.body.token, worker.userId);
    expectStatus(r, 200);
    expectStatus(await call("/users/me/", { token: r.body.token }), 200);
    expectStatus(await call("/logout/", { method: "POST", token: acc.admin.token }), 204);
    expectStatus(await call("/users/me/", { token: authz.body.token }), 401);
    expectStatus(await call("/users/me/", { token: r.body.token }), 401);
  });

  it("dies at once when its admin is demoted, deactivated (user or role) or removed", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const roleOf = async (userId: string) => {
      const roles = await call("/account_roles/", { token: acc.admin.token });
      return roles.body.results.find((x: any) => x.user.endsWith(`/${userId}/`)).id as string;
    };
    const changes: [string, (admin2: { userId: string }) => Promise<unknown>][] = [
      [
        "demoted",
        async (a2) =>
          call(`/account_roles/${await roleOf(a2.userId)}/`, {
            method: "PATCH",
            token: acc.admin.token,
            body: { role: "manager" },
          }),
      ],
      [
        "role deactivated",
        async (a2) =>
          call(`/account_roles/${await roleOf(a2.userId)}/`, {
            method: "PATCH",
            token: acc.admin.token,
            body: { is_active: false },
          }),
      ],
      [
        "user deactivated",
        async (a2) =>
          call(`/users/${a2.userId}/`, {
            method: "PATCH",
            token: acc.admin.token,
            body: { is_active: false },
          }),
      ],
      [
        "removed",
        async (a2) =>
          call(`/account_roles/${await roleOf(a2.userId)}/`, { method: "DELETE", token: acc.admin.token }),
      ],
    ];
    for (const [what, change] of changes) {
      const admin2 = await addUser(acc, "admin");
      // An access token (legacy) is not revoked by a role change: only the chain check ends it.
      const legacy = await call("/authenticate/", {
        version: "2.9.0",
        body: { username: admin2.email, password: admin2.password },
      });
      const r = await hijack(legacy.body.token, worker.userId);
      expectStatus(r, 200);
      expectStatus(await call("/users/me/", { token: r.body.token }), 200);
      const changed = (await change(admin2)) as { status: number; text: string };
      expect(changed.status, `${what}: ${changed.text}`).toBeLessThan(300);
      const after = await call("/users/me/", { token: r.body.token });
      expect(after.status, what).toBe(401);
    }
  });

  it("a token whose act claim does not match its row is refused", async () => {
    const acc = await newAccount();
    // A session token carries no act claim; its row has no actor: accepted as usual.
    expectStatus(await call("/users/me/", { token: acc.admin.token }), 200);
    const claims = jwtPayload(acc.admin.token);
    expect(claims.act).toBeUndefined();
  });
});
