import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ACCOUNT_DATA_TABLES, GLOBAL_TABLES } from "../../src/db/account-tables";
import { databaseNamed } from "../../src/db/shards";
import { settleSeconds } from "../../src/lib/settle";
import { advanceMoves, DRAIN_MS, digest, type MoveRow, requestMove } from "../../src/services/accounts/move";
import { BASE, call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { open, ticket } from "../live/client";
import { sampleTask } from "../tasks/helpers";
import { hookUrl, seedDelivery } from "../webhooks/support";

/**
 * Moving an account between shards (contract §24, `npm run accounts:move`): the cron copies,
 * verifies, switches the directory's entry and deletes the source, a step at a time; the
 * account's writes answer 503 meanwhile, nobody else's do; a failure leaves it whole on one side.
 */

const shardOf = async (accountId: string) =>
  (await env.DB.prepare("SELECT shard FROM accounts WHERE id = ?").bind(accountId).first<{ shard: string }>())
    ?.shard as "SHARD_0" | "SHARD_1";
const other = (shard: string) => (shard === "SHARD_0" ? "SHARD_1" : "SHARD_0");
const moveOf = (accountId: string) =>
  env.DB.prepare("SELECT * FROM account_moves WHERE account_id = ?").bind(accountId).first<MoveRow>();

/** An account with some of everything: tasks, commands (their events carry BLOB payloads), a webhook, a metafield. */
async function busyAccount(): Promise<{ acc: TestAccount; taskIds: string[]; trackerUrl: string }> {
  const acc = await newAccount();
  const taskIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    const t = await call("/tasks/", {
      token: acc.admin.token,
      body: sampleTask(acc, { description: `t${i}` }),
    });
    expectStatus(t, 201);
    taskIds.push(t.body.id);
  }
  expectStatus(
    await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: `${BASE}/tasks/${taskIds[0]}/`,
        action: "update",
        external_id: crypto.randomUUID(),
        time: new Date().toISOString(),
        task_data: { description: "changed" },
      },
    }),
    201,
  );
  // A webhook and a delivery already made (none due: nothing reaches out during the test).
  const hook = await call("/webhooks/", {
    token: acc.admin.token,
    body: { url: hookUrl(), events: ["task.deleted"] },
  });
  expectStatus(hook, 201);
  await seedDelivery(acc.account.id, hook.body.id, { state: "delivered" });
  const tracker = await call("/trackers/", {
    token: acc.admin.token,
    body: { tasks: [`${BASE}/tasks/${taskIds[0]}/`] },
  });
  expectStatus(tracker, 201);
  return { acc, taskIds, trackerUrl: tracker.body.public_url as string };
}

async function digests(db: D1Database, accountId: string) {
  const out: Record<string, { rows: number; sha256: string }> = {};
  for (const t of ACCOUNT_DATA_TABLES) out[t.table] = await digest(db, t, accountId);
  return out;
}

const rowsIn = async (db: D1Database, accountId: string) =>
  Object.values(await digests(db, accountId)).reduce((n, d) => n + d.rows, 0);

/** `env` whose binding `name` fails every batch while `failing()` says so (a crash mid-copy). */
function withFailingBatches(name: string, failing: () => boolean): Env {
  const real = databaseNamed(env, name);
  const wrapped = new Proxy(real, {
    get(target, prop) {
      if (prop === "batch")
        return (s: D1PreparedStatement[]) => {
          if (failing()) return Promise.reject(new Error("simulated crash"));
          return target.batch(s);
        };
      const v = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return Object.create(env, { [name]: { value: wrapped } }) as Env;
}

describe("moving an account to another shard (contract §24)", () => {
  it("a live stream opened before the move receives the writes before and after it, each once (issue 45, item 5)", async () => {
    const acc = await newAccount();
    const s = await open(await ticket(acc.admin.token));
    expect(s.status).toBe(101);
    const created: string[] = [];
    const write = async (expected: number) => {
      const r = await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc) });
      if (r.status === 201) created.push(r.body.id);
      expect(r.status).toBe(expected);
    };
    const seen = () => s.messages.filter((m) => m.type === "task.created").map((m) => m.data.id);
    await write(201);
    await s.until(() => seen().length === 1, "the write before the move");
    const from = await shardOf(acc.account.id);
    const t0 = Date.now();
    await requestMove(env, acc.account.id, other(from), t0);
    await advanceMoves(env, t0, 1_000);
    await write(503); // during: writes wait, and nothing reaches the stream
    await advanceMoves(env, t0 + 5_000, 10_000);
    await advanceMoves(env, t0 + 5_000 + DRAIN_MS + 1_000, 10_000);
    expect(await shardOf(acc.account.id)).toBe(other(from));
    for (let i = 0; i < 3; i++) await write(201);
    await s.until(() => seen().length === 4, "the writes after the move");
    await new Promise((r) => setTimeout(r, 300));
    expect(seen()).toEqual(created);
    expect(s.closed()).toBeNull();
  });

  it("every table is either an account's data (moved) or global, with a key that is the table's", async () => {
    const { results } = await env.DB.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations'",
    ).all<{ name: string }>();
    const classified = [...ACCOUNT_DATA_TABLES.map((t) => t.table), ...GLOBAL_TABLES].sort();
    expect(classified).toEqual(results.map((r) => r.name).sort());
    for (const t of ACCOUNT_DATA_TABLES) {
      const { results: cols } = await env.DB.prepare(
        `SELECT name, pk FROM pragma_table_info('${t.table}')`,
      ).all<{
        name: string;
        pk: number;
      }>();
      const pk = cols
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name);
      if (pk.length) expect(t.key, t.table).toEqual(pk);
      else {
        // No primary key: the key must be a unique index's columns.
        const { results: idx } = await env.DB.prepare(
          `SELECT il.name AS index_name, ii.name AS col FROM pragma_index_list('${t.table}') il, pragma_index_info(il.name) ii WHERE il."unique" = 1`,
        ).all<{ index_name: string; col: string }>();
        const byIndex = new Map<string, string[]>();
        for (const r of idx) byIndex.set(r.index_name, [...(byIndex.get(r.index_name) ?? []), r.col]);
        expect([...byIndex.values()].map((c) => c.join(","))).toContain(t.key.join(","));
      }
    }
  });

  it("copies, verifies, switches and deletes; writes answer 503 meanwhile, reads and other accounts go on", async () => {
    const { acc, taskIds, trackerUrl } = await busyAccount();
    const written = Date.now();
    const trackingPage = async () => {
      const r = await exports.default.fetch(
        new Request(trackerUrl, { headers: { Accept: "application/json" } }),
      );
      expect(r.status).toBe(200);
      return r.json();
    };
    const shown = await trackingPage();
    const bystander = await newAccount();
    const from = await shardOf(acc.account.id);
    const to = other(from);
    const before = await digests(databaseNamed(env, from), acc.account.id);
    const read = async () => (await call(`/tasks/${taskIds[0]}/`, { token: acc.admin.token })).body;
    const answered = await read();
    // The events list leaves out events younger than the settle delay (contract §4): wait until the
    // account's have settled, so that the list compared after the move is not empty by timing (it
    // was, and a run slow enough to cross the delay in between saw the two differ).
    await new Promise((r) =>
      setTimeout(r, Math.max(0, written + settleSeconds(env) * 1000 + 250 - Date.now())),
    );
    const eventsBefore = await call("/events/?page_size=100", { token: acc.admin.token });
    expectStatus(eventsBefore, 200);
    expect(eventsBefore.body.results.length).toBeGreaterThan(0);
    expect(before.tasks.rows).toBe(3);
    expect(before.events.rows).toBeGreaterThan(0);
    expect(before.webhook_deliveries.rows).toBe(1);

    const t0 = Date.now();
    await requestMove(env, acc.account.id, to, t0);
    await advanceMoves(env, t0, 1_000);
    expect(await moveOf(acc.account.id)).toMatchObject({ phase: "marked", source: from, target: to });

    // Writes wait with Retry-After; reads and the other accounts carry on.
    const blocked = await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc) });
    expect(blocked.status).toBe(503);
    expect(blocked.body.code).toBe("service_unavailable");
    expect(Number(blocked.headers.get("Retry-After"))).toBeGreaterThan(0);
    const command = await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: `${BASE}/tasks/${taskIds[1]}/`,
        action: "update",
        external_id: crypto.randomUUID(),
        time: new Date().toISOString(),
        task_data: { description: "during the move" },
      },
    });
    expect(command.status).toBe(503);
    expectStatus(await call(`/tasks/${taskIds[0]}/`, { token: acc.admin.token }), 200);
    expectStatus(await call("/tasks/", { token: bystander.admin.token, body: sampleTask(bystander) }), 201);

    // Copied and verified, switched: the directory names the target; writes still wait (the drain).
    await advanceMoves(env, t0 + 5_000, 10_000);
    const switched = await moveOf(acc.account.id);
    expect(switched).toMatchObject({ phase: "draining" });
    expect(await shardOf(acc.account.id)).toBe(to);
    const verified = JSON.parse(switched!.detail!).tables;
    expect(verified.tasks).toEqual(before.tasks);
    expect(verified.events).toEqual(before.events);
    expect((await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc) })).status).toBe(503);

    await advanceMoves(env, t0 + 5_000 + DRAIN_MS + 1_000, 10_000);
    const done = await moveOf(acc.account.id);
    expect(done).toMatchObject({ phase: "done" });
    expect(done!.rows_deleted).toBe(done!.rows_copied);

    // Whole on the target, nothing left at the source but its stub; every byte as it was.
    expect(await digests(databaseNamed(env, to), acc.account.id)).toEqual(before);
    expect(await rowsIn(databaseNamed(env, from), acc.account.id)).toBe(0);
    expect(
      await databaseNamed(env, from)
        .prepare("SELECT COUNT(*) AS n FROM account_roles WHERE account_id = ?")
        .bind(acc.account.id)
        .first("n"),
    ).toBe(0);

    // The same session goes on: reads give the same answers, and writes are back.
    const list = await call("/tasks/?page_size=100", { token: acc.admin.token });
    expectStatus(list, 200);
    expect(list.body.results.map((t: { id: string }) => t.id).sort()).toEqual([...taskIds].sort());
    expect(await read()).toEqual(answered);
    expectStatus(await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc) }), 201);
    const events = await call("/events/?page_size=100", { token: acc.admin.token });
    expect(events.body.results).toEqual(eventsBefore.body.results);
    // The recipients' page too: its lookup names the account, wherever it lives now.
    expect(await trackingPage()).toEqual(shown);
  });

  it("a crash mid-copy resumes on the next run; one that keeps failing leaves the account whole where it was", async () => {
    const { acc } = await busyAccount();
    const from = await shardOf(acc.account.id);
    const to = other(from);
    const before = await digests(databaseNamed(env, from), acc.account.id);

    // Fails once in the copy, then the next run resumes and finishes.
    let calls = 0;
    const flaky = withFailingBatches(to, () => ++calls === 8);
    const t0 = Date.now();
    await requestMove(env, acc.account.id, to, t0);
    await advanceMoves(flaky, t0, 1_000);
    await advanceMoves(flaky, t0 + 5_000, 10_000);
    const failedOnce = await moveOf(acc.account.id);
    expect(failedOnce).toMatchObject({ attempts: 1 });
    expect(JSON.parse(failedOnce!.detail!).error).toContain("simulated crash");
    await advanceMoves(flaky, t0 + 10_000, 10_000);
    await advanceMoves(flaky, t0 + 10_000 + DRAIN_MS + 1_000, 10_000);
    expect(await moveOf(acc.account.id)).toMatchObject({ phase: "done" });
    expect(await digests(databaseNamed(env, to), acc.account.id)).toEqual(before);
    expect(await rowsIn(databaseNamed(env, from), acc.account.id)).toBe(0);

    // Back the other way, with a target that never takes a write: after five tries it gives up.
    const broken = withFailingBatches(from, () => true);
    const t1 = Date.now();
    await requestMove(env, acc.account.id, from, t1);
    await advanceMoves(broken, t1, 1_000);
    for (let i = 0; i < 6; i++) await advanceMoves(broken, t1 + 5_000 * (i + 1), 10_000);
    const failed = await moveOf(acc.account.id);
    expect(failed).toMatchObject({ phase: "failed", attempts: 5 });
    expect(await shardOf(acc.account.id)).toBe(to);
    expect(await digests(databaseNamed(env, to), acc.account.id)).toEqual(before);
    expect(await rowsIn(databaseNamed(env, from), acc.account.id)).toBe(0);
    expectStatus(await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc) }), 201);
  });

  it("a lease that lapsed (the cron was away) starts the copy over; a bad request fails with a reason", async () => {
    const acc = await newAccount();
    const from = await shardOf(acc.account.id);
    const t0 = Date.now();
    await requestMove(env, acc.account.id, other(from), t0);
    await advanceMoves(env, t0, 1_000);
    expect(await moveOf(acc.account.id)).toMatchObject({ phase: "marked" });
    await advanceMoves(env, t0 + 120_000, 1_000);
    const again = await moveOf(acc.account.id);
    expect(again).toMatchObject({ phase: "marked" });
    expect(again!.marked_at).toBeGreaterThanOrEqual(t0 + 120_000);
    await advanceMoves(env, t0 + 130_000, 10_000);
    await advanceMoves(env, t0 + 130_000 + DRAIN_MS + 5_000, 10_000);
    expect(await moveOf(acc.account.id)).toMatchObject({ phase: "done" });

    const stay = await newAccount();
    await requestMove(env, stay.account.id, await shardOf(stay.account.id), t0);
    await advanceMoves(env, t0, 1_000);
    const refused = await moveOf(stay.account.id);
    expect(refused).toMatchObject({ phase: "failed" });
    expect(JSON.parse(refused!.detail!).error).toMatch(/already lives/);
    await requestMove(env, stay.account.id, "SHARD_9", t0);
    await advanceMoves(env, t0, 1_000);
    expect(JSON.parse((await moveOf(stay.account.id))!.detail!).error).toMatch(/not a shard/);
    expectStatus(await call("/tasks/", { token: stay.admin.token, body: sampleTask(stay) }), 201);
  });

  it("a crash between the switch and its record goes on from the target, even once the lease lapsed", async () => {
    const acc = await newAccount();
    const from = await shardOf(acc.account.id);
    const to = other(from);
    const t0 = Date.now();
    await requestMove(env, acc.account.id, to, t0);
    await advanceMoves(env, t0, 1_000);
    await advanceMoves(env, t0 + 5_000, 10_000);
    expect(await moveOf(acc.account.id)).toMatchObject({ phase: "draining" });
    // As if the run died after the directory's write, before the move's row said so; the cron
    // comes back two minutes later.
    await env.DB.prepare(
      "UPDATE account_moves SET phase = 'switching', switched_at = NULL WHERE account_id = ?",
    )
      .bind(acc.account.id)
      .run();
    const later = t0 + 125_000;
    await advanceMoves(env, later, 5_000);
    await advanceMoves(env, later + DRAIN_MS + 5_000, 10_000);
    expect(await moveOf(acc.account.id)).toMatchObject({ phase: "done" });
    expect(await shardOf(acc.account.id)).toBe(to);
    expect(await rowsIn(databaseNamed(env, from), acc.account.id)).toBe(0);
    expectStatus(await call("/tasks/", { token: acc.admin.token, body: sampleTask(acc) }), 201);
  });
});
