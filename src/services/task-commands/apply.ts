import { decide, nextStateOnSchedule, type TaskState } from "../../domain/task-state-machine";
import { uuidv7 } from "../../lib/ids";
import { enqueueGeocodeRetries } from "../../queues/geocode/message";
import { bulkEventStatements, type EventItem, eventStatement } from "../events/outbox";
import { eventRender, serializeTask } from "../tasks/serialize";
import { addressOf, type TaskRow } from "../tasks/types";
import { serializeCommand } from "./serialize";
import { storedCommands } from "./store";
import type { Actor, CommandInput, CommandOutcome, CommandRow } from "./types";

/**
 * Applies commands to ONE task, in order. Runs inside that task's Durable Object (the single
 * writer of the task's commands).
 *
 * Each command is one D1 batch (one transaction):
 *   1. the task UPDATE, guarded by the task's `version` and, for transit/active, by the
 *      worker's transit/active count (contract §5: check and write in one atomic step); it
 *      stamps `last_command_id` with this command;
 *   2. the command row (and its events) as `accepted` where the task names this command;
 *   3. the command row (and its event) as `rejected` where it does not and the version is
 *      unchanged (so only the limit can have failed).
 * If another writer (an order upsert, a geocoding result) moved the version meanwhile, neither
 * 2 nor 3 writes anything and the command is decided again on the fresh task.
 */

export const LIMIT_MESSAGE =
  "Transit/active limit reached: the assignee already has as many tasks in transit or active as the account allows.";

type Guard = { sql: string; params: unknown[] };

const appliedGuard = (taskId: string, commandId: string): Guard => ({
  sql: "EXISTS (SELECT 1 FROM tasks WHERE id = ? AND last_command_id = ?)",
  params: [taskId, commandId],
});

const limitGuard = (taskId: string, commandId: string, version: number): Guard => ({
  sql: "NOT EXISTS (SELECT 1 FROM tasks WHERE id = ? AND last_command_id = ?) AND EXISTS (SELECT 1 FROM tasks WHERE id = ? AND version = ?)",
  params: [taskId, commandId, taskId, version],
});

async function loadTask(db: D1Database, accountId: string, taskId: string) {
  return db
    .prepare("SELECT * FROM tasks WHERE id = ? AND account_id = ?")
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

/**
 * The task as the command leaves it, and the columns that differ. The UPDATE writes exactly
 * these columns, and the events render exactly this row, so what is stored and what is
 * reported cannot disagree.
 */
function project(task: TaskRow, cmd: CommandInput, state: TaskState, assigneeId: string | null, now: number) {
  const changes: Partial<TaskRow> = { state, assignee_id: assigneeId, updated_at: now };
  let geocode = false;
  if (cmd.action === "update" || cmd.action === "reassign") {
    const td = cmd.taskData as Record<string, any>;
    if ("position" in td) changes.position = td.position;
    if ("scheduled_time" in td) changes.scheduled_time = td.scheduled_time;
    if ("duration" in td)
      changes.duration_seconds = td.duration === null ? null : durationToSeconds(td.duration);
    if (td.metafields && typeof td.metafields === "object") {
      changes.metafields = JSON.stringify({ ...JSON.parse(task.metafields || "{}"), ...td.metafields });
    }
    // `contact_address.address` updates the task's contact address (see contactAddressUpdate)
    // and, unless `address` itself is sent, the task's copy of it.
    const newAddress = td.address ?? contactAddressInput(td);
    if (newAddress && typeof newAddress === "object") {
      // A new address replaces the old one; it is geocoded from the queue (interface 2.4).
      const before = addressOf(task);
      const raw = newAddress.raw_address ?? "";
      const location = newAddress.location ?? null;
      if (raw !== before.raw_address || JSON.stringify(location) !== JSON.stringify(before.location)) {
        changes.address = JSON.stringify({
          raw_address: raw,
          formatted_address: null,
          location,
          geocoding_provider: null,
        });
        changes.geocoded_at = null;
        changes.geocode_failed_at = null;
        geocode = true;
      }
    }
    if (cmd.routeId !== undefined) changes.route_id = cmd.routeId;
  }
  // Only the columns whose value moves are written: SQLite rewrites the entries of every
  // index over a column named in SET, changed or not (state and assignee are in several).
  for (const k of Object.keys(changes) as (keyof TaskRow)[]) {
    if (k !== "updated_at" && changes[k] === task[k]) delete changes[k];
  }
  const after: TaskRow = { ...task, ...changes, version: task.version + 1 };
  return { after, changes, geocode };
}

/** The address an `update` sends for the task's contact address (interface 2.7), if any. */
function contactAddressInput(td: Record<string, any> | undefined) {
  const a = td?.contact_address?.address;
  return a && typeof a === "object" ? (a as { raw_address?: string; location?: unknown }) : undefined;
}

/**
 * The contact address linked to the task takes the address an `update` sends in
 * `task_data.contact_address.address`, in the same transaction as the command and only if the
 * command applied. The new address is geocoded from the queue like the task's.
 */
function contactAddressUpdate(
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
function outcomeStatement(
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
         WHERE id = ? AND state = 'pending' AND ${cond}`,
      )
      .bind(outcome, error, acceptedAt, rejectedAt, now, cmd.id, ...condParams);
  }
  const r = rowOf(actor, cmd, outcome, error, now, now);
  return db
    .prepare(
      `INSERT INTO task_commands (${COMMAND_COLUMNS.join(", ")})
       SELECT ${COMMAND_COLUMNS.map(() => "?").join(", ")} WHERE ${cond}`,
    )
    .bind(...commandValues(r), ...condParams);
}

/** The columns of a command row, in the order `commandValues` gives them. */
const COMMAND_COLUMNS = [
  "id",
  "account_id",
  "task_id",
  "external_id",
  "action",
  "time",
  "assignee_id",
  "task_data",
  "notes",
  "location",
  "user_id",
  "state",
  "error_message",
  "accepted_at",
  "rejected_at",
  "created_at",
  "updated_at",
] as const;

const commandValues = (r: CommandRow) => COMMAND_COLUMNS.map((c) => r[c]);

/** The stored row of a command, as this code writes it (saves a read-back). */
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
 * Outbox rows for an outcome (contract §9): `task_command.accepted|rejected` carry the command
 * with its task inline; `task.state_changed` carries the task. Guarded like the command row.
 */
function outcomeEvents(
  db: D1Database,
  baseUrl: string,
  command: CommandRow,
  task: TaskRow,
  stateChanged: boolean,
  now: number,
  when?: Guard,
): D1PreparedStatement[] {
  const r = eventRender(baseUrl);
  const taskData = serializeTask(r, task);
  const out = [
    eventStatement(db, {
      accountId: command.account_id,
      type: command.state === "accepted" ? "task_command.accepted" : "task_command.rejected",
      objectId: command.id,
      data: { ...serializeCommand(r, command), task: taskData },
      now,
      when,
    }),
  ];
  if (stateChanged) {
    out.push(
      eventStatement(db, {
        accountId: command.account_id,
        type: "task.state_changed",
        objectId: task.id,
        data: taskData,
        now,
        when,
      }),
    );
  }
  return out;
}

export type ApplyOptions = {
  /** Rows exist as `pending` (asynchronous mode) and move to their outcome. */
  pending?: boolean;
  /** Origin for the absolute URLs in event payloads. */
  baseUrl: string;
  /** The task as the caller last saw it (the TaskDO's memory); read from D1 when absent. */
  task?: TaskRow | null;
};

export type AppliedTask = {
  outcomes: CommandOutcome[];
  /** The task after the commands, as stored (null: it does not exist). */
  task: TaskRow | null;
  geocode: boolean;
  rescheduled: boolean;
};

/** Commands per D1 batch: bounds one transaction (a few statements per command). */
const COMMANDS_PER_BATCH = 50;

type Planned = {
  cmd: CommandInput;
  createdAt: number;
  now: number;
  /** Index of the statement whose `changes` tells the outcome, per kind. */
  kind: "rejected" | "guarded";
  rejectedAt?: number;
  updateAt?: number;
  limitAt?: number;
  error?: string;
  before?: TaskRow;
  after?: TaskRow;
  geocode?: boolean;
  rescheduled?: boolean;
  /** The contact address this command re-addressed (geocoded once the command applied). */
  contactAddressId?: string;
};

/**
 * Applies `commands` (all for `taskId`) in order, in as few D1 round trips as it can.
 *
 * The commands are planned against the task as it would be after each previous one (each
 * assumed to succeed), and a chunk of them is sent as ONE batch: every statement of a command
 * is guarded by the version the plan expects, so if one command does not go as planned (the
 * transit/active limit refused it, or another writer moved the task), every later command of
 * the chunk finds its guard false and writes nothing. The results say where the plan broke;
 * the rest is planned again on the task as stored. One round trip per chunk in the common
 * case, and never a command applied on a state it was not decided on.
 *
 * In asynchronous mode the pending rows are read first; a row no longer pending was applied by
 * an earlier delivery and is returned as is. In sync mode a replayed `external_id` never gets
 * here (the service answers it), and a concurrent duplicate is refused by the unique index.
 */
export async function applyToTask(
  env: Env,
  actor: Actor,
  taskId: string,
  commands: CommandInput[],
  opts: ApplyOptions,
): Promise<AppliedTask> {
  const db = env.DB;
  const pending = !!opts.pending;
  const [firstRead, storedRows] = await Promise.all([
    opts.task !== undefined ? opts.task : loadTask(db, actor.accountId, taskId),
    pending
      ? storedCommands(
          env,
          actor.accountId,
          commands.map((c) => c.externalId),
        )
      : [],
  ]);
  let task: TaskRow | null = firstRead;
  const stored = new Map(storedRows.map((r) => [r.external_id, r]));
  const outcomes: CommandOutcome[] = [];
  let geocode = false;
  let rescheduled = false;
  const contactAddresses: string[] = [];
  let next = 0;
  let stale = 0;
  let chunkSize = COMMANDS_PER_BATCH;

  let forceSlow = false;
  while (next < commands.length) {
    // A run of commands that cannot meet the transit/active limit goes as one coalesced write.
    if (!pending && task && !forceSlow && chunkSize > 1) {
      const run = planRun(actor, task, commands, next, chunkSize);
      if (run.length >= 2) {
        const r = await writeRun(db, actor, task, run, opts.baseUrl);
        if (r === "applied") {
          for (const e of run) {
            outcomes.push({
              row: rowOf(actor, e.cmd, e.error ? "rejected" : "accepted", e.error ?? "", e.now, e.now),
              replay: false,
            });
            geocode ||= e.geocode;
            rescheduled ||= e.rescheduled;
          }
          task = run[run.length - 1].after;
          next += run.length;
          stale = 0;
          continue;
        }
        // Not as planned (another writer moved the task, or a duplicate external_id): the
        // command-by-command path below finds out which, on the task as stored.
        forceSlow = true;
        if (r === "stale") task = await loadTask(db, actor.accountId, taskId);
        continue;
      }
    }
    forceSlow = false;
    // Plan a chunk on the predicted task.
    const plan: Planned[] = [];
    const statements: D1PreparedStatement[] = [];
    let predicted = task;
    let k = next;
    for (; k < commands.length && plan.length < chunkSize; k++) {
      const cmd = commands[k];
      const existing = stored.get(cmd.externalId);
      if (existing && existing.state !== "pending") {
        if (plan.length) break; // resolve the planned ones first, in order
        outcomes.push({ row: existing, replay: true });
        next = k + 1;
        continue;
      }
      if (existing) cmd.id = existing.id;
      const now = Date.now();
      const createdAt = existing?.created_at ?? now;
      if (!predicted) {
        const error = "The task does not exist.";
        const guard = { sql: "NOT EXISTS (SELECT 1 FROM tasks WHERE id = ?)", params: [taskId] };
        plan.push({ cmd, createdAt, now, kind: "rejected", rejectedAt: statements.length, error });
        statements.push(outcomeStatement(db, actor, cmd, pending, "rejected", now, error, guard));
        continue;
      }
      const at = {
        sql: "EXISTS (SELECT 1 FROM tasks WHERE id = ? AND version = ?)",
        params: [taskId, predicted.version],
      };
      const decision = decide({
        task: { state: predicted.state, assigneeId: predicted.assignee_id },
        action: cmd.action,
        actor: { userId: actor.userId ?? "", role: actor.role },
        assigneeId: cmd.assigneeId,
        taskData: cmd.taskData as { position?: number },
        account: { allowWorkerReordering: actor.allowWorkerReordering },
        missingRequiredMetafields: [],
      });
      if (!decision.ok) {
        const row = rowOf(actor, cmd, "rejected", decision.error, now, createdAt);
        plan.push({
          cmd,
          createdAt,
          now,
          kind: "rejected",
          rejectedAt: statements.length,
          error: decision.error,
        });
        statements.push(outcomeStatement(db, actor, cmd, pending, "rejected", now, decision.error, at));
        statements.push(...outcomeEvents(db, opts.baseUrl, row, predicted, false, now, at));
        continue;
      }
      const {
        after,
        changes,
        geocode: newAddress,
      } = project(predicted, cmd, decision.state, decision.assigneeId, now);
      const columns = Object.keys(changes);
      let limitSql = "";
      const limitParams: unknown[] = [];
      if (decision.usesTransitSlot && decision.assigneeId) {
        // NULL limit → the comparison is NULL → COALESCE lets it pass (no limit).
        limitSql = ` AND COALESCE((SELECT (SELECT COUNT(*) FROM tasks t2 WHERE t2.account_id = a.id AND t2.assignee_id = ?
            AND t2.state IN ('transit', 'active') AND t2.id <> ?) < a.transit_active_limit FROM accounts a WHERE a.id = ?), 1)`;
        limitParams.push(decision.assigneeId, taskId, actor.accountId);
      }
      const entry: Planned = {
        cmd,
        createdAt,
        now,
        kind: "guarded",
        updateAt: statements.length,
        before: predicted,
        after,
        geocode: newAddress,
        rescheduled: "scheduled_time" in changes,
      };
      statements.push(
        db
          .prepare(
            `UPDATE tasks SET ${columns.map((c) => `${c} = ?`).join(", ")}, version = version + 1, last_command_id = ?
             WHERE id = ? AND version = ?${limitSql}`,
          )
          .bind(
            ...columns.map((c) => (changes as Record<string, unknown>)[c]),
            cmd.id,
            taskId,
            predicted.version,
            ...limitParams,
          ),
      );
      const applied = appliedGuard(taskId, cmd.id);
      statements.push(outcomeStatement(db, actor, cmd, pending, "accepted", now, "", applied));
      const contactUpdate = contactAddressUpdate(db, actor, predicted, cmd, now, applied);
      if (contactUpdate) {
        statements.push(contactUpdate);
        entry.contactAddressId = predicted.contact_address_id!;
      }
      statements.push(
        ...outcomeEvents(
          db,
          opts.baseUrl,
          rowOf(actor, cmd, "accepted", "", now, createdAt),
          after,
          after.state !== predicted.state,
          now,
          applied,
        ),
      );
      if (limitSql) {
        // Only the limit can refuse this update while the version is as planned.
        const limited = limitGuard(taskId, cmd.id, predicted.version);
        entry.limitAt = statements.length;
        statements.push(outcomeStatement(db, actor, cmd, pending, "rejected", now, LIMIT_MESSAGE, limited));
        statements.push(
          ...outcomeEvents(
            db,
            opts.baseUrl,
            rowOf(actor, cmd, "rejected", LIMIT_MESSAGE, now, createdAt),
            predicted,
            false,
            now,
            limited,
          ),
        );
      }
      plan.push(entry);
      predicted = after;
    }
    if (!plan.length) continue;

    let results: D1Result[];
    try {
      results = await db.batch(statements);
    } catch (err) {
      // A new external_id was stored meanwhile by another task's object (the unique index
      // rolled the batch back whole): redo this stretch one command at a time to find it.
      if (!/UNIQUE constraint failed/i.test(String(err))) throw err;
      if (plan.length > 1) {
        chunkSize = 1;
        continue;
      }
      outcomes.push({ row: await replayOnConflict(db, actor, plan[0].cmd, err), replay: true });
      next += 1;
      chunkSize = COMMANDS_PER_BATCH;
      continue;
    }

    // Walk the plan until it breaks.
    let broke = false;
    for (const p of plan) {
      if (p.kind === "rejected") {
        if (results[p.rejectedAt!].meta.changes !== 1) {
          broke = true;
          break;
        }
        outcomes.push({ row: rowOf(actor, p.cmd, "rejected", p.error!, p.now, p.createdAt), replay: false });
      } else if (results[p.updateAt!].meta.changes === 1) {
        task = p.after!;
        geocode ||= !!p.geocode;
        if (p.contactAddressId) contactAddresses.push(p.contactAddressId);
        rescheduled ||= !!p.rescheduled;
        outcomes.push({ row: rowOf(actor, p.cmd, "accepted", "", p.now, p.createdAt), replay: false });
      } else if (p.limitAt !== undefined && results[p.limitAt].meta.changes === 1) {
        outcomes.push({
          row: rowOf(actor, p.cmd, "rejected", LIMIT_MESSAGE, p.now, p.createdAt),
          replay: false,
        });
        task = p.before!;
        next += 1;
        broke = true; // later commands were planned on the refused update
        stale = 0;
        break;
      } else {
        broke = true;
        break;
      }
      next += 1;
      stale = 0;
    }
    if (broke) {
      // Either a planned outcome did not hold (another writer moved the task) or the limit
      // changed the course: continue from the task as stored.
      if (++stale > 5) throw new Error(`task ${taskId} keeps changing; commands not applied`);
      task = await loadTask(db, actor.accountId, taskId);
    }
    chunkSize = COMMANDS_PER_BATCH;
  }
  if (contactAddresses.length) {
    await enqueueGeocodeRetries(
      env.GEOCODE_QUEUE,
      contactAddresses.map((contactAddressId) => ({ accountId: actor.accountId, contactAddressId })),
    );
  }
  return { outcomes, task, geocode, rescheduled };
}

type RunEntry = {
  cmd: CommandInput;
  now: number;
  /** Set for a command the state machine refuses (a rejected row, no change). */
  error?: string;
  before: TaskRow;
  after: TaskRow;
  changes: Partial<TaskRow>;
  geocode: boolean;
  rescheduled: boolean;
};

/**
 * The longest run of commands, from `from`, that can be written together: each decided on the
 * task as the previous ones leave it, and none moving into transit/active (the limit is checked
 * per command, in the command-by-command path).
 */
function planRun(
  actor: Actor,
  start: TaskRow,
  commands: CommandInput[],
  from: number,
  max: number,
): RunEntry[] {
  const run: RunEntry[] = [];
  let task = start;
  for (let k = from; k < commands.length && run.length < max; k++) {
    const cmd = commands[k];
    const now = Date.now();
    const decision = decide({
      task: { state: task.state, assigneeId: task.assignee_id },
      action: cmd.action,
      actor: { userId: actor.userId ?? "", role: actor.role },
      assigneeId: cmd.assigneeId,
      taskData: cmd.taskData as { position?: number },
      account: { allowWorkerReordering: actor.allowWorkerReordering },
      missingRequiredMetafields: [],
    });
    if (!decision.ok) {
      run.push({
        cmd,
        now,
        error: decision.error,
        before: task,
        after: task,
        changes: {},
        geocode: false,
        rescheduled: false,
      });
      continue;
    }
    if (decision.usesTransitSlot && decision.assigneeId) break;
    // A run writes the task alone; a contact address change goes command by command.
    if (contactAddressInput(cmd.action === "update" ? (cmd.taskData as Record<string, any>) : undefined))
      break;
    const p = project(task, cmd, decision.state, decision.assigneeId, now);
    run.push({
      cmd,
      now,
      before: task,
      after: p.after,
      changes: p.changes,
      geocode: p.geocode,
      rescheduled: "scheduled_time" in p.changes,
    });
    task = p.after;
  }
  return run;
}

/**
 * A run in one transaction of three statements: the task's final state (guarded by the
 * version the run was planned on), every command row, every event (one JSON parameter each,
 * guarded by "the update happened"). Same rows as command by command, fewer statements.
 */
async function writeRun(
  db: D1Database,
  actor: Actor,
  start: TaskRow,
  run: RunEntry[],
  baseUrl: string,
): Promise<"applied" | "stale" | "duplicate"> {
  const accepted = run.filter((e) => !e.error);
  const last = run[run.length - 1];
  const statements: D1PreparedStatement[] = [];
  let guard: Guard;
  if (accepted.length) {
    const changes: Partial<TaskRow> = {};
    for (const e of accepted) Object.assign(changes, e.changes);
    const final = last.after;
    const columns = Object.keys(changes);
    const lastId = accepted[accepted.length - 1].cmd.id;
    statements.push(
      db
        .prepare(
          `UPDATE tasks SET ${columns.map((c) => `${c} = ?`).join(", ")}, version = version + ?, last_command_id = ?
           WHERE id = ? AND version = ?`,
        )
        .bind(
          ...columns.map((c) => (final as Record<string, unknown>)[c]),
          accepted.length,
          lastId,
          start.id,
          start.version,
        ),
    );
    guard = appliedGuard(start.id, lastId);
  } else {
    guard = {
      sql: "EXISTS (SELECT 1 FROM tasks WHERE id = ? AND version = ?)",
      params: [start.id, start.version],
    };
  }
  const rows = run.map((e) =>
    rowOf(actor, e.cmd, e.error ? "rejected" : "accepted", e.error ?? "", e.now, e.now),
  );
  statements.push(
    db
      .prepare(
        `INSERT INTO task_commands (${COMMAND_COLUMNS.join(", ")})
         SELECT ${COMMAND_COLUMNS.map((_, i) => `value ->> ${i}`).join(", ")}
         FROM json_each(?) WHERE ${guard.sql}`,
      )
      .bind(JSON.stringify(rows.map(commandValues)), ...guard.params),
  );
  const r = eventRender(baseUrl);
  const items: EventItem[] = [];
  run.forEach((e, i) => {
    const taskData = serializeTask(r, e.after);
    items.push({
      type: e.error ? "task_command.rejected" : "task_command.accepted",
      objectId: e.cmd.id,
      data: { ...serializeCommand(r, rows[i]), task: taskData },
    });
    if (!e.error && e.after.state !== e.before.state) {
      items.push({ type: "task.state_changed", objectId: start.id, data: taskData });
    }
  });
  statements.push(...bulkEventStatements(db, actor.accountId, items, { now: last.now, when: guard }));
  let results: D1Result[];
  try {
    results = await db.batch(statements);
  } catch (err) {
    if (/UNIQUE constraint failed/i.test(String(err))) return "duplicate";
    throw err;
  }
  const rowsWritten = results[accepted.length ? 1 : 0].meta.changes;
  return rowsWritten === run.length ? "applied" : "stale";
}

export type AppliedOne =
  | (AppliedTask & { error?: undefined })
  | {
      error: Record<string, string[]>;
      task: TaskRow | null;
      outcomes: [];
      geocode: false;
      rescheduled: false;
    };

const DOES_NOT_EXIST = "Invalid hyperlink - Object does not exist.";

/**
 * One command, checked by the task's object itself instead of by lookups beforehand (the
 * phone's common case: one round trip to D1 when the object remembers its task). The task
 * must be of the caller's account, and a reused `external_id` must name the same task and
 * action; either failure is a field error, with nothing applied.
 */
export async function applyOne(
  env: Env,
  actor: Actor,
  taskId: string,
  cmd: CommandInput,
  opts: ApplyOptions,
): Promise<AppliedOne> {
  let task = opts.task !== undefined ? opts.task : await loadTask(env.DB, actor.accountId, taskId);
  if (task && task.account_id !== actor.accountId) task = null;
  if (!task) {
    const stale = opts.task !== undefined ? await loadTask(env.DB, actor.accountId, taskId) : null;
    if (!stale)
      return {
        error: { task: [DOES_NOT_EXIST] },
        task: null,
        outcomes: [],
        geocode: false,
        rescheduled: false,
      };
    task = stale;
  }
  const applied = await applyToTask(env, actor, taskId, [cmd], { ...opts, task });
  const [outcome] = applied.outcomes;
  if (outcome.replay && (outcome.row.task_id !== taskId || outcome.row.action !== cmd.action)) {
    return {
      error: { external_id: ["A command with this external_id already exists for another task or action."] },
      task: applied.task,
      outcomes: [],
      geocode: false,
      rescheduled: false,
    };
  }
  return applied;
}

/**
 * The same external_id was written meanwhile for another task (in another Durable Object):
 * the unique index rolled this batch back whole. Report what is stored.
 */
async function replayOnConflict(
  db: D1Database,
  actor: Actor,
  cmd: CommandInput,
  err: unknown,
): Promise<CommandRow> {
  if (!/UNIQUE constraint failed/i.test(String(err))) throw err;
  const row = await loadCommand(db, actor.accountId, cmd.externalId);
  if (!row) throw err;
  return row;
}

/** The move a `scheduled` task makes by itself at its scheduled_time, recorded as a system command. */
export async function applyScheduledMove(
  env: Env,
  accountId: string,
  taskId: string,
  baseUrl: string,
): Promise<"moved" | "not_due" | "gone" | "changed"> {
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
