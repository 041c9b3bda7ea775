import type { ErrorCode, FieldErrors } from "../../http/errors";
import type { RenderCtx } from "../../http/serialize";
import { sameAddressInput } from "../addresses/geocode-session";
import type { Principal } from "../auth/principal";
import { guardedEvent } from "./events";
import { addError, checkWindow, MSG } from "./input";
import { eventRender, type SerializedTask, serializeTask } from "./serialize";
import {
  type AddressInput,
  addressOf,
  contactOf,
  dbValue,
  isEmptyContact,
  parseJson,
  type StoredContact,
  TASK_COLUMNS,
  TASK_DEFAULTS,
  type TaskRow,
  type TaskValues,
} from "./types";

// Writes to an EXISTING task. These functions run inside the task's Durable Object (TaskDO
// calls them through `serialize`, so two writes to one task never interleave, contract §6);
// their arguments and results are plain data because they cross an RPC boundary, where
// exceptions would lose their type.
//
// Writers that cannot go through one task's object (an order upsert touches many tasks in one
// D1 transaction; the geocode queue) are ordered against these by the `version` column: every
// write bumps it, and the write here is a compare-and-set on the version it read, retried on
// a conflict. So nothing is ever lost between a read and a write, whoever the other writer is.

export type TaskChanges = {
  /** Columns the request sets (address columns already geocoded). */
  values: Partial<TaskValues>;
  /** The address as sent, to keep the stored geocoding when the same address is sent again. */
  addressInput?: AddressInput;
  /** The assignee the body names (assignment itself is a task command; equal is fine). */
  assignee?: string | null;
  /** PATCH: the contact of a linked contact address, used if the task has no contact. */
  fill?: { contact?: StoredContact };
  /** The new address waits for the geocoder (failed temporarily or deferred). */
  geocodeRetry?: boolean;
};

export type UpdateTaskArgs = {
  principal: Principal;
  id: string;
  mode: "patch" | "put";
  changes: TaskChanges;
  baseUrl: string;
  timeZone: string | null;
};

export type DeleteTaskArgs = { principal: Principal; id: string; baseUrl: string };

export type WriteFailure = {
  ok: false;
  status: 400 | 404 | 409;
  body: FieldErrors | { detail: string; code: ErrorCode };
};
export type UpdateTaskResult =
  | { ok: true; task: SerializedTask; geocodeRetry: boolean; state: string; scheduledTime: number | null }
  | WriteFailure;
export type DeleteTaskResult = { ok: true } | WriteFailure;

const MAX_ATTEMPTS = 5;
const NOT_FOUND: WriteFailure = { ok: false, status: 404, body: { detail: "Not found.", code: "not_found" } };
const CONFLICT: WriteFailure = {
  ok: false,
  status: 409,
  body: { detail: "The task kept changing while it was written; try again.", code: "conflict" },
};

/** Columns an update never sets: identity, bookkeeping and read-only links. */
const NOT_UPDATABLE = [
  "id",
  "account_id",
  "created_by",
  "recurrence_id",
  "calendar_time",
  "task_import_id",
  "version",
  "last_command_id",
  "created_at",
  "updated_at",
] as const;
type Updatable = Exclude<(typeof TASK_COLUMNS)[number], (typeof NOT_UPDATABLE)[number]>;

/** Columns an update may set: every column of `tasks` but those above. */
const UPDATABLE = TASK_COLUMNS.filter(
  (c): c is Updatable => !(NOT_UPDATABLE as readonly string[]).includes(c),
);

export async function readTask(db: D1Database, accountId: string, id: string) {
  return db
    .prepare("SELECT * FROM tasks WHERE id = ? AND account_id = ?")
    .bind(id, accountId)
    .first<TaskRow>();
}

export function valuesOf(row: TaskRow): TaskValues {
  return {
    state: row.state,
    category: row.category,
    description: row.description,
    address: addressOf(row),
    geocoded_at: row.geocoded_at,
    geocode_failed_at: row.geocode_failed_at,
    contact: contactOf(row),
    complete_after: row.complete_after,
    complete_before: row.complete_before,
    scheduled_time: row.scheduled_time,
    duration_seconds: row.duration_seconds,
    assignee_id: row.assignee_id,
    order_id: row.order_id,
    order_index: row.order_index,
    position: row.position,
    metafields: parseJson(row.metafields, {}),
    route_id: row.route_id,
    signers: parseJson(row.signers, []),
    form_default_values: parseJson(row.form_default_values, {}) ?? {},
    contact_address_id: row.contact_address_id,
    contact_address_external_id: row.contact_address_external_id,
    client_id: row.client_id,
  };
}

/** The row `values` describe, stored over `row` (JSON columns as text). */
export function withValues(row: TaskRow, values: Partial<TaskValues>): TaskRow {
  const out: Record<string, unknown> = { ...row };
  for (const [k, v] of Object.entries(values)) if (v !== undefined) out[k] = dbValue(k, v);
  return out as TaskRow;
}

/** A compare-and-set UPDATE of every updatable column, from version `expected`. */
export function casUpdateStatement(db: D1Database, next: TaskRow, expected: number): D1PreparedStatement {
  const sets = UPDATABLE.map((c) => `${c} = ?`).join(", ");
  return db
    .prepare(`UPDATE tasks SET ${sets}, version = ?, updated_at = ? WHERE id = ? AND version = ?`)
    .bind(...UPDATABLE.map((c) => next[c] ?? null), next.version, next.updated_at, next.id, expected);
}

export const versionGuard = (id: string, version: number) => ({
  sql: "EXISTS (SELECT 1 FROM tasks WHERE id = ? AND version = ?)",
  params: [id, version],
});

/** PATCH / PUT of one task (interface §4.5). Runs inside the task's Durable Object. */
export async function updateTaskInPlace(env: Env, args: UpdateTaskArgs): Promise<UpdateTaskResult> {
  const { principal, id, mode, changes } = args;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const row = await readTask(env.DB, principal.accountId, id);
    if (!row) return NOT_FOUND;
    const errors: FieldErrors = {};
    if (changes.assignee !== undefined && changes.assignee !== row.assignee_id) {
      addError(errors, "assignee", MSG.assigneeChange);
    }
    const current = valuesOf(row);
    // PUT replaces every writable field; what it leaves out takes its default. State and
    // assignee are not writable here, so they stay.
    const base: TaskValues =
      mode === "put"
        ? {
            ...current,
            ...TASK_DEFAULTS,
            state: row.state,
            assignee_id: row.assignee_id,
            order_index: row.order_index,
          }
        : current;
    const next: TaskValues = { ...base, ...stripUndefined(changes.values) };
    next.state = row.state;
    next.assignee_id = row.assignee_id;
    let geocodeRetry = changes.geocodeRetry ?? false;
    if (
      changes.addressInput &&
      row.geocoded_at !== null &&
      sameAddressInput(current.address, changes.addressInput)
    ) {
      // The same address again: keep its geocoding instead of redoing it (and moving geocoded_at).
      next.address = current.address;
      next.geocoded_at = row.geocoded_at;
      next.geocode_failed_at = row.geocode_failed_at;
      geocodeRetry = false;
    }
    if (changes.fill?.contact && isEmptyContact(next.contact)) next.contact = changes.fill.contact;
    // A task keeps its place in an order's tasks_data only while it stays in that order.
    next.order_index = next.order_id === row.order_id ? row.order_index : null;
    checkWindow(errors, next);
    // A scheduled task moves at its scheduled_time; without one it would wait forever.
    if (next.state === "scheduled" && next.scheduled_time === null) {
      addError(errors, "scheduled_time", MSG.scheduledNeedsTime);
    }
    if (Object.keys(errors).length) return { ok: false, status: 400, body: errors };

    const now = Date.now();
    const nextRow: TaskRow = { ...withValues(row, next), version: row.version + 1, updated_at: now };
    const render: RenderCtx = { baseUrl: args.baseUrl, timeZone: args.timeZone };
    const [, update] = await env.DB.batch([
      guardedEvent(
        env.DB,
        {
          accountId: row.account_id,
          type: "task.updated",
          objectId: id,
          data: serializeTask(eventRender(args.baseUrl), nextRow),
          now,
        },
        versionGuard(id, row.version),
      ),
      casUpdateStatement(env.DB, nextRow, row.version),
    ]);
    // `changes` counts the rows the metafield-index triggers write too: > 0 is "the task was written".
    if (update.meta.changes > 0) {
      return {
        ok: true,
        task: serializeTask(render, nextRow),
        geocodeRetry,
        state: nextRow.state,
        scheduledTime: nextRow.scheduled_time,
      };
    }
    // Another writer moved the version between our read and write: read again.
  }
  return CONFLICT;
}

/** DELETE of one task. Runs inside the task's Durable Object. */
export async function deleteTaskInPlace(env: Env, args: DeleteTaskArgs): Promise<DeleteTaskResult> {
  const { principal, id } = args;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const row = await readTask(env.DB, principal.accountId, id);
    if (!row) return NOT_FOUND;
    const now = Date.now();
    const [, del] = await env.DB.batch([
      guardedEvent(
        env.DB,
        {
          accountId: row.account_id,
          type: "task.deleted",
          objectId: id,
          data: serializeTask(eventRender(args.baseUrl), row),
          now,
        },
        versionGuard(id, row.version),
      ),
      env.DB.prepare("DELETE FROM tasks WHERE id = ? AND version = ?").bind(id, row.version),
    ]);
    if (del.meta.changes > 0) return { ok: true };
  }
  return CONFLICT;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
