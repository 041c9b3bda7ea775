/**
 * The pure part of applying commands: what a command does to the task (`project`), the
 * state machine's input for it (`decisionInput`), and the longest run of commands that can be
 * written together (`planRun`). No I/O: the statements and the loop that sends them are in
 * statements.ts and loop.ts.
 */
import {
  checkMetafields,
  type MetafieldDefinition,
  missingBeforeComplete,
  notEditableByWorker,
} from "../../../domain/metafields";
import { decide, type TaskState } from "../../../domain/task-state-machine";
import { addressOf, type TaskRow } from "../../tasks/types";
import type { Actor, CommandInput } from "../types";

export const HMS = /^(\d{1,3}):([0-5]\d):([0-5]\d)$/;
export const durationToSeconds = (d: string) => {
  const m = HMS.exec(d);
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : null;
};

/**
 * The task as the command leaves it, and the columns that differ. The UPDATE writes exactly
 * these columns, and the events render exactly this row, so what is stored and what is
 * reported cannot disagree.
 */
export function project(
  task: TaskRow,
  cmd: CommandInput,
  state: TaskState,
  assigneeId: string | null,
  now: number,
) {
  const changes: Partial<TaskRow> = { state, assignee_id: assigneeId, updated_at: now };
  let geocode = false;
  if (carriesTaskData(cmd.action) || cmd.places) {
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
  // As stored once the command applies: its UPDATE also names it the task's last command.
  const after: TaskRow = { ...task, ...changes, version: task.version + 1, last_command_id: cmd.id };
  return { after, changes, geocode };
}

/** The address an `update` sends for the task's contact address (interface 2.7), if any. */
export function contactAddressInput(td: Record<string, any> | undefined) {
  const a = td?.contact_address?.address;
  return a && typeof a === "object" ? (a as { raw_address?: string; location?: unknown }) : undefined;
}

/**
 * The account's task metafield definitions (contract §12) and which of the users that
 * `assignee` metafields of the commands name belong to the account: read with the task, so
 * the checks below see the definitions as they are when the command is applied.
 */
export type MetafieldContext = {
  definitions: readonly MetafieldDefinition[];
  accountUsers: ReadonlySet<string>;
};
export const NO_METAFIELDS: MetafieldContext = { definitions: [], accountUsers: new Set() };

/** The actions whose `task_data` is applied to the task (interface 2.6: `update`, and `reassign`). */
export const carriesTaskData = (action: string) => action === "update" || action === "reassign";

/** Why an `update` or `reassign` command's `task_data.metafields` cannot be applied, or null. */
export function metafieldProblem(actor: Actor, task: TaskRow, cmd: CommandInput, mf: MetafieldContext) {
  if (!carriesTaskData(cmd.action)) return null;
  const sent = (cmd.taskData as Record<string, unknown>).metafields;
  if (!sent || typeof sent !== "object" || Array.isArray(sent)) return null;
  const input = sent as Record<string, unknown>;
  if (actor.role === "worker") {
    const locked = notEditableByWorker(input, mf.definitions);
    if (locked.length) return `Metafield "${locked[0]}" is not editable.`;
  }
  const check = checkMetafields(input, mf.definitions, JSON.parse(task.metafields || "{}"));
  const first = Object.entries(check.errors)[0];
  if (first) return `Metafield "${first[0]}": ${first[1][0]}`;
  for (const [key, id] of check.userIds) {
    if (!mf.accountUsers.has(id)) return `Metafield "${key}": Expected a user of this account.`;
  }
  return null;
}

/** The state machine's input for `cmd` on `task` as `actor` (one builder for every path). */
export function decisionInput(
  actor: Actor,
  task: TaskRow,
  cmd: CommandInput,
  mf: MetafieldContext = NO_METAFIELDS,
) {
  return {
    task: { state: task.state, assigneeId: task.assignee_id },
    action: cmd.action,
    actor: { userId: actor.userId ?? "", role: actor.role },
    assigneeId: cmd.assigneeId,
    taskData: cmd.taskData as { position?: number },
    account: { allowWorkerReordering: actor.allowWorkerReordering, failedReasons: actor.failedReasons },
    notes: cmd.notes,
    taskDataError: metafieldProblem(actor, task, cmd, mf),
    missingRequiredMetafields:
      cmd.action === "complete"
        ? missingBeforeComplete(JSON.parse(task.metafields || "{}"), mf.definitions)
        : [],
  };
}

export type RunEntry = {
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
export function planRun(
  actor: Actor,
  start: TaskRow,
  commands: CommandInput[],
  from: number,
  max: number,
  clock: () => number = Date.now,
  mf: MetafieldContext = NO_METAFIELDS,
): RunEntry[] {
  const run: RunEntry[] = [];
  let task = start;
  for (let k = from; k < commands.length && run.length < max; k++) {
    const cmd = commands[k];
    const now = clock();
    const decision = decide(decisionInput(actor, task, cmd, mf));
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
