import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { taskStub, taskWriter } from "../../src/durable-objects/task/client";
import { uuidv7 } from "../../src/lib/ids";
import { commitRuns as commitAt, type GroupPlan, planGroup } from "../../src/services/task-commands/apply";
import type { Actor, CommandInput } from "../../src/services/task-commands/types";
import { adminActor, commandInput, insertTask, taskRow } from "../factories";
import { BASE, call, expectStatus, newAccount, storedEvents } from "../helpers";
import { dbOf, stored } from "../stored";

// A batch's commands over many tasks: each task's object decides its run, and the request
// writes the runs together (services/task-commands/apply/group.ts), each guarded as its own
// batch would be.

const commandsOf = (taskId: string) =>
  stored
    .prepare("SELECT external_id, state FROM task_commands WHERE task_id = unhex(?, '-') ORDER BY id")
    .bind(taskId)
    .all<{ external_id: string; state: string }>()
    .then((r) => r.results);

/** Whether each entry's run is stored (commitRuns answers the time it was written at, or null). */
const commitRuns = async (...args: Parameters<typeof commitAt>) =>
  (await commitAt(...args)).map((at) => at !== null);

/** An account's admin and three tasks, with a first command for the first of them. */
async function threeTasks() {
  const acc = await newAccount();
  const actor = adminActor(acc.account.id, acc.admin.userId);
  const [a, b, c] = await Promise.all([1, 2, 3].map(() => insertTask(acc.account.id)));
  return { acc, actor, a, b, c, ca: commandInput(a.id, "update", { position: 1 }) };
}

async function planned(actor: Actor, taskId: string, cmds: CommandInput[]): Promise<GroupPlan> {
  const plan = planGroup(actor, await taskRow(taskId), cmds, BASE);
  if (!plan) throw new Error("no plan");
  return plan;
}

describe("group commit of a batch's runs", () => {
  it("writes the runs of several tasks in one transaction, each as its own batch would", async () => {
    const acc = await newAccount();
    const actor = adminActor(acc.account.id, acc.admin.userId);
    const tasks = await Promise.all([1, 2, 3].map(() => insertTask(acc.account.id)));
    const cmds = tasks.map((t, i) => [
      commandInput(t.id, "update", { position: 10 + i }),
      commandInput(t.id, "cancel"),
      commandInput(t.id, "update", { position: 20 + i }),
    ]);
    const plans = await Promise.all(tasks.map((t, i) => planned(actor, t.id, cmds[i])));
    const written = await commitRuns(
      await dbOf(acc.account.id),
      acc.account.id,
      plans.map((p) => ({ run: p.run, carried: [] })),
    );
    expect(written).toEqual([true, true, true]);
    for (const [i, t] of tasks.entries()) {
      expect(await taskRow(t.id)).toMatchObject({
        state: "cancelled",
        position: 10 + i,
        version: 3,
        last_command_id: cmds[i][1].id,
      });
      expect((await commandsOf(t.id)).map((c) => c.state)).toEqual(["accepted", "accepted", "rejected"]);
      const events = (await storedEvents({ accountId: acc.account.id })).filter(
        (e) => (e.data.task?.id ?? e.data.id) === t.id,
      );
      expect(events.map((e) => e.type)).toEqual([
        "task_command.accepted",
        "task_command.accepted",
        "task.state_changed",
        "task_command.rejected",
      ]);
      // Every payload reads back whole (each run's events are packed against one of them).
      expect(events[0].data).toMatchObject({ external_id: cmds[i][0].externalId, state: "accepted" });
      expect(events[0].data.task).toMatchObject({ position: 10 + i, state: "unassigned" });
      expect(events[2].data).toMatchObject({ id: t.id, state: "cancelled" });
      expect(events[3].data).toMatchObject({ external_id: cmds[i][2].externalId, state: "rejected" });
    }
  });

  it("stamps the events' ids and time when the run is written, not when it was decided", async () => {
    const acc = await newAccount();
    const actor = adminActor(acc.account.id, acc.admin.userId);
    const t = await insertTask(acc.account.id);
    const plan = await planned(actor, t.id, [
      commandInput(t.id, "update", { position: 1 }),
      commandInput(t.id, "cancel"),
    ]);
    await new Promise((res) => setTimeout(res, 30));
    const before = Date.now();
    expect(
      await commitRuns(await dbOf(acc.account.id), acc.account.id, [{ run: plan.run, carried: [] }]),
    ).toEqual([true]);
    const events = await storedEvents({ accountId: acc.account.id });
    expect(events).toHaveLength(3);
    // uuidv7: the first 48 bits are the time in ms (RFC 9562 §5.7).
    const idTime = (id: string) => Number.parseInt(id.replace(/-/g, "").slice(0, 12), 16);
    for (const e of events) {
      expect(idTime(e.id)).toBeGreaterThanOrEqual(before);
      expect(e.created_at).toBeGreaterThanOrEqual(before);
    }
    // Still one run packed against one of its events: every payload reads back.
    expect(events.map((e) => e.type)).toEqual([
      "task_command.accepted",
      "task_command.accepted",
      "task.state_changed",
    ]);
    expect(events[2].data).toMatchObject({ id: t.id, state: "cancelled" });
  });

  it("splits many runs over several transactions and writes every one", async () => {
    const acc = await newAccount();
    const actor = adminActor(acc.account.id, acc.admin.userId);
    const tasks = await Promise.all(Array.from({ length: 130 }, () => insertTask(acc.account.id)));
    const plans = await Promise.all(
      tasks.map((t, i) => planned(actor, t.id, [commandInput(t.id, "update", { position: i })])),
    );
    const db = await dbOf(acc.account.id);
    const written = await commitRuns(
      db,
      acc.account.id,
      plans.map((p) => ({ run: p.run, carried: [] })),
    );
    expect(written.every(Boolean)).toBe(true);
    const { results } = await stored
      .prepare(
        "SELECT COUNT(*) AS n, SUM(version) AS versions FROM tasks WHERE account_id = ? AND last_command_id IS NOT NULL",
      )
      .bind(acc.account.id)
      .all<{ n: number; versions: number }>();
    expect(results[0]).toEqual({ n: 130, versions: 260 });
    expect(await storedEvents({ accountId: acc.account.id })).toHaveLength(130);
  });

  it("writes nothing of a run planned on a version another writer has moved, and the others whole", async () => {
    const acc = await newAccount();
    const actor = adminActor(acc.account.id, acc.admin.userId);
    const [a, b] = await Promise.all([insertTask(acc.account.id), insertTask(acc.account.id)]);
    const plans = [
      await planned(actor, a.id, [commandInput(a.id, "update", { position: 1 })]),
      await planned(actor, b.id, [commandInput(b.id, "update", { position: 2 })]),
    ];
    // Between the plans and the write, an order upsert (say) moves task a.
    await stored.prepare("UPDATE tasks SET version = version + 1 WHERE id = ?").bind(a.id).run();
    const written = await commitRuns(
      await dbOf(acc.account.id),
      acc.account.id,
      plans.map((p) => ({ run: p.run, carried: [] })),
    );
    expect(written).toEqual([false, true]);
    expect(await taskRow(a.id)).toMatchObject({ version: 2, position: null });
    expect(await commandsOf(a.id)).toEqual([]);
    expect(await taskRow(b.id)).toMatchObject({ version: 2, position: 2 });
    expect(await commandsOf(b.id)).toHaveLength(1);
    const events = await storedEvents({ accountId: acc.account.id });
    expect(events.map((e) => e.data.task?.id)).toEqual([b.id]);
  });

  it("writes nothing of a run whose external_id another request stored meanwhile, and the others whole", async () => {
    const { acc, actor, a, b, c, ca } = await threeTasks();
    const plans = [
      await planned(actor, a.id, [ca]),
      await planned(actor, b.id, [commandInput(b.id, "update", { position: 2 })]),
    ];
    // The same external_id, sent meanwhile for task c in another request, is stored first.
    const other = await call("/task_commands/", {
      token: acc.admin.token,
      body: { task: c.url, external_id: ca.externalId, time: new Date().toISOString(), action: "cancel" },
    });
    expectStatus(other, 201);
    const written = await commitRuns(
      await dbOf(acc.account.id),
      acc.account.id,
      plans.map((p) => ({ run: p.run, carried: [] })),
    );
    expect(written).toEqual([false, true]);
    expect(await taskRow(a.id)).toMatchObject({ version: 1, position: null });
    expect(await commandsOf(a.id)).toEqual([]);
    expect(await taskRow(b.id)).toMatchObject({ version: 2, position: 2 });
    expect((await commandsOf(b.id)).map((r) => r.state)).toEqual(["accepted"]);
  });

  it("rolls the transaction back whole when two of its runs carry the same new external_id", async () => {
    const { acc, actor, a, b, c, ca } = await threeTasks();
    const plans = [
      await planned(actor, a.id, [ca]),
      await planned(actor, b.id, [
        { ...commandInput(b.id, "update", { position: 2 }), externalId: ca.externalId },
      ]),
      await planned(actor, c.id, [commandInput(c.id, "update", { position: 3 })]),
    ];
    const written = await commitRuns(
      await dbOf(acc.account.id),
      acc.account.id,
      plans.map((p) => ({ run: p.run, carried: [] })),
    );
    expect(written).toEqual([false, false, false]);
    for (const t of [a, b, c]) {
      expect(await taskRow(t.id)).toMatchObject({ version: 1, position: null });
      expect(await commandsOf(t.id)).toEqual([]);
    }
  });

  it("writes a run decided on an earlier, unwritten one with it, whichever request reaches D1 first", async () => {
    const acc = await newAccount();
    const actor = adminActor(acc.account.id, acc.admin.userId);
    const t = await insertTask(acc.account.id);
    const db = await dbOf(acc.account.id);
    const first = await planned(actor, t.id, [
      commandInput(t.id, "update", { position: 1 }),
      commandInput(t.id, "update", { position: 2 }),
    ]);
    // The object decides the second request's run on the first one's outcome.
    const second = planGroup(
      actor,
      first.task,
      [commandInput(t.id, "cancel"), commandInput(t.id, "update", { position: 3 })],
      BASE,
    );
    if (!second) throw new Error("no plan");
    expect(await commitRuns(db, acc.account.id, [{ run: second.run, carried: [first.run] }])).toEqual([true]);
    expect(await taskRow(t.id)).toMatchObject({
      version: 4,
      position: 2,
      state: "cancelled",
      last_command_id: second.run.lastId,
    });
    // The first request's own write finds its run stored, and writes nothing again.
    expect(await commitRuns(db, acc.account.id, [{ run: first.run, carried: [] }])).toEqual([true]);
    expect((await commandsOf(t.id)).map((c) => c.state)).toEqual([
      "accepted",
      "accepted",
      "accepted",
      "rejected",
    ]);
    const events = await storedEvents({ accountId: acc.account.id });
    expect(events.map((e) => e.type)).toEqual([
      "task_command.accepted",
      "task_command.accepted",
      "task_command.accepted",
      "task.state_changed",
      "task_command.rejected",
    ]);
    expect(events.map((e) => e.data.task?.position ?? e.data.position)).toEqual([1, 2, 2, 2, 2]);
    expect(await taskRow(t.id)).toMatchObject({ version: 4, last_command_id: second.run.lastId });
  });

  it("writes nothing of a run decided on an earlier one that another writer pre-empted", async () => {
    const acc = await newAccount();
    const actor = adminActor(acc.account.id, acc.admin.userId);
    const t = await insertTask(acc.account.id);
    const first = await planned(actor, t.id, [commandInput(t.id, "update", { position: 1 })]);
    const second = planGroup(actor, first.task, [commandInput(t.id, "update", { position: 2 })], BASE)!;
    await stored.prepare("UPDATE tasks SET version = version + 1 WHERE id = ?").bind(t.id).run();
    const db = await dbOf(acc.account.id);
    expect(await commitRuns(db, acc.account.id, [{ run: second.run, carried: [first.run] }])).toEqual([
      false,
    ]);
    expect(await commandsOf(t.id)).toEqual([]);
    expect(await storedEvents({ accountId: acc.account.id })).toEqual([]);
    // Nor does a run decided on the right version but after another last command.
    const again = await planned(actor, t.id, [commandInput(t.id, "update", { position: 3 })]);
    await stored.prepare("UPDATE tasks SET last_command_id = ? WHERE id = ?").bind(uuidv7(), t.id).run();
    expect(await commitRuns(db, acc.account.id, [{ run: again.run, carried: [] }])).toEqual([false]);
    expect(await commandsOf(t.id)).toEqual([]);
  });

  it("an object whose last run was never written re-reads the task before its next write", async () => {
    const acc = await newAccount();
    const actor = adminActor(acc.account.id, acc.admin.userId);
    const t = await insertTask(acc.account.id);
    // The object decides a run for a request that then never writes it (it failed): cancelled,
    // version 2, as the object now believes.
    const decided = await taskWriter(env, t.id).planCommands({
      actor,
      taskId: t.id,
      commands: [commandInput(t.id, "cancel")],
      baseUrl: BASE,
      task: await taskRow(t.id),
    });
    expect(decided.plan?.task).toMatchObject({ state: "cancelled", version: 2 });
    // Another writer moves the version to the same number, the task still unassigned.
    await stored.prepare("UPDATE tasks SET version = version + 1 WHERE id = ?").bind(t.id).run();
    const r = await call("/task_commands/", {
      token: acc.admin.token,
      body: {
        task: t.url,
        external_id: `after-${crypto.randomUUID()}`,
        time: new Date().toISOString(),
        action: "update",
        task_data: { position: 7 },
      },
    });
    expectStatus(r, 201);
    // Decided on the task as stored, not on the run that never was (it would refuse an update
    // of a cancelled task).
    expect(r.body.state).toBe("accepted");
    expect(await taskRow(t.id)).toMatchObject({ state: "unassigned", position: 7, version: 3 });
  });

  it("through the API: concurrent batches over the same tasks apply every command once, in some order", async () => {
    const acc = await newAccount();
    const tasks = await Promise.all([1, 2, 3].map(() => insertTask(acc.account.id)));
    let n = 0;
    const batch = () =>
      tasks.flatMap((t) =>
        [1, 2].map(() => ({
          task: t.url,
          external_id: `c-${n}-${crypto.randomUUID()}`,
          time: new Date().toISOString(),
          action: "update",
          task_data: { position: ++n },
        })),
      );
    const replies = await Promise.all(
      [1, 2, 3, 4, 5].map(() => call("/task_commands/", { token: acc.admin.token, body: batch() })),
    );
    for (const r of replies) {
      expectStatus(r, 201);
      expect(r.body.every((c: { state: string }) => c.state === "accepted")).toBe(true);
    }
    for (const t of tasks) {
      const row = await taskRow(t.id);
      expect(row.version).toBe(11);
      expect(await commandsOf(t.id)).toHaveLength(10);
      const events = (await storedEvents({ accountId: acc.account.id })).filter(
        (e) => e.data.task?.id === t.id,
      );
      expect(events).toHaveLength(10);
      // Each event shows the task as its command left it: versions 2..11, each once.
      expect(events.map((e) => e.data.task.position).sort((a, b) => a - b)).toEqual(
        events.map((e) => e.data.external_id && e.data.task_data.position).sort((a, b) => a - b),
      );
      const last = events[events.length - 1];
      expect(row.position).toBe(last.data.task.position);
    }
  });

  it("through the API: a run its object planned on a stale task goes back to the object and applies once", async () => {
    const acc = await newAccount();
    const [a, b] = await Promise.all([insertTask(acc.account.id), insertTask(acc.account.id)]);
    const send = (items: unknown[]) => call("/task_commands/", { token: acc.admin.token, body: items });
    const item = (t: { url: string }, position: number) => ({
      task: t.url,
      external_id: `api-${crypto.randomUUID()}`,
      time: new Date().toISOString(),
      action: "update",
      task_data: { position },
    });
    // Task a's object remembers the task as its last write left it...
    expectStatus(await send([item(a, 1), item(a, 2)]), 201);
    expect(await taskRow(a.id)).toMatchObject({ version: 3, position: 2 });
    // ... and another writer moves it behind the object's back.
    await stored.prepare("UPDATE tasks SET version = version + 1 WHERE id = ?").bind(a.id).run();
    const batch = [item(a, 3), item(b, 4), item(a, 5), item(b, 6)];
    const r = await send(batch);
    expectStatus(r, 201);
    expect(r.body.map((c: { state: string }) => c.state)).toEqual([
      "accepted",
      "accepted",
      "accepted",
      "accepted",
    ]);
    expect(await taskRow(a.id)).toMatchObject({ version: 6, position: 5 });
    expect(await taskRow(b.id)).toMatchObject({ version: 3, position: 6 });
    expect(await commandsOf(a.id)).toHaveLength(4);
    expect(await commandsOf(b.id)).toHaveLength(2);
    const aEvents = (await storedEvents({ accountId: acc.account.id })).filter(
      (e) => e.data.task?.id === a.id,
    );
    expect(aEvents.map((e) => e.data.task.position)).toEqual([1, 2, 3, 5]);
  });

  it("through the API: a batch's runs re-arm a moved scheduled time and geocode a new address", async () => {
    const acc = await newAccount();
    const at = Date.now() + 3600_000;
    const scheduled = await insertTask(acc.account.id, {
      state: "scheduled",
      scheduledTime: Date.now() + 86400_000,
    });
    const other = await insertTask(acc.account.id);
    const item = (t: { url: string }, taskData: Record<string, unknown>) => ({
      task: t.url,
      external_id: `follow-${crypto.randomUUID()}`,
      time: new Date().toISOString(),
      action: "update",
      task_data: taskData,
    });
    const r = await call("/task_commands/", {
      token: acc.admin.token,
      body: [
        item(scheduled, { position: 1 }),
        item(scheduled, { scheduled_time: new Date(at).toISOString() }),
        item(other, { address: { raw_address: "Paris, France" } }),
      ],
    });
    expectStatus(r, 201);
    expect(r.body.map((c: { state: string }) => c.state)).toEqual(["accepted", "accepted", "accepted"]);
    const alarm = await runInDurableObject(taskStub(env, scheduled.id), (_instance, state) =>
      state.storage.getAlarm(),
    );
    expect(alarm).toBe(at);
    let got: any = null;
    for (let i = 0; i < 100; i++) {
      got = await call(`/tasks/${other.id}/`, { token: acc.admin.token });
      if (got.body.address.geocoded_at) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(got.body.address).toMatchObject({ raw_address: "Paris, France", geocoding_provider: "offline" });
  });

  it("through the API: a batch's tasks are written together after their objects decide", async () => {
    const acc = await newAccount();
    const tasks = await Promise.all([1, 2, 3, 4].map(() => insertTask(acc.account.id)));
    const items = tasks.flatMap((t, i) =>
      [1, 2].map((k) => ({
        task: t.url,
        external_id: `api-${i}-${k}-${crypto.randomUUID()}`,
        time: new Date().toISOString(),
        action: "update",
        task_data: { position: i * 10 + k },
      })),
    );
    // The token's first request in this isolate checks it alone (sessions.test.ts).
    expectStatus(await call("/users/", { token: acc.admin.token }), 200);
    const r = await call("/task_commands/", { token: acc.admin.token, body: items });
    expectStatus(r, 201);
    // The request's round trips: the token's check, the lookups, then one write for every task
    // (the objects read nothing: they decide on the rows the lookups read). Each task's object
    // used to write its own: 6 here.
    expect(Number(r.headers.get("X-D1-Round-Trips"))).toBe(3);
    for (const [i, t] of tasks.entries()) {
      expect(await taskRow(t.id)).toMatchObject({ version: 3, position: i * 10 + 2 });
    }
    // The object forgot its task on the plan; its next write reads the task as stored.
    const single = await call("/task_commands/", {
      token: acc.admin.token,
      body: { ...items[0], external_id: `single-${crypto.randomUUID()}`, task_data: { position: 99 } },
    });
    expectStatus(single, 201);
    expect(await taskRow(tasks[0].id)).toMatchObject({ version: 4, position: 99 });
  });
});
