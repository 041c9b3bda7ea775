import {
  COMMAND_UUIDS,
  insertParams,
  jsonRowColumns,
  selectColumns,
  TASK_COMMAND_COLUMNS,
  uuidBytes,
} from "../../../db/uuid-bytes";
import { bulkEventStatements, type EventItem, type SharedBase } from "../../events/outbox";
import { eventRender, serializeTask } from "../../tasks/serialize";
import type { TaskRow } from "../../tasks/types";
import { serializeCommand } from "../serialize";
import type { Actor, CommandInput, CommandRow } from "../types";
import { contactAddressInput, type RunEntry } from "./plan";

export const LIMIT_MESSAGE =
  "Transit/active limit reached: the assignee already has as many tasks in transit or active as the account allows.";

export type Guard = { sql: string; params: unknown[] };

export const appliedGuard = (taskId: string, commandId: string): Guard => ({
  sql: "EXISTS (SELECT 1 FROM tasks WHERE id = ? AND last_command_id = ?)",
  params: [taskId, commandId],
});

/**
 * The task is in the state `task` shows: its version and its last command. The version alone
 * does not say it: a state a Durable Object predicted (a run of a group commit on its way,
 * group.ts) has a version that other writers, who move only the version, may reach too.
 */
export const atState = (task: Pick<TaskRow, "id" | "version" | "last_command_id">): Guard => ({
  sql: "EXISTS (SELECT 1 FROM tasks WHERE id = ? AND version = ? AND last_command_id IS ?)",
  params: [task.id, task.version, task.last_command_id],
});

/** SQL for an UPDATE of the task `atState` describes: `WHERE` with its parameters. */
export const whereAtState = (task: Pick<TaskRow, "id" | "version" | "last_command_id">): Guard => ({
  sql: "id = ? AND version = ? AND last_command_id IS ?",
  params: [task.id, task.version, task.last_command_id],
});

export const limitGuard = (commandId: string, task: TaskRow): Guard => {
  const at = atState(task);
  return {
    sql: `NOT EXISTS (SELECT 1 FROM tasks WHERE id = ? AND last_command_id = ?) AND ${at.sql}`,
    params: [task.id, commandId, ...at.params],
  };
};

export async function loadTask(db: D1Database, accountId: string, taskId: string) {
  return db
    .prepare("SELECT * FROM tasks WHERE id = ? AND account_id = ?")
    .bind(taskId, accountId)
    .first<TaskRow>();
}

export async function loadCommand(db: D1Database, accountId: string, externalId: string) {
  return db
    .prepare(`${COMMAND_SELECT} WHERE account_id = ${uuidBytes()} AND external_id = ?`)
    .bind(accountId, externalId)
    .first<CommandRow>();
}

/**
 * The contact address linked to the task takes the address an `update` sends in
 * `task_data.contact_address.address`, in the same transaction as the command and only if the
 * command applied. The new address is geocoded from the queue like the task's.
 */
export function contactAddressUpdate(
  db: D1Database,
  actor: Actor,
  task: TaskRow,
  cmd: CommandInput,
  now: number,
  guard: Guard,
): D1PreparedStatement | null {
  const input = contactAddressInput(
    cmd.action === "update" ? (cmd.taskData as Record<string, any>) : undefined,
  );
  if (!input || !task.contact_address_id) return null;
  const address = {
    raw_address: input.raw_address ?? "",
    formatted_address: null,
    location: input.location ?? null,
    geocoding_provider: null,
    geocoded_at: null,
    geocode_failed_at: null,
  };
  return db
    .prepare(
      `UPDATE contact_addresses SET address = ?, updated_at = ? WHERE id = ? AND account_id = ? AND ${guard.sql}`,
    )
    .bind(JSON.stringify(address), now, task.contact_address_id, actor.accountId, ...guard.params);
}

/** Writes the outcome of a command: a new row (sync), or the pending row's final state (async). */
export function outcomeStatement(
  db: D1Database,
  actor: Actor,
  cmd: CommandInput,
  pending: boolean,
  outcome: "accepted" | "rejected",
  now: number,
  error: string,
  guard?: Guard,
): D1PreparedStatement {
  const cond = guard?.sql ?? "1";
  const condParams = guard?.params ?? [];
  const acceptedAt = outcome === "accepted" ? now : null;
  const rejectedAt = outcome === "rejected" ? now : null;
  if (pending) {
    return db
      .prepare(
        `UPDATE task_commands SET state = ?, error_message = ?, accepted_at = ?, rejected_at = ?, updated_at = ?
         WHERE id = ${uuidBytes()} AND state = 'pending' AND ${cond}`,
      )
      .bind(outcome, error, acceptedAt, rejectedAt, now, cmd.id, ...condParams);
  }
  const r = rowOf(actor, cmd, outcome, error, now, now);
  return db
    .prepare(
      `INSERT INTO task_commands (${COMMAND_COLUMNS.join(", ")})
       SELECT ${insertParams(COMMAND_COLUMNS, COMMAND_UUIDS)} WHERE ${cond}`,
    )
    .bind(...commandValues(r), ...condParams);
}

/** The columns of a command row, in the order `commandValues` gives them. */
export const COMMAND_COLUMNS = TASK_COMMAND_COLUMNS;

export const commandValues = (r: CommandRow) => COMMAND_COLUMNS.map((c) => r[c]);

/** `SELECT <every column, ids as text> FROM task_commands` (ids are stored as bytes, db/uuid-bytes.ts). */
export const COMMAND_SELECT = `SELECT ${selectColumns(COMMAND_COLUMNS, COMMAND_UUIDS)} FROM task_commands`;

/** The stored row of a command, as this code writes it (saves a read-back). */
export function rowOf(
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
 * Outbox rows for an outcome (contract §9): `task_command.accepted|rejected` carry the command
 * with its task inline; `task.state_changed` carries the task. Guarded like the command row;
 * with `shared`, packed against a base the chunk's earlier commands stored (events/outbox.ts).
 */
export function outcomeEvents(
  db: D1Database,
  baseUrl: string,
  command: CommandRow,
  task: TaskRow,
  stateChanged: boolean,
  now: number,
  when?: Guard,
  shared?: SharedBase,
): D1PreparedStatement[] {
  const r = eventRender(baseUrl);
  const taskData = serializeTask(r, task);
  // One statement: the two events share the task (stored once, outbox.ts).
  const items: EventItem[] = [
    {
      type: command.state === "accepted" ? "task_command.accepted" : "task_command.rejected",
      objectId: command.id,
      data: { ...serializeCommand(r, command), task: taskData },
    },
  ];
  if (stateChanged) items.push({ type: "task.state_changed", objectId: task.id, data: taskData });
  return bulkEventStatements(db, command.account_id, items, { now, when, shared });
}

/** What a run of commands writes, as its statements and the group commit (group.ts) take it. */
export type RunParts = {
  accepted: number;
  /** The task's columns the run moves, with their final values (none when all are rejected). */
  set: Record<string, unknown>;
  /** The last accepted command (the task's `last_command_id` after the run), if any. */
  lastId: string | null;
  rows: CommandRow[];
  events: EventItem[];
  now: number;
};

/** The rows and events a run of commands on `start` writes (planRun's entries, in order). */
export function runParts(actor: Actor, start: TaskRow, run: RunEntry[], baseUrl: string): RunParts {
  const accepted = run.filter((e) => !e.error);
  const last = run[run.length - 1];
  const changes: Partial<TaskRow> = {};
  for (const e of accepted) Object.assign(changes, e.changes);
  const set: Record<string, unknown> = {};
  for (const c of Object.keys(changes)) set[c] = (last.after as Record<string, unknown>)[c];
  const rows = run.map((e) =>
    rowOf(actor, e.cmd, e.error ? "rejected" : "accepted", e.error ?? "", e.now, e.now),
  );
  const r = eventRender(baseUrl);
  const events: EventItem[] = [];
  run.forEach((e, i) => {
    const taskData = serializeTask(r, e.after);
    events.push({
      type: e.error ? "task_command.rejected" : "task_command.accepted",
      objectId: e.cmd.id,
      data: { ...serializeCommand(r, rows[i]), task: taskData },
    });
    if (!e.error && e.after.state !== e.before.state) {
      events.push({ type: "task.state_changed", objectId: start.id, data: taskData });
    }
  });
  return {
    accepted: accepted.length,
    set,
    lastId: accepted.length ? accepted[accepted.length - 1].cmd.id : null,
    rows,
    events,
    now: last.now,
  };
}

/**
 * A run in one transaction of three statements: the task's final state (guarded by the
 * version the run was planned on), every command row, every event (one JSON parameter each,
 * guarded by "the update happened"). Same rows as command by command, fewer statements.
 */
export async function writeRun(
  db: D1Database,
  actor: Actor,
  start: TaskRow,
  run: RunEntry[],
  baseUrl: string,
): Promise<"applied" | "stale" | "duplicate"> {
  const parts = runParts(actor, start, run, baseUrl);
  const statements: D1PreparedStatement[] = [];
  let guard: Guard;
  if (parts.lastId) {
    const columns = Object.keys(parts.set);
    const where = whereAtState(start);
    statements.push(
      db
        .prepare(
          `UPDATE tasks SET ${columns.map((c) => `${c} = ?`).join(", ")}, version = version + ?, last_command_id = ?
           WHERE ${where.sql}`,
        )
        .bind(...columns.map((c) => parts.set[c]), parts.accepted, parts.lastId, ...where.params),
    );
    guard = appliedGuard(start.id, parts.lastId);
  } else {
    guard = atState(start);
  }
  statements.push(
    db
      .prepare(
        `INSERT INTO task_commands (${COMMAND_COLUMNS.join(", ")})
         SELECT ${jsonRowColumns(COMMAND_COLUMNS, COMMAND_UUIDS)}
         FROM json_each(?) WHERE ${guard.sql}`,
      )
      .bind(JSON.stringify(parts.rows.map(commandValues)), ...guard.params),
  );
  statements.push(...bulkEventStatements(db, actor.accountId, parts.events, { now: parts.now, when: guard }));
  let results: D1Result[];
  try {
    results = await db.batch(statements);
  } catch (err) {
    if (/UNIQUE constraint failed/i.test(String(err))) return "duplicate";
    throw err;
  }
  const rowsWritten = results[parts.lastId ? 1 : 0].meta.changes;
  return rowsWritten === run.length ? "applied" : "stale";
}
