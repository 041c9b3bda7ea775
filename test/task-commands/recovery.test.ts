import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { handleDeadLetterBatch } from "../../src/queues/dead-letters/handler";
import { handleCommandBatch } from "../../src/queues/task-commands/handler";
import { sweepPendingCommands } from "../../src/services/task-commands/recovery";
import { insertTask, taskRow } from "../factories";
import { call, expectStatus, newAccount, type TestAccount } from "../helpers";
import { stored } from "../stored";

let n = 0;
const ext = () => `rec-${Date.now()}-${n++}-${crypto.randomUUID().slice(0, 6)}`;

/** A pending command as `Prefer: respond-async` stores it, whose queue message was then lost. */
async function pendingRow(acc: TestAccount, taskId: string, action: string, taskData = "{}") {
  const e = ext();
  const t = Date.now();
  await stored
    .prepare(
      `INSERT INTO task_commands (id, account_id, task_id, external_id, action, time, task_data, notes, user_id, state, created_at, updated_at)
     VALUES (unhex(?, '-'), unhex(?, '-'), unhex(?, '-'), ?, ?, ?, ?, '', unhex(?, '-'), 'pending', ?, ?)`,
    )
    .bind(crypto.randomUUID(), acc.account.id, taskId, e, action, t, taskData, acc.admin.userId, t, t)
    .run();
  return e;
}

const stateOf = async (acc: TestAccount, e: string) =>
  (await stored
    .prepare(
      "SELECT state, error_message FROM task_commands WHERE account_id = unhex(?, '-') AND external_id = ?",
    )
    .bind(acc.account.id, e)
    .first<{ state: string; error_message: string }>())!;

function message(acc: TestAccount, taskId: string, externalIds: string[]) {
  return {
    actor: {
      userId: acc.admin.userId,
      role: "admin",
      accountId: acc.account.id,
      allowWorkerReordering: false,
      transitActiveLimit: 1,
    },
    taskId,
    externalIds,
    baseUrl: "https://api.test",
  };
}

/** A batch whose consumer dies after `alive` messages: later bodies throw and their retries go nowhere. */
function dyingBatch(queue: string, bodies: unknown[], alive: number) {
  return {
    queue,
    messages: bodies.map((b, i) => ({
      id: `m${i}`,
      timestamp: new Date(),
      attempts: 1,
      get body() {
        if (i >= alive) throw new Error("consumer killed");
        return b;
      },
      ack() {},
      retry() {},
    })),
    ackAll() {},
    retryAll() {},
  };
}

describe("pending asynchronous commands always reach a final state", () => {
  it("the cron sweep applies what a consumer killed mid-batch left pending", async () => {
    const acc = await newAccount();
    const tasks = await Promise.all([0, 1, 2].map(() => insertTask(acc.account.id)));
    const ids = await Promise.all(
      tasks.map(async (t) => [
        await pendingRow(acc, t.id, "update", '{"position":7}'),
        await pendingRow(acc, t.id, "cancel"),
      ]),
    );
    const batch = dyingBatch(
      "fd-task-commands",
      tasks.map((t, i) => message(acc, t.id, ids[i])),
      1,
    );
    await handleCommandBatch(batch as any, env);
    expect((await stateOf(acc, ids[0][1])).state).toBe("accepted");
    expect((await stateOf(acc, ids[1][0])).state).toBe("pending");
    expect((await stateOf(acc, ids[2][1])).state).toBe("pending");

    expect(await sweepPendingCommands(env, { olderThanMs: 0 })).toBeGreaterThanOrEqual(4);
    for (const [i, t] of tasks.entries()) {
      expect((await stateOf(acc, ids[i][0])).state).toBe("accepted");
      expect((await stateOf(acc, ids[i][1])).state).toBe("accepted");
      const row = await taskRow(t.id);
      expect(row.state).toBe("cancelled");
      expect(row.position).toBe(7);
    }
    // A second sweep (or the message's late redelivery) changes nothing.
    await sweepPendingCommands(env, { olderThanMs: 0 });
    await handleCommandBatch(
      dyingBatch("fd-task-commands", [message(acc, tasks[1].id, ids[1])], 1) as any,
      env,
    );
    expect((await taskRow(tasks[1].id)).version).toBe(3);
  });

  it("a synchronous replay of a pending external_id applies it instead of answering the stale row", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id);
    const e = await pendingRow(acc, task.id, "cancel");
    const r = await call("/task_commands/", {
      token: acc.admin.token,
      body: { task: task.url, external_id: e, time: new Date().toISOString(), action: "cancel" },
    });
    expect(r.status).toBeLessThan(300);
    expect(r.body.state).toBe("accepted");
    expect((await taskRow(task.id)).state).toBe("cancelled");
  });

  it("the dead-letter consumer applies or rejects what is left, records why and alerts", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id);
    const ok = await pendingRow(acc, task.id, "cancel");
    const gone = await pendingRow(acc, crypto.randomUUID(), "cancel");
    const batch = dyingBatch(
      "fd-task-commands-dlq",
      [message(acc, task.id, [ok]), message(acc, "00000000-0000-7000-8000-000000000000", [gone])],
      2,
    );
    await handleDeadLetterBatch(batch as any, env);
    expect((await stateOf(acc, ok)).state).toBe("accepted");
    expect((await stateOf(acc, gone)).state).toBe("rejected");
    const { results } = await stored
      .prepare("SELECT queue, reason, body FROM dead_letters WHERE body LIKE ?")
      .bind(`%${acc.account.id}%`)
      .all<any>();
    expect(results).toHaveLength(2);
    expect(results.every((r) => r.queue === "fd-task-commands" && /retries exhausted/.test(r.reason))).toBe(
      true,
    );
  });

  it("rejects a pending command whose sender lost their role", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id);
    const e = await pendingRow(acc, task.id, "cancel");
    await stored
      .prepare("UPDATE account_roles SET is_active = 0 WHERE user_id = ?")
      .bind(acc.admin.userId)
      .run();
    await sweepPendingCommands(env, { olderThanMs: 0 });
    const s = await stateOf(acc, e);
    expect(s.state).toBe("rejected");
    expect(s.error_message).toMatch(/no longer has an active role/);
    expectStatus(await call("/users/me/", { token: acc.admin.token }), 401);
  });
});
