import { taskWriter } from "../../durable-objects/task/client";
import { ApiError, type ErrorCode, notFound, ValidationError } from "../../http/errors";
import { uuidv7 } from "../../lib/ids";
import { settleSeconds } from "../../lib/settle";
import { enqueueGeocodeRetries, type GeocodeQueue } from "../../queues/geocode/message";
import type { TaskListQueryInput, TaskWriteBody } from "../../schemas/tasks";
import { GeocodeSession } from "../addresses/geocode-session";
import type { Geocoder } from "../addresses/geocoding/types";
import { isDispatcher, type Principal } from "../auth/principal";
import { eventStatement } from "../events/outbox";
import {
  addressColumns,
  bindRefs,
  checkDraftMetafields,
  checkWindow,
  creationState,
  geocodeDrafts,
  hasErrors,
  RefSet,
  readTaskBody,
  resolveRefs,
  type TaskDraft,
} from "./input";
import { type Beside, planTaskList, runTaskPage } from "./list";
import { eventRender, serializeTask } from "./serialize";
import { dbValue, parseJson, TASK_COLUMNS, TASK_DEFAULTS, type TaskRow, type TaskValues } from "./types";
import type { DeleteTaskResult, TaskChanges, UpdateTaskResult, WriteFailure } from "./write";

export { serializeTask } from "./serialize";
export type { TaskRow } from "./types";

/**
 * What tests swap: the geocoder and the queue retries go to. Defaults come from `env`.
 * Imports (contract §21) also pass the id a new task gets (derived from the import's row, so a
 * replayed row meets its own primary key), the import the tasks come from, and `dryRun`
 * (validate everything, write nothing).
 */
export type TaskDeps = {
  geocoder?: Geocoder;
  geocodeQueue?: GeocodeQueue;
  id?: string;
  taskImportId?: string | null;
  dryRun?: boolean;
};

export type WriteCtx = { zone: string | null; baseUrl: string };

/** A new row from validated values (JSON columns as text). */
export function newTaskRow(
  values: TaskValues,
  meta: {
    id: string;
    accountId: string;
    createdBy: string | null;
    now: number;
    taskImportId?: string | null;
  },
): TaskRow {
  const row: Record<string, unknown> = {
    id: meta.id,
    account_id: meta.accountId,
    created_by: meta.createdBy,
    recurrence_id: null,
    calendar_time: null,
    task_import_id: meta.taskImportId ?? null,
    version: 1,
    created_at: meta.now,
    updated_at: meta.now,
  };
  for (const [k, v] of Object.entries(values)) row[k] = dbValue(k, v);
  return row as TaskRow;
}

export function insertTaskStatement(db: D1Database, row: TaskRow): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO tasks (${TASK_COLUMNS.join(", ")}) VALUES (${TASK_COLUMNS.map(() => "?").join(", ")})`,
    )
    .bind(...TASK_COLUMNS.map((c) => row[c] ?? null));
}

/** Full values of a new task from a validated draft (defaults for what was not sent). */
export function creationValues(d: TaskDraft, now: number): TaskValues | null {
  const values = {
    ...TASK_DEFAULTS,
    ...d.values,
    ...(d.address ? addressColumns(d.address) : {}),
  } as TaskValues;
  const state = creationState(d, values, now);
  checkWindow(d.errors, values);
  if (!state || hasErrors(d.errors)) return null;
  values.state = state;
  return values;
}

/**
 * A task made for an occurrence of a recurrence (contract §20): it carries the recurrence's link
 * and the occurrence's local time, and `claim` (the occurrence's unique row) joins the task's
 * batch, so the task exists exactly when its occurrence is claimed.
 */
export type RecurrenceMark = {
  recurrenceId: string;
  calendarTime: string;
  /** The statements that lead the batch: the claim (and, for the shortcut, the recurrence itself). */
  claim: (objectId: string, now: number) => D1PreparedStatement[];
};

/** Validation shared by POST /tasks/ and recurrence templates: everything but geocoding. */
async function readValidTask(env: Env, principal: Principal, body: TaskWriteBody, zone: string | null) {
  const refs = new RefSet();
  const draft = readTaskBody(body, { mode: "create", zone, refs });
  bindRefs(draft, await resolveRefs(env.DB, principal.accountId, refs), principal);
  await checkDraftMetafields(env.DB, principal.accountId, [draft]);
  if (hasErrors(draft.errors)) throw new ValidationError(draft.errors);
  return draft;
}

/**
 * Checks a body exactly as POST /tasks/ does, without storing or geocoding anything (a
 * recurrence's template, contract §20). Throws the same ValidationError.
 */
export async function validateTaskBody(
  env: Env,
  principal: Principal,
  body: TaskWriteBody,
  zone: string | null,
) {
  const draft = await readValidTask(env, principal, body, zone);
  checkWindow(draft.errors, { complete_after: null, complete_before: null, ...draft.values });
  if (hasErrors(draft.errors)) throw new ValidationError(draft.errors);
}

/** POST /tasks/ (interface §4.4, contract §5). With `deps.dryRun`: checks only, returns null. */
export async function createTask(
  env: Env,
  principal: Principal,
  body: TaskWriteBody,
  ctx: WriteCtx,
  deps: TaskDeps & { dryRun: true },
  opts?: { recurrence?: RecurrenceMark },
): Promise<null>;
export async function createTask(
  env: Env,
  principal: Principal,
  body: TaskWriteBody,
  ctx: WriteCtx,
  deps?: TaskDeps,
  opts?: { recurrence?: RecurrenceMark },
): Promise<TaskRow>;
export async function createTask(
  env: Env,
  principal: Principal,
  body: TaskWriteBody,
  ctx: WriteCtx,
  deps: TaskDeps = {},
  opts: { recurrence?: RecurrenceMark } = {},
): Promise<TaskRow | null> {
  const draft = await readValidTask(env, principal, body, ctx.zone);
  const now = Date.now();
  if (deps.dryRun) {
    // Everything but geocoding and the write: the state and window rules too.
    if (!creationValues(draft, now)) throw new ValidationError(draft.errors);
    return null;
  }
  await geocodeDrafts([draft], GeocodeSession.fromEnv(env, deps.geocoder), now);
  const values = creationValues(draft, now);
  if (!values) throw new ValidationError(draft.errors);

  const row = newTaskRow(values, {
    id: deps.id ?? uuidv7(now),
    accountId: principal.accountId,
    createdBy: principal.userId,
    now,
    taskImportId: deps.taskImportId,
  });
  const mark = opts.recurrence;
  if (mark) {
    row.recurrence_id = mark.recurrenceId;
    row.calendar_time = JSON.stringify(mark.calendarTime);
  }
  await env.DB.batch([
    ...(mark ? mark.claim(row.id, now) : []),
    insertTaskStatement(env.DB, row),
    eventStatement(env.DB, {
      accountId: row.account_id,
      type: "task.created",
      objectId: row.id,
      data: serializeTask(eventRender(ctx.baseUrl), row),
      now,
    }),
  ]);
  if (row.state === "scheduled") await armSchedule(env, row, ctx.baseUrl);
  if (draft.address?.retry) {
    await enqueueGeocodeRetries(deps.geocodeQueue ?? env.GEOCODE_QUEUE, [
      { accountId: row.account_id, taskId: row.id, baseUrl: ctx.baseUrl },
    ]);
  }
  return row;
}

/** A task the caller may see: its account's, and for a worker only its own (else 404). */
export async function getTask(db: D1Database, principal: Principal, id: string): Promise<TaskRow> {
  return visibleTask(principal, await readTask(db, principal.accountId, id).first<TaskRow>());
}

/** The statement reading task `id` of an account (GET /tasks/{id}/ sends it in its first batch). */
export const readTask = (db: D1Database, accountId: string, id: string) =>
  db.prepare("SELECT * FROM tasks WHERE id = ? AND account_id = ?").bind(id, accountId);

/** `row` if the caller may see it (a worker sees only the tasks assigned to it), else 404. */
export function visibleTask(principal: Principal, row: TaskRow | null | undefined): TaskRow {
  if (!row || row.account_id !== principal.accountId) throw notFound();
  if (!isDispatcher(principal) && row.assignee_id !== principal.userId) throw notFound();
  return row;
}

/** GET /tasks/ (interface §4.6). */
export async function listTasks(
  env: Env,
  principal: Principal,
  q: TaskListQueryInput,
  ctx: { zone: string | null; url: string; beside?: Beside },
) {
  const plan = planTaskList(q, { principal, zone: ctx.zone, settleSeconds: settleSeconds(env) });
  const page = await runTaskPage(env.DB, plan, {
    cursor: q.cursor,
    pageSize: q.page_size,
    url: ctx.url,
    beside: ctx.beside,
  });
  return { page, expand: plan.expand };
}

/** Turns a failure that crossed the Durable Object's RPC boundary back into the API's errors. */
function raise(f: WriteFailure): never {
  if (f.status === 400) throw new ValidationError(f.body as never);
  if (f.status === 404) throw notFound();
  const b = f.body as { detail: string; code: ErrorCode };
  throw new ApiError(f.status, b.code, b.detail);
}

/**
 * PATCH / PUT /tasks/{id}/ (interface §4.5). The body is validated and geocoded here; the
 * write itself happens in the task's Durable Object (contract §6).
 */
export async function updateTask(
  env: Env,
  principal: Principal,
  id: string,
  body: TaskWriteBody & { state?: unknown },
  mode: "patch" | "put",
  ctx: WriteCtx,
  deps: TaskDeps = {},
) {
  // Not found comes before "invalid" (as DRF looks the object up first).
  const current = await getTask(env.DB, principal, id);
  const refs = new RefSet();
  const draft = readTaskBody(body, { mode, zone: ctx.zone, refs });
  bindRefs(draft, await resolveRefs(env.DB, principal.accountId, refs), principal);
  await checkDraftMetafields(env.DB, principal.accountId, [draft], [parseJson(current.metafields, {})]);
  if (hasErrors(draft.errors)) throw new ValidationError(draft.errors);
  await geocodeDrafts([draft], GeocodeSession.fromEnv(env, deps.geocoder));
  const values: Partial<TaskValues> = {
    ...draft.values,
    ...(draft.address ? addressColumns(draft.address) : {}),
  };
  delete values.assignee_id;
  const changes: TaskChanges = {
    values,
    addressInput: draft.addressInput,
    assignee: draft.assignee,
    fill: draft.fill,
    geocodeRetry: draft.address?.retry ?? false,
  };
  // RPC wraps the result type (Disposable); it is the plain union that updateTaskInPlace returns.
  const result = (await taskWriter(env, id).update({
    principal,
    id,
    mode,
    changes,
    baseUrl: ctx.baseUrl,
    timeZone: ctx.zone,
  })) as UpdateTaskResult;
  if (!result.ok) raise(result);
  // The task's object moves a scheduled task at its time; a new time re-arms it.
  if (result.state === "scheduled") {
    await taskWriter(env, id).armSchedule({
      accountId: principal.accountId,
      taskId: id,
      at: result.scheduledTime,
      baseUrl: ctx.baseUrl,
    });
  }
  if (result.geocodeRetry) {
    await enqueueGeocodeRetries(deps.geocodeQueue ?? env.GEOCODE_QUEUE, [
      { accountId: principal.accountId, taskId: id, baseUrl: ctx.baseUrl },
    ]);
  }
  return result.task;
}

/** DELETE /tasks/{id}/, through the task's Durable Object. */
export async function deleteTask(env: Env, principal: Principal, id: string, ctx: { baseUrl: string }) {
  await getTask(env.DB, principal, id);
  const stub = taskWriter(env, id);
  const result = (await stub.destroy({ principal, id, baseUrl: ctx.baseUrl })) as DeleteTaskResult;
  if (!result.ok) raise(result);
  await stub.armSchedule({ accountId: principal.accountId, taskId: id, at: null });
}

/** A `scheduled` task moves by itself at its scheduled_time: its Durable Object keeps the alarm. */
export async function armSchedule(
  env: Env,
  row: Pick<TaskRow, "id" | "account_id" | "scheduled_time">,
  baseUrl: string,
) {
  await taskWriter(env, row.id).armSchedule({
    accountId: row.account_id,
    taskId: row.id,
    at: row.scheduled_time,
    baseUrl,
  });
}
