import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { taskWriter } from "../../src/durable-objects/task/client";
import { applyToTask } from "../../src/services/task-commands/apply";
import { adminActor, commandInput, insertTask, taskRow } from "../factories";
import { newAccount } from "../helpers";
import { stored } from "../stored";

describe("applyToTask (inside the task's object)", () => {
  it("writes a run of commands as planned, rejections included, with one event per outcome", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    const cmds = [
      commandInput(task.id, "update", { position: 4 }),
      commandInput(task.id, "cancel"),
      commandInput(task.id, "update", { position: 5 }),
    ];
    const r = await applyToTask(env, adminActor(acc.account.id, acc.admin.userId), task.id, cmds, {
      baseUrl: "https://api.test",
    });
    expect(r.outcomes.map((o) => o.row.state)).toEqual(["accepted", "accepted", "rejected"]);
    expect(r.outcomes[2].row.error_message).toBe('Cannot update a task in state "cancelled".');
    const row = await taskRow(task.id);
    expect(row).toMatchObject({ state: "cancelled", position: 4, version: 3, last_command_id: cmds[1].id });
    const commands = await stored
      .prepare("SELECT external_id, state FROM task_commands WHERE task_id = unhex(?, '-') ORDER BY id")
      .bind(task.id)
      .all();
    expect(commands.results.map((c: any) => c.state)).toEqual(["accepted", "accepted", "rejected"]);
    const events = await stored
      .prepare("SELECT type FROM events WHERE account_id = unhex(?, '-') ORDER BY id")
      .bind(acc.account.id)
      .all();
    expect(events.results.map((e: any) => e.type)).toEqual([
      "task_command.accepted",
      "task_command.accepted",
      "task.state_changed",
      "task_command.rejected",
    ]);
  });

  it("re-plans on the stored task when another writer moved it after the object's last look", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    const hint = await taskRow(task.id);
    // Another writer (an order upsert, a geocoding result) changes the task behind the object.
    await stored
      .prepare("UPDATE tasks SET state = 'cancelled', version = version + 1 WHERE id = ?")
      .bind(task.id)
      .run();
    const cmds = [
      commandInput(task.id, "update", { position: 1 }),
      commandInput(task.id, "update", { position: 2 }),
    ];
    const r = await applyToTask(env, adminActor(acc.account.id, acc.admin.userId), task.id, cmds, {
      baseUrl: "https://api.test",
      task: { ...hint, last_command_id: null } as any,
    });
    // Decided on the stored state (cancelled), not on the stale hint (unassigned).
    expect(r.outcomes.map((o) => o.row.state)).toEqual(["rejected", "rejected"]);
    expect(await taskRow(task.id)).toMatchObject({ state: "cancelled", version: 2, position: null });
    const count = await stored
      .prepare("SELECT COUNT(*) AS n FROM task_commands WHERE task_id = unhex(?, '-')")
      .bind(task.id)
      .first<{ n: number }>();
    expect(count!.n).toBe(2);
  });

  /** Two position updates sent to the task's object with `hint` as the row the request read. */
  const throughObject = (acc: Awaited<ReturnType<typeof newAccount>>, taskId: string, hint: unknown) =>
    taskWriter(env, taskId).applyCommands({
      actor: adminActor(acc.account.id, acc.admin.userId),
      taskId,
      commands: [
        commandInput(taskId, "update", { position: 1 }),
        commandInput(taskId, "update", { position: 2 }),
      ],
      baseUrl: "https://api.test",
      task: hint as any,
    });

  it("a batch's task object takes the row the request read as a hint, and a stale one costs only a re-read", async () => {
    const acc = await newAccount();
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    const row = await taskRow(task.id);
    // A hint older than the stored row: planned on it, refused by the version guard, re-planned.
    const outcomes = await throughObject(acc, task.id, {
      ...row,
      state: "cancelled",
      version: row.version - 1,
    });
    expect(outcomes.map((o) => o.row.state)).toEqual(["accepted", "accepted"]);
    expect(await taskRow(task.id)).toMatchObject({
      state: "unassigned",
      position: 2,
      version: row.version + 2,
    });
  });

  it("a hint of another account's row is not taken for the task", async () => {
    const acc = await newAccount();
    const other = await newAccount();
    const task = await insertTask(acc.account.id, { state: "unassigned" });
    const row = await taskRow(task.id);
    // Same version as stored, so only the account check keeps it from deciding the commands.
    const outcomes = await throughObject(acc, task.id, {
      ...row,
      account_id: other.account.id,
      state: "cancelled",
    });
    expect(outcomes.map((o) => o.row.state)).toEqual(["accepted", "accepted"]);
    expect(await taskRow(task.id)).toMatchObject({ state: "unassigned", position: 2 });
  });
});
