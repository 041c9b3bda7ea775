import { decide, nextStateOnSchedule, type TaskState } from "../../domain/task-state-machine";
import { uuidv7 } from "../../lib/ids";
import type { Actor, CommandInput, CommandOutcome, CommandRow } from "./types";

/**
 * Applies commands to ONE task, in order. Runs inside that task's Durable Object (the single
 * writer), so the task row read here cannot change under us except through this code.
 *
 * Each command is one D1 batch (one transaction): the task UPDATE is guarded by the task's
 * `version` and, for transit/active, by the worker's transit/active count; the command row is
 * then written as accepted only if the guarded update happened (the task now has the new
 * version), else as rejected. So the limit check and the write are one atomic step in D1
 * (contract §5), and a command is never half-applied.
 */

type TaskRow = {
  id: string;
  account_id: string;
  state: TaskState;
  assignee_id: string | null;
  version: number;
  metafields: string;
  address: string;
  contact_address_id: string | null;
  scheduled_time: number | null;
};

export const LIMIT_MESSAGE =
  "Transit/active limit reached: the assignee already has as many tasks in transit or active as the account allows.";

async function loadTask(db: D1Database, accountId: string, taskId: string) {
  return db
    .prepare(
      "SELECT id, account_id, state, assignee_id, version, metafields, address, contact_address_id, scheduled_time FROM tasks WHERE id = ? AND account_id = ?",
    )
    .bind(taskId, accountId)
    .first<TaskRow>();
}

async function loadCommand(db: D1Database, accountId: string, externalId: string) {
  return db
    .prepare("SELECT * FROM task_commands WHERE account_id = ? AND external_id = ?")
    .bind(accountId, externalId)
    .first<CommandRow>();
}

const HMS = /^(\d{1,3}):([0-5]\d):([0-5]\d)$/;
export const durationToSeconds = (d: string) => {
  const m = HMS.exec(d);
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : null;
};

/** Column assignments that `task_data` (interface 2.7) makes on the task row. */
function taskDataSets(task: TaskRow, cmd: CommandInput): { sets: string[]; params: unknown[] } {
  const sets: string[] = [];
  const params: unknown[] = [];
  const set = (column: string, value: unknown) => {
    sets.push(`${column} = ?`);
    params.push(value);
  };
  const td = cmd.taskData as Record<string, any>;
  if ("position" in td) set("position", td.position);
  if ("scheduled_time" in td) set("scheduled_time", td.scheduled_time);
  if ("duration" in td) set("duration_seconds", td.duration === null ? null : durationToSeconds(td.duration));
  if (td.metafields && typeof td.metafields === "object") {
    set("metafields", JSON.stringify({ ...JSON.parse(task.metafields || "{}"), ...td.metafields }));
  }
  if (td.address && typeof td.address === "object") {
    // A new address replaces the old one; geocoding fields are reset until it is geocoded again.
    set(
      "address",
      JSON.stringify({ raw_address: td.address.raw_address ?? null, location: td.address.location ?? null }),
    );
    sets.push("geocoded_at = NULL", "geocode_failed_at = NULL");
  }
  if (cmd.routeId !== undefined) set("route_id", cmd.routeId);
  return { sets, params };
}

/** Writes the outcome of a command: a new row (sync), or the pending row's final state (async). */
function outcomeStatement(
  db: D1Database,
  actor: Actor,
  cmd: CommandInput,
  pending: boolean,
  outcome: "accepted" | "rejected",
  now: number,
  error: string,
  guard?: { taskId: string; version: number; expectApplied: boolean },
): D1PreparedStatement {
  const cond = guard
    ? `${guard.expectApplied ? "" : "NOT "}EXISTS (SELECT 1 FROM tasks WHERE id = ? AND version = ?)`
    : "1";
  const condParams = guard ? [guard.taskId, guard.version] : [];
  if (pending) {
    return db
      .prepare(
        `UPDATE task_commands SET state = ?, error_message = ?, accepted_at = ?, rejected_at = ?, updated_at = ?
         WHERE id = ? AND state = 'pending' AND ${cond}`,
      )
      .bind(
        outcome,
        error,
        outcome === "accepted" ? now : null,
        outcome === "rejected" ? now : null,
        now,
        cmd.id,
        ...condParams,
      );
  }
  return db
    .prepare(
      `INSERT INTO task_commands (id, account_id, task_id, external_id, action, time, assignee_id, task_data, notes, location,
        user_id, state, error_message, accepted_at, rejected_at, created_at, updated_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE ${cond}`,
    )
    .bind(
      cmd.id,
      actor.accountId,
      cmd.taskId,
      cmd.externalId,
      cmd.action,
      cmd.time,
      cmd.assigneeId,
      JSON.stringify(cmd.taskData ?? {}),
      cmd.notes,
      cmd.location === undefined || cmd.location === null ? null : JSON.stringify(cmd.location),
      actor.userId,
      outcome,
      error,
      outcome === "accepted" ? now : null,
      outcome === "rejected" ? now : null,
      now,
      now,
      ...condParams,
    );
}

export type ApplyHooks = {
  /** Event statements for an applied or rejected command, added to the same batch. */
  events?: (e: {
    cmd: CommandInput;
    outcome: "accepted" | "rejected";
    before: TaskRow;
    after: { state: TaskState; assigneeId: string | null } | null;
    error: string;
    guard?: { taskId: string; version: number; expectApplied: boolean };
  }) => D1PreparedStatement[];
};

/**
 * Applies `commands` (all for `taskId`) in order. With `pending`, the rows already exist in
 * state `pending` (asynchronous mode) and are moved to their outcome; a row that is no longer
 * pending was applied by an earlier delivery and is returned as is (queue redelivery safe).
 */
export async function applyToTask(
  env: Env,
  actor: Actor,
  taskId: string,
  commands: CommandInput[],
  opts: { pending?: boolean; hooks?: ApplyHooks } = {},
): Promise<CommandOutcome[]> {
  const db = env.DB;
  const out: CommandOutcome[] = [];
  for (const cmd of commands) {
    const existing = await loadCommand(db, actor.accountId, cmd.externalId);
    if (existing && (!opts.pending || existing.state !== "pending")) {
      out.push({ row: existing, replay: true });
      continue;
    }
    if (opts.pending && existing) cmd.id = existing.id;
    const now = Date.now();
    const task = await loadTask(db, actor.accountId, taskId);
    const statements: D1PreparedStatement[] = [];
    if (!task) {
      statements.push(
        outcomeStatement(db, actor, cmd, !!opts.pending, "rejected", now, "The task does not exist."),
      );
    } else {
      const d = decide({
        task: { state: task.state, assigneeId: task.assignee_id },
        action: cmd.action,
        actor: { userId: actor.userId ?? "", role: actor.role },
        assigneeId: cmd.assigneeId,
        taskData: cmd.taskData as { position?: number },
        account: { allowWorkerReordering: actor.allowWorkerReordering },
        missingRequiredMetafields: [],
      });
      if (!d.ok) {
        statements.push(outcomeStatement(db, actor, cmd, !!opts.pending, "rejected", now, d.error));
        statements.push(
          ...(opts.hooks?.events?.({ cmd, outcome: "rejected", before: task, after: null, error: d.error }) ??
            []),
        );
      } else {
        const sets = ["state = ?", "assignee_id = ?", "version = version + 1", "updated_at = ?"];
        const params: unknown[] = [d.state, d.assigneeId, now];
        if (cmd.action === "update" || cmd.action === "reassign") {
          const extra = taskDataSets(task, cmd);
          sets.push(...extra.sets);
          params.push(...extra.params);
        }
        let limitGuard = "";
        const limitParams: unknown[] = [];
        if (d.usesTransitSlot && d.assigneeId) {
          // NULL limit → the comparison is NULL → COALESCE lets it pass (no limit).
          limitGuard = ` AND COALESCE((SELECT (SELECT COUNT(*) FROM tasks t2 WHERE t2.account_id = a.id AND t2.assignee_id = ?
              AND t2.state IN ('transit', 'active') AND t2.id <> ?) < a.transit_active_limit FROM accounts a WHERE a.id = ?), 1)`;
          limitParams.push(d.assigneeId, task.id, actor.accountId);
        }
        statements.push(
          db
            .prepare(`UPDATE tasks SET ${sets.join(", ")} WHERE id = ? AND version = ?${limitGuard}`)
            .bind(...params, task.id, task.version, ...limitParams),
        );
        const applied = { taskId: task.id, version: task.version + 1, expectApplied: true };
        const notApplied = { ...applied, expectApplied: false };
        statements.push(outcomeStatement(db, actor, cmd, !!opts.pending, "accepted", now, "", applied));
        statements.push(
          outcomeStatement(db, actor, cmd, !!opts.pending, "rejected", now, LIMIT_MESSAGE, notApplied),
        );
        const after = { state: d.state, assigneeId: d.assigneeId };
        statements.push(
          ...(opts.hooks?.events?.({
            cmd,
            outcome: "accepted",
            before: task,
            after,
            error: "",
            guard: applied,
          }) ?? []),
        );
        statements.push(
          ...(opts.hooks?.events?.({
            cmd,
            outcome: "rejected",
            before: task,
            after: null,
            error: LIMIT_MESSAGE,
            guard: notApplied,
          }) ?? []),
        );
      }
    }
    try {
      await db.batch(statements);
    } catch (err) {
      // The same external_id was written meanwhile for another task (another Durable Object):
      // the unique index rolled this batch back whole; report what is stored.
      if (!/UNIQUE constraint failed/i.test(String(err))) throw err;
    }
    const stored = await loadCommand(db, actor.accountId, cmd.externalId);
    if (!stored) throw new Error("command outcome was not stored");
    out.push({ row: stored, replay: stored.id !== cmd.id });
  }
  return out;
}

/** The move a `scheduled` task makes by itself at its scheduled_time, recorded as a system command. */
export async function applyScheduledMove(
  env: Env,
  accountId: string,
  taskId: string,
): Promise<"moved" | "not_due" | "gone"> {
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
  };
  await env.DB.batch([
    env.DB.prepare(
      "UPDATE tasks SET state = ?, version = version + 1, updated_at = ? WHERE id = ? AND version = ? AND state = 'scheduled'",
    ).bind(next, now, task.id, task.version),
    outcomeStatement(env.DB, actor, cmd, false, "accepted", now, "", {
      taskId: task.id,
      version: task.version + 1,
      expectApplied: true,
    }),
  ]);
  return "moved";
}
