import { describe, expect, it } from "vitest";
import { addUser, call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { stored } from "../stored";
import { bodyFor, populate } from "./populate";

/**
 * Contract §2: what a request may do is decided against its token's account, never the user's
 * roles elsewhere. The user here is a worker in A (their default account) and an admin of B.
 */
async function twoAccountUser() {
  const a = await newAccount("A");
  const u = await addUser(a, "worker");
  const b = await newAccount("B");
  const invite = await call("/account_roles/", {
    token: b.admin.token,
    body: { email: u.email, role: "admin" },
  });
  expectStatus(invite, 201);
  expectStatus(
    await call(`/account_roles/${invite.body.id}/accept/`, { method: "POST", token: u.token }),
    200,
  );
  const authorize = (token: string, acc: TestAccount) =>
    call("/session_tokens/authorize/", { token, body: { account: acc.account.url } });
  const authzA = await authorize(u.token, a);
  expectStatus(authzA, 200);
  const authzB = await authorize(u.token, b);
  expectStatus(authzB, 200);
  const hijack = await call(`/users/${u.userId}/hijack/`, { method: "POST", token: a.admin.token });
  expectStatus(hijack, 200);
  const legacy = await call("/authenticate/", {
    version: "2.9.0",
    body: { username: u.email, password: u.password },
  });
  expectStatus(legacy, 200);
  const scopedToA = {
    session: u.token,
    authorization: authzA.body.token as string,
    hijack: hijack.body.token as string,
    access: legacy.body.token as string,
  };
  return { a, b, u, scopedToA, uInB: authzB.body.token as string };
}

/**
 * Every row of B in every table that has an `account_id`, and B's account and users: B's state.
 * Columns that B's own queued work moves on its own (webhook attempts, event dispatch) are left
 * out; B's exports and imports are finished before the first snapshot.
 */
async function snapshotOf(accountId: string, exceptUser: string): Promise<Record<string, string>> {
  const { results: tables } = await stored
    .prepare(
      `SELECT m.name FROM sqlite_master m WHERE m.type = 'table' AND m.name NOT LIKE '\\_%' ESCAPE '\\' AND m.name NOT LIKE 'sqlite%'
       AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'account_id') ORDER BY m.name`,
    )
    .all<{ name: string }>();
  const volatile = new Set(["webhook_deliveries", "webhooks"]);
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    if (volatile.has(name)) continue;
    // The user's own exchanges of a session for B (allowed: their role) are not B's data.
    const mine = name === "auth_tokens" ? " AND user_id != ?" : "";
    // events and public_keys are WITHOUT ROWID tables (migrations 0025, 0035), ordered by their keys.
    const order = name === "events" ? "id" : name === "public_keys" ? "kind, key" : "rowid";
    const { results } = await stored
      .prepare(`SELECT * FROM "${name}" WHERE account_id = ?${mine} ORDER BY ${order}`)
      .bind(accountId, ...(mine ? [exceptUser] : []))
      .all<Record<string, unknown>>();
    out[name] = JSON.stringify(results.map(({ dispatched_at: _, ...row }) => row));
  }
  const one = async (sql: string) =>
    JSON.stringify((await stored.prepare(sql).bind(accountId).all()).results);
  out.accounts = await one("SELECT * FROM accounts WHERE id = ?");
  out.users = await one(
    "SELECT * FROM users WHERE id IN (SELECT user_id FROM account_roles WHERE account_id = ?) ORDER BY id",
  );
  return out;
}

/** B's queued exports, imports and SMS run to their end, so only the walk can change B afterwards. */
async function settled(accountId: string) {
  for (let i = 0; i < 100; i++) {
    const busy = await stored
      .prepare(
        `SELECT (SELECT COUNT(*) FROM data_exports WHERE account_id = ?1 AND state IN ('queued', 'running'))
            + (SELECT COUNT(*) FROM data_imports WHERE account_id = ?1 AND state IN ('queued', 'running'))
            + (SELECT COUNT(*) FROM sms WHERE account_id = ?1 AND state = 'queued') AS n`,
      )
      .bind(accountId)
      .first<{ n: number }>();
    if (!busy?.n) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("B's queued work did not finish");
}

describe("a token scoped to one account acts in that account only (contract §2)", () => {
  it("session, authorization JWT, hijack and access tokens of A reach nothing of B, through every operation", async () => {
    const { a, b, u, scopedToA, uInB } = await twoAccountUser();
    const { ids } = await populate(b);
    // The user's own way into B keeps working throughout (and proves the roles are real).
    expectStatus(await call(`/accounts/${b.account.id}/`, { token: uInB }), 200);
    await settled(b.account.id);
    const before = await snapshotOf(b.account.id, u.userId);
    const spec = await call("/openapi.json");
    const foreign = Object.entries(ids)
      .filter(([k]) => k !== "delivery" && k !== "route_optimizations")
      .map(([, id]) => id);
    let walked = 0;
    for (const [kind, token] of Object.entries(scopedToA)) {
      for (const [path, ops] of Object.entries<Record<string, any>>(spec.body.paths)) {
        if (path.startsWith("/files/") || path.startsWith("/storage/") || path.startsWith("/t/")) continue;
        // Signing out would end the tokens the walk still needs (tested on its own elsewhere).
        if (path === "/logout/") continue;
        const collection = path.split("/")[1];
        for (const [method, op] of Object.entries(ops)) {
          if (Array.isArray(op.security) && op.security.length === 0) continue; // anonymous
          const where = `${kind}: ${method.toUpperCase()} ${path}`;
          const opts = { method: method.toUpperCase(), token, body: bodyFor(b, collection, method) };
          if (path.includes("{id}")) {
            const fill = (id: string, delivery: string) =>
              path.replace("{id}", id).replace("{delivery_id}", delivery);
            const theirs = await call(fill(ids[collection], ids.delivery), opts);
            const missing = await call(fill(crypto.randomUUID(), crypto.randomUUID()), opts);
            // B's object answers exactly as a missing one (or the operation is refused outright).
            expect([403, 404], `${where}: ${theirs.text}`).toContain(theirs.status);
            expect({ where, body: theirs.body }).toEqual({ where, body: missing.body });
          } else if (method === "get") {
            const r = await call(path, { token });
            expect(r.status, `${where}: ${r.text}`).toBeLessThan(500);
            for (const id of [...foreign, b.account.id]) expect(r.text, where).not.toContain(id);
          } else {
            // Writes name B where a body can: they create in A, or are refused; never in B.
            const body =
              collection === "session_tokens" && path.endsWith("/authorize/")
                ? { account: b.account.url }
                : { account: b.account.url, ...(opts.body as object) };
            const r = await call(path, { method: opts.method, token, body });
            expect(r.status, `${where}: ${r.text}`).toBeLessThan(500);
            if (path === "/session_tokens/authorize/") {
              // Only the user's own session (or access token) may be exchanged for B.
              if (kind === "session" || kind === "access") expectStatus(r, 200);
              else expect([400, 403], where).toContain(r.status);
            }
          }
          walked++;
        }
      }
    }
    expect(walked).toBeGreaterThan(4 * 120);
    const after = await snapshotOf(b.account.id, u.userId);
    for (const table of Object.keys(before)) expect(after[table], table).toBe(before[table]);
    // B's admin (the other one) was never signed out; the user still works in B.
    expectStatus(await call(`/accounts/${b.account.id}/`, { token: b.admin.token }), 200);
    expectStatus(await call(`/accounts/${b.account.id}/`, { token: uInB }), 200);
    // And each token still works where it belongs.
    for (const [kind, token] of Object.entries(scopedToA)) {
      const me = await call(`/accounts/${a.account.id}/`, { token });
      expect(me.status, kind).toBe(200);
    }
  });

  it("PATCH /accounts/{B}/ with a token of A is 404 even for B's admin; the list holds the token's account", async () => {
    const { a, b, scopedToA } = await twoAccountUser();
    for (const [kind, token] of Object.entries(scopedToA)) {
      const r = await call(`/accounts/${b.account.id}/`, { method: "PATCH", token, body: { name: "owned" } });
      expect(r.status, kind).toBe(404);
      expect((await call(`/accounts/${b.account.id}/`, { token })).status, kind).toBe(404);
      const list = await call("/accounts/", { token });
      expectStatus(list, 200);
      expect(
        list.body.results.map((x: any) => x.id),
        kind,
      ).toEqual([a.account.id]);
    }
    expect((await call(`/accounts/${b.account.id}/`, { token: b.admin.token })).body.name).toBe("B");
  });

  it("a hijack token touches nothing of the user's own: sessions, profile, invitations", async () => {
    const { u, scopedToA } = await twoAccountUser();
    const t = scopedToA.hijack;
    expectStatus(await call("/session_tokens/", { token: t }), 403);
    const own = await call("/session_tokens/", { token: u.token });
    expectStatus(own, 200);
    for (const s of own.body.results) {
      expectStatus(await call(`/session_tokens/${s.id}/`, { method: "DELETE", token: t }), 403);
    }
    expectStatus(
      await call(`/users/${u.userId}/`, { method: "PATCH", token: t, body: { name: "renamed" } }),
      403,
    );
    const me = await call("/users/me/", { token: u.token });
    expect(me.body.name).toBe("worker");
    // The user's own sessions all still work.
    expectStatus(await call("/users/me/", { token: u.token }), 200);
  });

  it("an admin renames, re-mails or deactivates only users wholly in the account", async () => {
    const { a, u } = await twoAccountUser();
    for (const body of [{ name: "renamed" }, { email: "x@example.test" }, { is_active: false }]) {
      expectStatus(await call(`/users/${u.userId}/`, { method: "PATCH", token: a.admin.token, body }), 403);
    }
    const solo = await addUser(a, "worker");
    const r = await call(`/users/${solo.userId}/`, {
      method: "PATCH",
      token: a.admin.token,
      body: { name: "renamed" },
    });
    expectStatus(r, 200);
    expect(r.body.name).toBe("renamed");
  });
});
