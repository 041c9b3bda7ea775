import {
  createMessageBatch,
  evictDurableObject,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { taskStub } from "../../src/durable-objects/task/client";
import { handleCommandBatch } from "../../src/queues/task-commands/handler";
import { rearmOverdueSchedules } from "../../src/services/task-commands";
import { insertTask, taskRow } from "../factories";
import { addUser, call, defineMetafields, expectStatus, newAccount, storedEvents } from "../helpers";
import { stored } from "../stored";

let n = 0;
const ext = () => `ext-${Date.now()}-${n++}-${crypto.randomUUID().slice(0, 6)}`;
const now = () => new Date().toISOString();

describe("task commands: the interface's cases", () => {
  it("rejects accept on an accepted task, naming the state and the action", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const task = await insertTask(acc.account.id, { state: "accepted", assigneeId: worker.userId });
    const r = await call("/task_commands/", {
      token: worker.token,
      body: { task: task.url, external_id: ext(), time: now(), action: "accept" },
    });
    expectStatus(r, 201);
    expect(r.body).toMatchObject({
      state: "rejected",
      error_message: 'Cannot accept a task in state "accepted".',
      accepted_at: null,
      notes: "",
      task_data: {},
      task: task.url,
      user: worker.user,
      account: acc.account.url,
    });
    expect(r.body.rejected_at).toEqual(expect.any(String));
    expect((await taskRow(task.id)).state).toBe("accepted");
  });

  it("accepts a valid move: fields, empty error_message, task state written", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const task = await insertTask(acc.account.id, { state: "assigned", assigneeId: worker.userId });
    const e = ext();
    const r = await call("/task_commands/", {
      token: worker.token,
      body: {
        task: task.url,
        external_id: e,
        time: "2026-01-01T10:00:00+02:00",
        action: "accept",
        notes: "on my way",
        location: { type: "Point", coordinates: [24.75, 59.43] },
      },
    });
    expectStatus(r, 201);
    expect(r.body).toMatchObject({
      state: "accepted",
      error_message: "",
      rejected_at: null,
      external_id: e,
      action: "accept",
      notes: "on my way",
      time: "2026-01-01T08:00:00.000Z",
    });
    expect(r.body.url).toBe(`https://api.test/task_commands/${r.body.id}/`);
    expect((await taskRow(task.id)).state).toBe("accepted");
    const got = await call(`/task_commands/${r.body.id}/`, { token: worker.token });
    expectStatus(got, 200);
    expect(got.body).toEqual(r.body);
  });

  it("restarts a failed task to assigned (with assignee) or unassigned", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const withAssignee = await insertTask(acc.account.id, { state: "failed", assigneeId: worker.userId });
    const without = await insertTask(acc.account.id, { state: "failed" });
    const r = await call("/task_commands/", {
      token: acc.admin.token,
      body: [
        { task: withAssignee.url, external_id: ext(), time: now(), action: "restart" },
        { task: without.url, external_id: ext(), time: now(), action: "restart" },
      ],
    });
    expectStatus(r, 201);
    expect(r.body.map((c: any) => c.state)).toEqual(["accepted", "accepted"]);
    expect((await taskRow(withAssignee.id)).state).toBe("assigned");
    expect((await taskRow(without.id)).state).toBe("unassigned");
  });

  it("assigns and unassigns a scheduled task whatever its scheduled time", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const task = await insertTask(acc.account.id, {
      state: "scheduled",
      scheduledTime: Date.now() + 7 * 86400_000,
    });
    const a = await call("/task_commands/", {
      token: acc.admin.token,
      body: { task: task.url, external_id: ext(), time: now(), action: "assign", assignee: worker.user },
    });
    expect(a.body.state).toBe("accepted");
    let row = await taskRow(task.id);
    expect(row).toMatchObject({ state: "scheduled", assignee_id: worker.userId });
    const u = await call("/task_commands/", {
      token: acc.admin.token,
      body: { task: task.url, external_id: ext(), time: now(), action: "unassign" },
    });
    expect(u.body.state).toBe("accepted");
    row = await taskRow(task.id);
    expect(row).toMatchObject({ state: "scheduled", assignee_id: null });
  });

  it("rejects a worker's command on a task that is not theirs, and reordering unless the account allows it", async () => {
    const acc = await newAccount();
    const w1 = await addUser(acc, "worker");
    const w2 = await addUser(acc, "worker");
    const task = await insertTask(acc.account.id, { state: "assigned", assigneeId: w1.userId });
    const r = await call("/task_commands/", {
      token: w2.token,
      body: { task: task.url, external_id: ext(), time: now(), action: "accept" },
    });
    expect(r.body.state).toBe("rejected");
    const reorder = await call("/task_commands/", {
      token: w1.token,
      body: { task: task.url, external_id: ext(), time: now(), action: "update", task_data: { position: 3 } },
    });
    expect(reorder.body.state).toBe("rejected");
    await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { feature_allow_worker_reordering: true },
    });
    const w1b = await call("/task_commands/", {
      token: w1.token,
      body: { task: task.url, external_id: ext(), time: now(), action: "update", task_data: { position: 3 } },
    });
    // The flag is read from the token's account snapshot at each request.
    expect(w1b.body.state).toBe("accepted");
    expect((await taskRow(task.id)).position).toBe(3);
  });

  it("applies task_data on update: position, scheduled_time, duration, metafields", async () => {
    const acc = await newAccount();
    await defineMetafields(acc, "tasks", { door: "string" });
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    const r = await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: task.url,
        external_id: ext(),
        time: now(),
        action: "update",
        task_data: {
          position: 1.5,
          scheduled_time: "2030-01-01T12:00:00Z",
          duration: "01:30:00",
          metafields: { door: "B" },
        },
      },
    });
    expect(r.body.state).toBe("accepted");
    expect(r.body.task_data).toEqual({
      position: 1.5,
      scheduled_time: "2030-01-01T12:00:00.000Z",
      duration: "01:30:00",
      metafields: { door: "B" },
    });
    const row = await taskRow(task.id);
    expect(row).toMatchObject({
      position: 1.5,
      scheduled_time: Date.parse("2030-01-01T12:00:00Z"),
      duration_seconds: 5400,
    });
    expect(JSON.parse(row.metafields)).toEqual({ door: "B" });
  });
});

describe("task_data.address", () => {
  it("geocodes an address sent with an update command (from the queue)", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    const r = await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: task.url,
        external_id: ext(),
        time: now(),
        action: "update",
        task_data: { address: { raw_address: "Paris, France" } },
      },
    });
    expect(r.body.state).toBe("accepted");
    let got: any = null;
    for (let i = 0; i < 100; i++) {
      got = await call(`/tasks/${task.id}/`, { token: acc.admin.token });
      if (got.body.address.geocoded_at) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(got.body.address).toMatchObject({ raw_address: "Paris, France", geocoding_provider: "offline" });
    expect(got.body.address.location.coordinates[0]).toBeCloseTo(2.35, 0);
  });
});

describe("validation", () => {
  it("answers 400 with errors aligned to the batch, and applies nothing", async () => {
    const acc = await newAccount();
    const other = await newAccount();
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    const foreign = await insertTask(other.account.id, { state: "unassigned" });
    const r = await call("/task_commands/", {
      token: acc.admin.token,
      body: [
        { task: task.url, external_id: ext(), time: now(), action: "cancel" },
        { task: foreign.url, external_id: ext(), time: now(), action: "cancel" },
        { task: task.url, external_id: ext(), time: now(), action: "assign" },
        { task: task.url, external_id: ext(), time: "yesterday", action: "cancel" },
      ],
    });
    expectStatus(r, 400);
    expect(r.body).toHaveLength(4);
    expect(r.body[0]).toEqual({});
    expect(r.body[1]).toEqual({ task: ["Invalid hyperlink - Object does not exist."] });
    expect(r.body[2]).toEqual({ assignee: ["This field is required for assign."] });
    expect(Object.keys(r.body[3])).toEqual(["time"]);
    expect((await taskRow(task.id)).state).toBe("unassigned");
    const shape = await call("/task_commands/", {
      token: acc.admin.token,
      body: [
        { task: task.url, external_id: ext(), time: now(), action: "cancel" },
        { task: task.url, time: now(), action: "fly" },
      ],
    });
    expectStatus(shape, 400);
    expect(shape.body[0]).toEqual({});
    expect(Object.keys(shape.body[1]).sort()).toEqual(["action", "external_id"]);
    expect((await taskRow(task.id)).state).toBe("unassigned");
  });

  it("answers a single command on another account's task, or a missing one, with a field error", async () => {
    const acc = await newAccount();
    const other = await newAccount();
    const foreign = await insertTask(other.account.id, { state: "unassigned" });
    // The foreign task's object knows its task (a command of its own account went through).
    const own = await call("/task_commands/", {
      token: other.admin.token,
      body: {
        task: foreign.url,
        external_id: ext(),
        time: now(),
        action: "update",
        task_data: { position: 1 },
      },
    });
    expectStatus(own, 201);
    for (const url of [foreign.url, `https://api.test/tasks/${crypto.randomUUID()}/`]) {
      const r = await call("/task_commands/", {
        token: acc.admin.token,
        body: { task: url, external_id: ext(), time: now(), action: "cancel" },
      });
      expectStatus(r, 400);
      expect(r.body).toEqual({ task: ["Invalid hyperlink - Object does not exist."] });
    }
    expect((await taskRow(foreign.id)).state).toBe("unassigned");
    const count = await stored
      .prepare("SELECT COUNT(*) AS n FROM task_commands WHERE account_id = unhex(?, '-')")
      .bind(acc.account.id)
      .first<{ n: number }>();
    expect(count!.n).toBe(0);
  });

  it("refuses more than 500 commands per request, naming the limit, applying nothing", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id);
    const body = Array.from({ length: 501 }, () => ({
      task: task.url,
      external_id: ext(),
      time: now(),
      action: "update",
      task_data: { position: 1 },
    }));
    const r = await call("/task_commands/", { token: acc.admin.token, body });
    expectStatus(r, 400);
    expect(JSON.stringify(r.body)).toContain("500");
    const count = await stored
      .prepare("SELECT COUNT(*) AS n FROM task_commands WHERE task_id = unhex(?, '-')")
      .bind(task.id)
      .first<{ n: number }>();
    expect(count!.n).toBe(0);
  });
});

describe("idempotency", () => {
  it("replays a stored command (200) without applying it again; reuse for another action is a field error", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    const body = {
      task: task.url,
      external_id: ext(),
      time: now(),
      action: "update",
      task_data: { position: 1 },
    };
    const first = await call("/task_commands/", { token: acc.admin.token, body });
    expectStatus(first, 201);
    const v = (await taskRow(task.id)).version;
    const again = await call("/task_commands/", { token: acc.admin.token, body });
    expectStatus(again, 200);
    expect(again.body).toEqual(first.body);
    expect((await taskRow(task.id)).version).toBe(v);
    const batchReplay = await call("/task_commands/", { token: acc.admin.token, body: [body] });
    expectStatus(batchReplay, 200);
    const misuse = await call("/task_commands/", {
      token: acc.admin.token,
      body: { ...body, action: "cancel" },
    });
    expectStatus(misuse, 400);
    expect(misuse.body.external_id[0]).toMatch(/already exists/);
  });

  it("applies one new command exactly once under 50 concurrent replays", async () => {
    const acc = await newAccount();
    const integration = await addUser(acc, "integration");
    await call(`/accounts/${acc.account.id}/`, { method: "PATCH", token: acc.admin.token, body: {} });
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    const body = {
      task: task.url,
      external_id: ext(),
      time: now(),
      action: "update",
      task_data: { position: 7 },
    };
    // Spread over several tokens so the rate limit (20/s per token) does not interfere.
    const tokens = [acc.admin.token, integration.token, (await addUser(acc, "manager")).token];
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) => call("/task_commands/", { token: tokens[i % 3], body })),
    );
    const served = replies.filter((r) => r.status === 200 || r.status === 201);
    expect(served.length).toBeGreaterThan(0);
    expect(new Set(served.map((r) => r.body.id)).size).toBe(1);
    expect(served.filter((r) => r.status === 201).length).toBe(1);
    const rows = await stored
      .prepare("SELECT COUNT(*) AS n FROM task_commands WHERE external_id = ?")
      .bind(body.external_id)
      .first<{ n: number }>();
    expect(rows!.n).toBe(1);
    expect((await taskRow(task.id)).version).toBe(2);
  });
});

describe("transit/active limit", () => {
  it("accepts exactly one of 20 concurrent transit commands on 20 tasks of one worker (limit 1)", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const tasks = await Promise.all(
      Array.from({ length: 20 }, () =>
        insertTask(acc.account.id, { state: "assigned", assigneeId: worker.userId }),
      ),
    );
    const body = tasks.map((t) => ({ task: t.url, external_id: ext(), time: now(), action: "transit" }));
    const r = await call("/task_commands/", { token: acc.admin.token, body });
    expectStatus(r, 201);
    const accepted = r.body.filter((c: any) => c.state === "accepted");
    expect(accepted).toHaveLength(1);
    expect(
      r.body.filter((c: any) => c.state === "rejected").every((c: any) => /limit/i.test(c.error_message)),
    ).toBe(true);
    const { results } = await stored
      .prepare("SELECT COUNT(*) AS n FROM tasks WHERE account_id = ? AND state IN ('transit','active')")
      .bind(acc.account.id)
      .all<{ n: number }>();
    expect(results[0].n).toBe(1);
  });

  it("has no limit when the account's limit is null", async () => {
    const acc = await newAccount();
    await call(`/accounts/${acc.account.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { transit_active_limit: null },
    });
    const worker = await addUser(acc, "worker");
    const tasks = await Promise.all(
      Array.from({ length: 3 }, () =>
        insertTask(acc.account.id, { state: "assigned", assigneeId: worker.userId }),
      ),
    );
    const r = await call("/task_commands/", {
      token: acc.admin.token,
      body: tasks.map((t) => ({ task: t.url, external_id: ext(), time: now(), action: "activate" })),
    });
    expect(r.body.map((c: any) => c.state)).toEqual(["accepted", "accepted", "accepted"]);
  });
});

describe("batches", () => {
  it("keeps the order per task and answers in input order across tasks", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const a = await insertTask(acc.account.id, { state: "unassigned" });
    const b = await insertTask(acc.account.id, { state: "unassigned" });
    const seq = (t: { url: string }, action: string, extra = {}) => ({
      task: t.url,
      external_id: ext(),
      time: now(),
      action,
      ...extra,
    });
    const body = [
      seq(a, "assign", { assignee: worker.user }),
      seq(b, "assign", { assignee: worker.user }),
      seq(a, "accept"),
      seq(b, "cancel"),
      seq(a, "transit"),
      seq(b, "accept"),
      seq(a, "complete"),
    ];
    const r = await call("/task_commands/", { token: acc.admin.token, body });
    expectStatus(r, 201);
    expect(r.body.map((c: any) => c.external_id)).toEqual(body.map((c) => c.external_id));
    // accept by an admin is rejected (assignee only), so transit goes from assigned.
    expect(r.body.map((c: any) => c.state)).toEqual([
      "accepted",
      "accepted",
      "rejected",
      "accepted",
      "accepted",
      "rejected",
      "accepted",
    ]);
    expect((await taskRow(a.id)).state).toBe("completed");
    expect((await taskRow(b.id)).state).toBe("cancelled");
  });

  it("applies a full batch of 500 commands to one task, in order", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    const body = Array.from({ length: 500 }, (_, i) => ({
      task: task.url,
      external_id: ext(),
      time: now(),
      action: "update",
      task_data: { position: i },
    }));
    const r = await call("/task_commands/", { token: acc.admin.token, body });
    expectStatus(r, 201);
    expect(r.body.every((c: any) => c.state === "accepted")).toBe(true);
    const row = await taskRow(task.id);
    expect(row.version).toBe(501);
    expect(row.position).toBe(499);
  });

  it("records events in the outbox with each outcome", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    await call("/task_commands/", {
      token: acc.admin.token,
      body: [
        { task: task.url, external_id: ext(), time: now(), action: "cancel" },
        { task: task.url, external_id: ext(), time: now(), action: "cancel" },
      ],
    });
    const { results } = await stored
      .prepare("SELECT type FROM events WHERE account_id = unhex(?, '-') ORDER BY id")
      .bind(acc.account.id)
      .all<{ type: string }>();
    expect(results.map((e) => e.type)).toEqual([
      "task_command.accepted",
      "task.state_changed",
      "task_command.rejected",
    ]);
  });
});

describe("asynchronous mode", () => {
  it("answers 202 with pending commands and applies them from the queue", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    const r = await call("/task_commands/", {
      token: acc.admin.token,
      headers: { Prefer: "respond-async" },
      body: [
        { task: task.url, external_id: ext(), time: now(), action: "update", task_data: { position: 2 } },
        { task: task.url, external_id: ext(), time: now(), action: "cancel" },
      ],
    });
    expectStatus(r, 202);
    expect(r.body.map((c: any) => c.state)).toEqual(["pending", "pending"]);
    let states: string[] = [];
    for (let i = 0; i < 100; i++) {
      const got = await Promise.all(
        r.body.map((c: any) => call(`/task_commands/${c.id}/`, { token: acc.admin.token })),
      );
      states = got.map((g) => g.body.state);
      if (!states.includes("pending")) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(states).toEqual(["accepted", "accepted"]);
    expect((await taskRow(task.id)).state).toBe("cancelled");
  });

  it("never applies a command twice when the consumer is redelivered the same message", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    const me = await call("/users/me/", { token: acc.admin.token });
    const e = ext();
    await stored
      .prepare(
        `INSERT INTO task_commands (id, account_id, task_id, external_id, action, time, task_data, notes, user_id, state, created_at, updated_at)
       VALUES (unhex(?, '-'), unhex(?, '-'), unhex(?, '-'), ?, 'update', ?, '{"position":5}', '', unhex(?, '-'), 'pending', ?, ?)`,
      )
      .bind(crypto.randomUUID(), acc.account.id, task.id, e, Date.now(), me.body.id, Date.now(), Date.now())
      .run();
    const body = {
      actor: {
        userId: me.body.id,
        role: "admin",
        accountId: acc.account.id,
        allowWorkerReordering: false,
        transitActiveLimit: 1,
      },
      taskId: task.id,
      externalIds: [e],
      baseUrl: "https://api.test",
    };
    for (let i = 0; i < 3; i++) {
      const batch = createMessageBatch("fd-task-commands", [
        { id: `m${i}`, timestamp: new Date(), attempts: i + 1, body },
      ]);
      await handleCommandBatch(batch as any, env);
      const result = await getQueueResult(batch, {
        waitUntil: () => {},
        passThroughOnException: () => {},
      } as any).catch(() => null);
      void result;
    }
    const row = await taskRow(task.id);
    expect(row.version).toBe(2);
    expect(row.position).toBe(5);
  });
});

describe("Durable Object eviction", () => {
  it("converges when the TaskDO is evicted in the middle of a batch and the batch is retried", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    const body = Array.from({ length: 60 }, (_, i) => ({
      task: task.url,
      external_id: ext(),
      time: now(),
      action: "update",
      task_data: { position: i },
    }));
    const inFlight = call("/task_commands/", { token: acc.admin.token, body });
    await new Promise((r) => setTimeout(r, 30));
    await evictDurableObject(taskStub(env, task.id)).catch(() => {});
    await inFlight.catch(() => null);
    const retry = await call("/task_commands/", { token: acc.admin.token, body });
    expect([200, 201]).toContain(retry.status);
    expect(retry.body.map((c: any) => c.state).every((s: string) => s === "accepted")).toBe(true);
    const count = await stored
      .prepare("SELECT COUNT(*) AS n FROM task_commands WHERE task_id = unhex(?, '-')")
      .bind(task.id)
      .first<{ n: number }>();
    expect(count!.n).toBe(60);
    const row = await taskRow(task.id);
    expect(row.version).toBe(61);
    expect(row.position).toBe(59);
  });
});

describe("scheduled tasks", () => {
  it("re-arms, from the cron, a scheduled task whose alarm was never armed", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id, {
      state: "scheduled",
      scheduledTime: Date.now() - 120_000,
    });
    expect(await rearmOverdueSchedules(env)).toBeGreaterThanOrEqual(1);
    // Armed for "now": it may already have fired by itself; otherwise run it.
    await runDurableObjectAlarm(taskStub(env, task.id));
    for (let i = 0; i < 50 && (await taskRow(task.id)).state === "scheduled"; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect((await taskRow(task.id)).state).toBe("unassigned");
    const results = (await storedEvents({ objectId: task.id })).filter(
      (e) => e.type === "task.state_changed",
    );
    expect(results).toHaveLength(1);
  });

  it("re-arms the alarm when an update command moves the scheduled time", async () => {
    const acc = await newAccount();
    const at = Date.now() + 3600_000;
    const task = await insertTask(acc.account.id, {
      state: "scheduled",
      scheduledTime: Date.now() + 86400_000,
    });
    const r = await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: task.url,
        external_id: ext(),
        time: now(),
        action: "update",
        task_data: { scheduled_time: new Date(at).toISOString() },
      },
    });
    expect(r.body.state).toBe("accepted");
    const alarm = await runInDurableObject(taskStub(env, task.id), (_instance, state) =>
      state.storage.getAlarm(),
    );
    expect(alarm).toBe(at);
    expect((await taskRow(task.id)).state).toBe("scheduled");
  });

  it("moves a scheduled task at its time by an alarm, recorded as a system command", async () => {
    const acc = await newAccount();
    const worker = await addUser(acc, "worker");
    const task = await insertTask(acc.account.id, {
      state: "scheduled",
      assigneeId: worker.userId,
      scheduledTime: Date.now() - 1000,
    });
    const stub = taskStub(env, task.id);
    await stub.armSchedule({ accountId: acc.account.id, taskId: task.id, at: Date.now() + 60_000 });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await taskRow(task.id)).state).toBe("assigned");
    const list = await call(`/task_commands/?task=${task.id}`, { token: acc.admin.token });
    expect(list.body.results).toHaveLength(1);
    expect(list.body.results[0]).toMatchObject({ user: null, state: "accepted", action: "assign" });
  });
});
