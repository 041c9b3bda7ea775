import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { shardNames } from "../../src/db/shards";
import { paramFor } from "../../src/db/uuid-bytes";
import { addUser, call, expectStatus, newAccount, signIn, type TestAccount } from "../helpers";
import { sampleTask } from "../tasks/helpers";

/**
 * Accounts on shards (contract §24): the tests run two (SHARDS in vitest.config.ts). Each
 * account's rows are in its own shard and nowhere else; the directory says where it lives and
 * keeps the global rows, of which each shard holds the copies its accounts' requests read.
 */
const databases = () => ({ DB: env.DB, SHARD_0: env.SHARD_0!, SHARD_1: env.SHARD_1! });

const shardOf = async (accountId: string) =>
  (await env.DB.prepare("SELECT shard FROM accounts WHERE id = ?").bind(accountId).first<{ shard: string }>())
    ?.shard;

/** New accounts until there is one on each shard (placement goes by room, so both fill). */
async function oneOnEachShard(): Promise<Record<string, TestAccount>> {
  const found: Record<string, TestAccount> = {};
  for (let i = 0; i < 20 && Object.keys(found).length < 2; i++) {
    const acc = await newAccount();
    found[(await shardOf(acc.account.id))!] ??= acc;
  }
  expect(Object.keys(found).sort()).toEqual(["SHARD_0", "SHARD_1"]);
  return found;
}

const count = (db: D1Database, table: string, accountId: string) =>
  db
    .prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE account_id = ${paramFor(table, "account_id")}`)
    .bind(accountId)
    .first<{ n: number }>()
    .then((r) => r!.n);

describe("accounts on shards (contract §24)", () => {
  it("the tests run two shards, and sign-ups land on both", async () => {
    expect(shardNames(env)).toEqual(["SHARD_0", "SHARD_1"]);
    await oneOnEachShard();
  });

  it("an account's rows are in its shard alone; the directory says where, and holds its global rows", async () => {
    const accounts = await oneOnEachShard();
    for (const [shard, acc] of Object.entries(accounts)) {
      const created = await call("/tasks/", {
        token: acc.admin.token,
        body: sampleTask(acc, { description: "sharded" }),
      });
      expectStatus(created, 201);
      const done = await call("/task_commands/", {
        token: acc.admin.token,
        body: {
          task: created.body.url,
          action: "update",
          external_id: crypto.randomUUID(),
          time: new Date().toISOString(),
          task_data: { description: "changed" },
        },
      });
      expectStatus(done, 201);
      for (const [name, db] of Object.entries(databases())) {
        const here = name === shard;
        expect(await count(db, "tasks", acc.account.id), `${name} tasks`).toBe(here ? 1 : 0);
        expect(await count(db, "task_commands", acc.account.id), `${name} commands`).toBe(here ? 1 : 0);
        const events = await count(db, "events", acc.account.id);
        expect(here ? events > 0 : events === 0, `${name} events: ${events}`).toBe(true);
      }
      // The directory has the account, its admin and role, and the session: the shard a copy.
      for (const db of [env.DB, databases()[shard as "SHARD_0"]]) {
        expect(await count(db, "account_roles", acc.account.id)).toBe(1);
        const user = await db.prepare("SELECT email FROM users WHERE id = ?").bind(acc.admin.userId).first();
        expect(user).toMatchObject({ email: acc.admin.email });
      }
      const read = await call(`/tasks/${created.body.id}/`, { token: acc.admin.token });
      expect(read.body.description).toBe("sharded");
    }
  });

  it("a user with roles on both shards signs in once and acts in each; a revocation holds on both", async () => {
    const accounts = await oneOnEachShard();
    const [a, b] = [accounts.SHARD_0, accounts.SHARD_1];
    // B's admin invites A's admin by e-mail; the invitation is accepted with A's session.
    const invited = await call("/users/", {
      token: b.admin.token,
      body: { email: a.admin.email, role: "manager" },
    });
    expectStatus(invited, 201);
    const roles = await call("/account_roles/?page_size=100", { token: b.admin.token });
    const role = roles.body.results.find((r: { user: string }) => r.user.endsWith(`/${a.admin.userId}/`));
    expect(role).toBeTruthy();
    expectStatus(
      await call(`/account_roles/${role.id}/accept/`, { method: "POST", token: a.admin.token }),
      200,
    );
    // The user's rows were copied to B's shard, so a token exchanged for B works there.
    const copy = await env.SHARD_1!.prepare("SELECT id FROM users WHERE id = ?").bind(a.admin.userId).first();
    expect(copy).toBeTruthy();
    const session = await signIn(a.admin.email, a.admin.password);
    const authorized = await call("/session_tokens/authorize/", {
      token: session.token,
      body: { account: b.account.url },
    });
    expectStatus(authorized, 200);
    const inB = authorized.body.token as string;
    const task = await call("/tasks/", {
      token: inB,
      body: sampleTask(b),
    });
    expectStatus(task, 201);
    expect(await count(env.SHARD_1!, "tasks", b.account.id)).toBe(1);
    expect(await count(env.SHARD_0!, "tasks", b.account.id)).toBe(0);
    // Logging out the session revokes it everywhere it is kept: the token it minted dies with it.
    expectStatus(await call("/logout/", { method: "POST", token: session.token }), 204);
    expect((await call("/users/me/", { token: session.token })).status).toBe(401);
    expect((await call("/tasks/", { token: inB })).status).toBe(401);
    for (const db of Object.values(databases())) {
      const row = await db
        .prepare("SELECT revoked_at FROM auth_tokens WHERE user_id = ? AND revoked_at IS NOT NULL")
        .bind(a.admin.userId)
        .first();
      expect(row).toBeTruthy();
    }
  });

  it("a new member of an account gets its rows on that account's shard; sign-in finds them in the directory", async () => {
    const { SHARD_1: acc } = await oneOnEachShard();
    const worker = await addUser(acc, "worker");
    expect(
      await env.SHARD_1!.prepare("SELECT 1 FROM users WHERE id = ?").bind(worker.userId).first(),
    ).toBeTruthy();
    expect(await env.DB.prepare("SELECT 1 FROM users WHERE id = ?").bind(worker.userId).first()).toBeTruthy();
    expect(
      await env.SHARD_0!.prepare("SELECT 1 FROM users WHERE id = ?").bind(worker.userId).first(),
    ).toBeNull();
    const again = await signIn(worker.email, worker.password);
    expectStatus(await call("/users/me/", { token: again.token }), 200);
    // An address registered on one shard's account is registered for all of them.
    const taken = await call("/accounts/", {
      body: { name: "x", email: worker.email, password: "pw-0123456789" },
    });
    expect(taken.status).toBe(201);
    expect(
      await env.DB.prepare("SELECT COUNT(*) AS n FROM users WHERE email = ?").bind(worker.email).first("n"),
    ).toBe(1);
  });

  it("a tracking page's token and an upload's key have a lookup in the directory naming the account; a token without one is still found, and gets one", async () => {
    const { SHARD_1: acc } = await oneOnEachShard();
    const task = await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc) });
    expectStatus(task, 201);
    const t = await call("/trackers/", { token: acc.admin.token, body: { tasks: [task.body.url] } });
    expectStatus(t, 201);
    const token = new URL(t.body.public_url).pathname.split("/")[2];
    const lookup = () =>
      env.DB.prepare("SELECT account_id FROM public_keys WHERE kind = 'tracker' AND key = ?")
        .bind(token)
        .first("account_id");
    expect(await lookup()).toBe(acc.account.id);
    // Lookups are the directory's alone: no shard keeps a copy.
    expect(await env.SHARD_1!.prepare("SELECT COUNT(*) AS n FROM public_keys").first("n")).toBe(0);
    const page = () =>
      exports.default.fetch(new Request(t.body.public_url, { headers: { Accept: "application/json" } }));
    // A tracker made before lookups existed (or a crash before its lookup was written).
    await env.DB.prepare("DELETE FROM public_keys WHERE key = ?").bind(token).run();
    const found = await page();
    expect(found.status).toBe(200);
    expect(((await found.json()) as { tasks: unknown[] }).tasks).toHaveLength(1);
    expect(await lookup()).toBe(acc.account.id);
    expect((await page()).status).toBe(200);

    // An upload's key, which the presigned form carries and POST /storage/ is given, likewise.
    const upload = await call("/file_uploads/", {
      token: acc.admin.token,
      body: { file_name: "photo.jpg", file_type: "image/jpeg" },
    });
    expectStatus(upload, 201);
    const uploadKey = await env
      .SHARD_1!.prepare("SELECT key FROM file_uploads WHERE id = ?")
      .bind(upload.body.id)
      .first<string>("key");
    expect(
      await env.DB.prepare("SELECT account_id FROM public_keys WHERE kind = 'upload' AND key = ?")
        .bind(uploadKey)
        .first("account_id"),
    ).toBe(acc.account.id);
  });
});
