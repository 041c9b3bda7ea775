import { accountEnv } from "../../../db/shards";
/** The moves a `scheduled` task makes by itself, and the sweep for those whose alarm was lost. */
import { nextStateOnSchedule } from "../../../domain/task-state-machine";
import { uuidv7 } from "../../../lib/ids";
import type { TaskRow } from "../../tasks/types";
import type { Actor, CommandInput } from "../types";
import { appliedGuard, loadTask, outcomeEvents, outcomeStatement, rowOf } from "./statements";

/** The move a `scheduled` task makes by itself at its scheduled_time, recorded as a system command. */
export async function applyScheduledMove(
  env: Env,
  accountId: string,
  taskId: string,
  baseUrl: string,
): Promise<"moved" | "not_due" | "gone" | "changed"> {
  env = await accountEnv(env, accountId);
  const task = await loadTask(env.DB, accountId, taskId);
  if (task?.state !== "scheduled") return "gone";
  if (task.scheduled_time !== null && task.scheduled_time > Date.now()) return "not_due";
  const next = nextStateOnSchedule({ state: task.state, assigneeId: task.assignee_id });
  if (!next) return "gone";
  const now = Date.now();
  const cmd: CommandInput = {
    id: uuidv7(now),
    externalId: `system:scheduled:${task.id}:${task.version}`,
    taskId: task.id,
    action: task.assignee_id ? "assign" : "unassign",
    time: now,
    assigneeId: task.assignee_id,
    taskData: {},
    notes: `Scheduled time reached: moved from scheduled to ${next}.`,
    location: null,
  };
  const actor: Actor = {
    userId: null,
    role: "system",
    accountId,
    allowWorkerReordering: true,
    transitActiveLimit: null,
    failedReasons: [],
  };
  const applied = appliedGuard(task.id, cmd.id);
  const after: TaskRow = { ...task, state: next, version: task.version + 1, updated_at: now };
  const results = await env.DB.batch([
    env.DB.prepare(
      "UPDATE tasks SET state = ?, version = version + 1, updated_at = ?, last_command_id = ? WHERE id = ? AND version = ? AND state = 'scheduled'",
    ).bind(next, now, cmd.id, task.id, task.version),
    outcomeStatement(env.DB, actor, cmd, false, "accepted", now, "", applied),
    ...outcomeEvents(env.DB, baseUrl, rowOf(actor, cmd, "accepted", "", now, now), after, true, now, applied),
  ]);
  return results[0].meta.changes === 1 ? "moved" : "changed";
}

/** Tasks still `scheduled` a minute past their time: their alarm was lost (a crash after the write). */
export async function overdueScheduledTasks(env: Env, limit = 100) {
  const { results } = await env.DB.prepare(
    "SELECT id, account_id FROM tasks WHERE state = 'scheduled' AND scheduled_time <= ? ORDER BY scheduled_time LIMIT ?",
  )
    .bind(Date.now() - 60_000, limit)
    .all<{ id: string; account_id: string }>();
  return results;
}
