import { decide, nextStateOnSchedule, type TaskState } from "../../domain/task-state-machine";
import { uuidv7 } from "../../lib/ids";
import { storedCommands } from "./store";
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

/** The stored row of a command, as this code just wrote it (saves a read-back). */
function rowOf(
  actor: Actor,
  cmd: CommandInput,
  outcome: "accepted" | "rejected",
  error: string,
  now: number,
  createdAt: number,
): CommandRow {
  return {
    id: cmd.id,
    account_id: actor.accountId,
    task_id: cmd.taskId,
    external_id: cmd.externalId,
    action: cmd.action,
    time: cmd.time,
    assignee_id: cmd.assigneeId,
    task_data: JSON.stringify(cmd.taskData ?? {}),
    notes: cmd.notes,
    location: cmd.location === undefined || cmd.location === null ? null : JSON.stringify(cmd.location),
    user_id: actor.userId,
    state: outcome,
    error_message: error,
    accepted_at: outcome === "accepted" ? now : null,
    rejected_at: outcome === "rejected" ? now : null,
    created_at: createdAt,
    updated_at: now,
  };
}

/**
 * Applies `commands` (all for `taskId`) in order. With `pending`, the rows already exist in
 * state `pending` (asynchronous mode) and are moved to their outcome; a row that is no longer
 * pending was applied by an earlier delivery and is returned as is (queue redelivery safe).
 *
 * D1 round trips: one read of the task and of the stored commands for the whole group, then
 * one batch per command. The task is kept in memory between commands: this Durable Object is
 * its only writer, and it is re-read whenever a guarded update did not apply.
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
  const [taskRow, storedRows] = await Promise.all([
    loadTask(db, actor.accountId, taskId),
    storedCommands(
      env,
      actor.accountId,
      commands.map((c) => c.externalId),
    ),
  ]);
  let task = taskRow;
  const stored = new Map(storedRows.map((r) => [r.external_id, r]));
  for (const cmd of commands) {
    const existing = stored.get(cmd.externalId);
    if (existing && (!opts.pending || existing.state !== "pending")) {
      out.push({ row: existing, replay: true });
      continue;
    }
    if (opts.pending && existing) cmd.id = existing.id;
    const now = Date.now();
    const createdAt = existing?.created_at ?? now;
    const pending = !!opts.pending;
    const statements: D1PreparedStatement[] = [];
    let decision: ReturnType<typeof decide> | null = null;
    let rejection = "";
    if (!task) {
      rejection = "The task does not exist.";
      statements.push(outcomeStatement(db, actor, cmd, pending, "rejected", now, rejection));
    } else {
      decision = decide({
        task: { state: task.state, assigneeId: task.assignee_id },
        action: cmd.action,
        actor: { userId: actor.userId ?? "", role: actor.role },
        assigneeId: cmd.assigneeId,
        taskData: cmd.taskData as { position?: number },
        account: { allowWorkerReordering: actor.allowWorkerReordering },
        missingRequiredMetafields: [],
      });
      if (!decision.ok) {
        rejection = decision.error;
        statements.push(outcomeStatement(db, actor, cmd, pending, "rejected", now, rejection));
        statements.push(
          ...(opts.hooks?.events?.({
            cmd,
            outcome: "rejected",
            before: task,
            after: null,
            error: rejection,
          }) ?? []),
        );
      } else {
        const sets = ["state = ?", "assignee_id = ?", "version = version + 1", "updated_at = ?"];
        const params: unknown[] = [decision.state, decision.assigneeId, now];
        if (cmd.action === "update" || cmd.action === "reassign") {
          const extra = taskDataSets(task, cmd);
          sets.push(...extra.sets);
          params.push(...extra.params);
        }
        let limitGuard = "";
        const limitParams: unknown[] = [];
        if (decision.usesTransitSlot && decision.assigneeId) {
          // NULL limit → the comparison is NULL → COALESCE lets it pass (no limit).
          limitGuard = ` AND COALESCE((SELECT (SELECT COUNT(*) FROM tasks t2 WHERE t2.account_id = a.id AND t2.assignee_id = ?
              AND t2.state IN ('transit', 'active') AND t2.id <> ?) < a.transit_active_limit FROM accounts a WHERE a.id = ?), 1)`;
          limitParams.push(decision.assigneeId, task.id, actor.accountId);
        }
        statements.push(
          db
            .prepare(`UPDATE tasks SET ${sets.join(", ")} WHERE id = ? AND version = ?${limitGuard}`)
            .bind(...params, task.id, task.version, ...limitParams),
        );
        const applied = { taskId: task.id, version: task.version + 1, expectApplied: true };
        const notApplied = { ...applied, expectApplied: false };
        statements.push(outcomeStatement(db, actor, cmd, pending, "accepted", now, "", applied));
        statements.push(
          outcomeStatement(db, actor, cmd, pending, "rejected", now, LIMIT_MESSAGE, notApplied),
        );
        const after = { state: decision.state, assigneeId: decision.assigneeId };
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
    let results: D1Result[];
    try {
      results = await db.batch(statements);
    } catch (err) {
      // The same external_id was written meanwhile for another task (another Durable Object):
      // the unique index rolled this batch back whole; report what is stored.
      if (!/UNIQUE constraint failed/i.test(String(err))) throw err;
      const row = await loadCommand(db, actor.accountId, cmd.externalId);
      if (!row) throw err;
      out.push({ row, replay: true });
      continue;
    }
    if (task && decision?.ok) {
      if (results[0].meta.changes === 1) {
        const td = cmd.taskData as Record<string, any>;
        task = {
          ...task,
          state: decision.state,
          assignee_id: decision.assigneeId,
          version: task.version + 1,
          metafields:
            (cmd.action === "update" || cmd.action === "reassign") && td.metafields
              ? JSON.stringify({ ...JSON.parse(task.metafields || "{}"), ...td.metafields })
              : task.metafields,
          scheduled_time: "scheduled_time" in td ? (td.scheduled_time as number | null) : task.scheduled_time,
        };
        out.push({ row: rowOf(actor, cmd, "accepted", "", now, createdAt), replay: false });
      } else {
        out.push({ row: rowOf(actor, cmd, "rejected", LIMIT_MESSAGE, now, createdAt), replay: false });
        task = await loadTask(db, actor.accountId, taskId);
      }
    } else {
      out.push({ row: rowOf(actor, cmd, "rejected", rejection, now, createdAt), replay: false });
    }
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
