import { accountEnv } from "../../db/shards";
/**
 * Orders and their tasks (interface §2.5, §4.8; contract §7).
 *
 * Every order is written in ONE D1 batch (one transaction): the order, its new tasks, the
 * updates of its existing tasks, the cancellations and all their events. Validation of every
 * order of a request happens before the first write, so an invalid item stores nothing.
 *
 * Upsert by external_id without a read-then-write race:
 *  - the order row is `INSERT ... ON CONFLICT(account_id, external_id) DO UPDATE` (the unique
 *    index decides, not a prior read);
 *  - every later statement names the order as `(SELECT id FROM orders WHERE account_id = ? AND
 *    external_id = ?)`, so it reaches whichever row won;
 *  - tasks_data[i] is matched on (order_id, order_index = i): first an UPDATE of the tasks that
 *    exist at those indexes, then an `INSERT ... SELECT ... WHERE NOT EXISTS` of the others. Inside
 *    one transaction nothing can slip between the two, so two concurrent POSTs of the same order
 *    end with one order and one task per index (the later one's fields win).
 * The read before the batch only plans the work (which indexes are new, who auto-assign picks,
 * event payloads); correctness does not depend on it.
 *
 * Tasks and events go through `json_each` over a JSON parameter, in chunks: an order of 500
 * tasks is a handful of statements, not a thousand (D1 bounds queries per invocation and
 * parameters per query).
 */

import { notFound, ValidationError } from "../../http/errors";
import { uuidv7 } from "../../lib/ids";
import { pool } from "../../lib/pool";
import { enqueueGeocodeRetries, type GeocodeMessage } from "../../queues/geocode/message";
import type { OrderWriteBody } from "../../schemas/orders";
import { GeocodeSession } from "../addresses/geocode-session";
import type { Principal } from "../auth/principal";
import { metafieldErrors } from "../metafields";
import { armSchedule, creationValues, newTaskRow, type RecurrenceMark, type TaskDeps } from "../tasks";
import { bulkEvents, type EventItem, guardedEvent } from "../tasks/events";
import {
  addError,
  addressColumns,
  bindRefs,
  checkDraftMetafields,
  geocodeDrafts,
  MSG,
  RefSet,
  resolveRefs,
  type TaskDraft,
} from "../tasks/input";
import { eventRender, serializeTask } from "../tasks/serialize";
import { dbValue, NOT_STARTED_STATES, TASK_COLUMNS, type TaskRow, type TaskValues } from "../tasks/types";
import { withValues } from "../tasks/write";
import { pickAssignees } from "./assign";
import {
  type OrderCols,
  type OrderDraft,
  type OrderTarget,
  type OrderWriteResult,
  readOrderBody,
  TASKS_PER_STATEMENT,
  throwIfInvalid,
} from "./input";
import { getOrderRow, orderDocuments, orderTasks, sortForOrder } from "./read";
import { type OrderRow, serializeOrder } from "./serialize";

/**
 * POST /orders/ (one or many) and PATCH /orders/{id}/. Returns one result per body, in order.
 * Limits (orders per request, tasks per order) are checked by the caller before this runs.
 */
export async function writeOrders(
  env: Env,
  principal: Principal,
  bodies: OrderWriteBody[],
  opts: {
    isArray: boolean;
    target: OrderTarget;
    zone: string | null;
    baseUrl: string;
    /** Imports: the id each new order gets (derived from the import, so a replay finds its own). */
    orderIds?: readonly string[];
    /** Check the bodies as a POST would, store nothing (a recurrence's template, contract §20). */
    validateOnly?: boolean;
    /** One new order made for an occurrence of a recurrence (contract §20). */
    recurrence?: RecurrenceMark;
  },
  deps: TaskDeps = {},
): Promise<OrderWriteResult[]> {
  env = await accountEnv(env, principal.accountId);
  if (opts.target.kind === "patch") await getOrderRow(env.DB, principal, opts.target.id);
  const refs = new RefSet();
  const drafts = bodies.map((b) => readOrderBody(b, opts.target, opts.zone, refs));
  const resolved = await resolveRefs(env.DB, principal.accountId, refs);
  for (const d of drafts) {
    if (d.accountId && d.accountId !== principal.accountId) addError(d.errors, "account", MSG.notExist);
    if (d.assignee !== undefined) {
      if (d.assignee && !resolved.users.has(d.assignee)) addError(d.errors, "assignee", MSG.notExist);
      else d.cols.assignee_id = d.assignee;
    }
    if (d.client !== undefined) {
      if (d.client && !resolved.clients.has(d.client)) addError(d.errors, "client", MSG.notExist);
      else d.cols.client_id = d.client;
    }
    for (const t of d.tasks ?? []) bindRefs(t, resolved, principal);
  }
  await checkDraftMetafields(
    env.DB,
    principal.accountId,
    drafts.flatMap((d) => d.tasks ?? []),
  );
  // The orders' own metafields, against the `orders` definitions (contract §12).
  const withMetafields = drafts.filter((d) => d.cols.metafields !== undefined);
  const orderErrors = await metafieldErrors(
    env.DB,
    principal.accountId,
    "orders",
    withMetafields.map((d) => ({ metafields: JSON.parse(d.cols.metafields!) })),
  );
  withMetafields.forEach((d, i) => {
    if (Object.keys(orderErrors[i]).length) d.errors.metafields = orderErrors[i];
  });
  throwIfInvalid(drafts, opts.isArray);
  if (opts.validateOnly) return [];

  const now = Date.now();
  if (opts.orderIds) for (const [i, d] of drafts.entries()) d.id = opts.orderIds[i];
  await geocodeDrafts(
    drafts.flatMap((d) => (deps.dryRun ? [] : (d.tasks ?? []))),
    GeocodeSession.fromEnv(env, deps.geocoder),
    now,
  );
  for (const d of drafts) {
    if (d.tasks) d.taskValues = d.tasks.map((t) => creationValues(t, now) as TaskValues);
  }
  throwIfInvalid(drafts, opts.isArray);
  // A dry run (imports, contract §21) stops here: every check has run, nothing is written.
  if (deps.dryRun) return [];

  // Each order is its own transaction, so orders are written concurrently (a few round trips
  // each, ORDER_CONCURRENCY at a time). Orders naming the same external_id stay in input order
  // in one chain: the second updates what the first wrote.
  const results: OrderWriteResult[] = new Array(drafts.length);
  const chains = new Map<string, number[]>();
  drafts.forEach((d, i) => {
    const key = d.cols.external_id ? `ext:${d.cols.external_id}` : `idx:${i}`;
    chains.set(key, [...(chains.get(key) ?? []), i]);
  });
  await pool(chains.values(), ORDER_CONCURRENCY, async (chain) => {
    for (const i of chain) {
      const d = drafts[i];
      try {
        results[i] = await writeOne(env, principal, d, opts, deps);
      } catch (err) {
        const text = String((err as Error)?.message ?? err);
        // A recurrence's occurrence claim (contract §20) is its caller's business.
        if (/UNIQUE constraint failed/i.test(text) && !/recurrence_occurrences/.test(text)) {
          // Only a PATCH that renames external_id to a taken one gets here (POST upserts).
          const e = { external_id: ["order with this external id already exists."] };
          throw new ValidationError(opts.isArray ? drafts.map((x) => (x === d ? e : {})) : e);
        }
        throw err;
      }
    }
  });
  return results;
}

/** Orders written at once by one request (Workers allow six open connections; D1 calls queue past it). */
const ORDER_CONCURRENCY = 6;

/** Where later statements find the order: by its id, or by external_id (whichever row won). */
function orderRef(principal: Principal, d: OrderDraft, target: OrderTarget, id: string) {
  if (target.kind === "post" && d.cols.external_id) {
    return {
      sql: "(SELECT id FROM orders WHERE account_id = ? AND external_id = ?)",
      params: [principal.accountId, d.cols.external_id] as unknown[],
    };
  }
  return { sql: "?", params: [id] as unknown[] };
}

async function writeOne(
  env: Env,
  principal: Principal,
  d: OrderDraft,
  opts: { target: OrderTarget; baseUrl: string; recurrence?: RecurrenceMark },
  deps: TaskDeps,
): Promise<OrderWriteResult> {
  const db = env.DB;
  const { target } = opts;
  const now = Date.now();
  const accountId = principal.accountId;

  // Plan from what is stored now.
  let existing: OrderRow | null = null;
  if (target.kind === "patch") existing = await getOrderRow(db, principal, target.id);
  else if (d.cols.external_id) {
    existing = await db
      .prepare("SELECT * FROM orders WHERE account_id = ? AND external_id = ?")
      .bind(accountId, d.cols.external_id)
      .first<OrderRow>();
  }
  const orderId = existing?.id ?? d.id ?? uuidv7(now);
  const stored = existing ? await orderTasks(db, accountId, orderId) : [];
  const atIndex = new Map(stored.filter((t) => t.order_index !== null).map((t) => [t.order_index!, t]));
  const ref = orderRef(principal, d, target, orderId);

  const assigneeId = d.cols.assignee_id !== undefined ? d.cols.assignee_id : (existing?.assignee_id ?? null);
  const autoAssign =
    d.cols.auto_assign !== undefined ? d.cols.auto_assign === 1 : Boolean(existing?.auto_assign);
  const entries = d.tasks ?? [];
  const values = d.taskValues ?? [];
  const fresh = entries.map((_, i) => i).filter((i) => !atIndex.has(i));
  const unassigned = fresh.filter((i) => !values[i].assignee_id && !assigneeId);
  const picks = autoAssign ? await pickAssignees(db, accountId, unassigned.length) : [];
  const pickFor = new Map(unassigned.map((i, k) => [i, picks[k] ?? null]));

  const mark = opts.recurrence;
  const newRows: TaskRow[] = fresh.map((i) => {
    const v: TaskValues = { ...values[i], order_id: orderId, order_index: i };
    v.assignee_id = v.assignee_id ?? assigneeId ?? pickFor.get(i) ?? null;
    if (v.state === "unassigned" && v.assignee_id) v.state = "assigned";
    const row = newTaskRow(v, {
      id: uuidv7(now),
      accountId,
      createdBy: principal.userId,
      now,
      taskImportId: deps.taskImportId,
    });
    if (mark) {
      row.recurrence_id = mark.recurrenceId;
      row.calendar_time = JSON.stringify(mark.calendarTime);
    }
    return row;
  });
  // What each entry changes on a task that already exists at its index.
  const updates = entries.map((t) => updateColumns(t));

  const orderRow: OrderRow = existing
    ? ({ ...existing, ...d.cols, updated_at: now } as OrderRow)
    : {
        id: orderId,
        account_id: accountId,
        external_id: d.cols.external_id ?? null,
        reference: d.cols.reference ?? "",
        description: d.cols.description ?? "",
        client_id: d.cols.client_id ?? null,
        metafields: d.cols.metafields ?? "{}",
        orderer: d.cols.orderer ?? null,
        assignee_id: d.cols.assignee_id ?? null,
        auto_assign: d.cols.auto_assign ?? 0,
        created_by: principal.userId,
        recurrence_id: mark?.recurrenceId ?? null,
        calendar_time: mark ? JSON.stringify(mark.calendarTime) : null,
        created_at: now,
        updated_at: now,
      };

  // An occurrence's claim leads the batch: a duplicate claim fails it whole (contract §20).
  const statements: D1PreparedStatement[] = [
    ...(mark ? mark.claim(orderId, now) : []),
    orderStatement(db, orderRow, d, target),
  ];
  for (let start = 0; start < updates.length; start += TASKS_PER_STATEMENT) {
    const st = updateTasksStatement(
      db,
      accountId,
      ref,
      updates.slice(start, start + TASKS_PER_STATEMENT),
      start,
      now,
    );
    if (st) statements.push(st);
  }
  for (let start = 0; start < newRows.length; start += TASKS_PER_STATEMENT) {
    statements.push(
      insertTasksStatement(db, accountId, ref, newRows.slice(start, start + TASKS_PER_STATEMENT)),
    );
  }
  const cancelled = d.tasks
    ? stored.filter(
        (t) =>
          t.order_index !== null && t.order_index >= entries.length && NOT_STARTED_STATES.includes(t.state),
      )
    : [];
  if (d.tasks) {
    statements.push(
      db
        .prepare(
          `UPDATE tasks SET state = 'cancelled', version = version + 1, updated_at = ?
           WHERE account_id = ? AND order_id = ${ref.sql} AND order_index >= ?
             AND state IN (${NOT_STARTED_STATES.map((s) => `'${s}'`).join(", ")})`,
        )
        .bind(now, accountId, ...ref.params, entries.length),
    );
  }

  // Events, rendered from the plan (the batch makes them true).
  const render = eventRender(opts.baseUrl);
  const updatedRows = entries
    .map((_, i) => atIndex.get(i))
    .map((row, i) =>
      row ? { ...withValues(row, updates[i]), version: row.version + 1, updated_at: now } : null,
    )
    .filter((r): r is TaskRow => r !== null);
  const cancelledRows = cancelled.map((t) => ({
    ...t,
    state: "cancelled" as const,
    version: t.version + 1,
    updated_at: now,
  }));
  const plannedIds = [
    ...entries.map((_, i) => atIndex.get(i)?.id ?? newRows.find((r) => r.order_index === i)!.id),
    ...stored.filter((t) => t.order_index === null || t.order_index >= entries.length).map((t) => t.id),
  ];
  statements.push(
    guardedEvent(
      db,
      {
        accountId,
        type: existing ? "order.updated" : "order.created",
        objectId: orderId,
        data: serializeOrder(render, orderRow, { taskIds: plannedIds, documents: [] }),
        now,
      },
      // A concurrent POST that created the same external_id first wins the row; this one's
      // planned "created" event then describes nothing and is left out.
      { sql: "EXISTS (SELECT 1 FROM orders WHERE id = ?)", params: [orderId] },
    ),
  );
  const taskEvents = (type: EventItem["type"], rows: TaskRow[]): EventItem[] =>
    rows.map((r) => ({ type, objectId: r.id, data: serializeTask(render, r) }));
  statements.push(
    ...bulkEvents(db, accountId, taskEvents("task.created", newRows), { now, onlyIfExistsIn: "tasks" }),
    ...bulkEvents(db, accountId, taskEvents("task.updated", updatedRows), { now, onlyIfExistsIn: "tasks" }),
    ...bulkEvents(db, accountId, taskEvents("task.state_changed", cancelledRows), {
      now,
      onlyIfExistsIn: "tasks",
    }),
  );

  await db.batch(statements);

  // The stored truth (a concurrent upsert may have won some rows).
  const row =
    ref.sql === "?"
      ? await db
          .prepare("SELECT * FROM orders WHERE id = ? AND account_id = ?")
          .bind(orderId, accountId)
          .first<OrderRow>()
      : await db
          .prepare("SELECT * FROM orders WHERE account_id = ? AND external_id = ?")
          .bind(accountId, d.cols.external_id)
          .first<OrderRow>();
  if (!row) throw notFound();
  const tasks = await orderTasks(db, accountId, row.id);
  const inserted = new Set(newRows.map((r) => r.id));
  const retries: GeocodeMessage[] = [];
  for (const t of tasks) {
    if (t.order_index === null || t.order_index >= entries.length) continue;
    if (entries[t.order_index].address?.retry) {
      retries.push({ accountId, taskId: t.id, baseUrl: opts.baseUrl });
    }
    // The task's object moves a scheduled task at its time: new ones and new times arm it.
    const newTime = inserted.has(t.id) || entries[t.order_index].values.scheduled_time !== undefined;
    if (t.state === "scheduled" && newTime) await armSchedule(env, t, opts.baseUrl);
  }
  await enqueueGeocodeRetries(deps.geocodeQueue ?? env.GEOCODE_QUEUE, retries);
  return {
    row,
    created: !existing && row.id === orderId,
    taskIds: sortForOrder(tasks).map((t) => t.id),
    // A new order has no documents yet: skip the read.
    documents: existing ? await orderDocuments(db, accountId, [row.id]) : [],
  };
}

/** Columns an entry of tasks_data sets on an existing task (state and assignee excluded). */
function updateColumns(t: TaskDraft): Partial<TaskValues> {
  const { state: _s, assignee_id: _a, order_id: _o, order_index: _i, ...rest } = t.values;
  return { ...rest, ...(t.address ? addressColumns(t.address) : {}) };
}

function orderStatement(
  db: D1Database,
  o: OrderRow,
  d: OrderDraft,
  target: OrderTarget,
): D1PreparedStatement {
  const sent = Object.keys(d.cols) as (keyof OrderCols)[];
  if (target.kind === "patch") {
    const sets = [...sent.map((c) => `${c} = ?`), "updated_at = ?"];
    return db
      .prepare(`UPDATE orders SET ${sets.join(", ")} WHERE id = ? AND account_id = ?`)
      .bind(...sent.map((c) => d.cols[c] ?? null), o.updated_at, o.id, o.account_id);
  }
  const cols = [
    "id",
    "account_id",
    "external_id",
    "reference",
    "description",
    "client_id",
    "metafields",
    "orderer",
    "assignee_id",
    "auto_assign",
    "created_by",
    "recurrence_id",
    "calendar_time",
    "created_at",
    "updated_at",
  ] as const;
  const insert = `INSERT INTO orders (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`;
  // For an order that exists these are the merged values: on conflict only `updates` apply.
  const values = cols.map((c) => (o as unknown as Record<string, unknown>)[c] ?? null);
  if (!o.external_id) return db.prepare(insert).bind(...values);
  // "Its fields are replaced by those sent" (contract §7): only the sent columns change.
  const updates = [
    ...sent.filter((c) => c !== "external_id").map((c) => `${c} = excluded.${c}`),
    "updated_at = excluded.updated_at",
  ];
  return db
    .prepare(`${insert} ON CONFLICT(account_id, external_id) DO UPDATE SET ${updates.join(", ")}`)
    .bind(...values);
}

/**
 * One UPDATE for a chunk of entries: the task at order_index i takes entry i's columns, each
 * only if that entry sends it (`json_type` is NULL for a missing key). Parameters are numbered
 * because the same JSON is read for every column.
 */
function updateTasksStatement(
  db: D1Database,
  accountId: string,
  ref: { sql: string; params: unknown[] },
  chunk: Partial<TaskValues>[],
  start: number,
  now: number,
): D1PreparedStatement | null {
  const columns = [
    ...new Set(chunk.flatMap((c) => Object.keys(c).filter((k) => (c as any)[k] !== undefined))),
  ];
  const json = JSON.stringify(
    chunk.map((c) =>
      Object.fromEntries(
        Object.entries(c)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => [k, dbValue(k, v)]),
      ),
    ),
  );
  const at = (col: string) => `'$[' || CAST(order_index - ?2 AS INTEGER) || '].${col}'`;
  const sets = columns.map(
    (c) => `${c} = CASE WHEN json_type(?1, ${at(c)}) IS NULL THEN ${c} ELSE json_extract(?1, ${at(c)}) END`,
  );
  sets.push("version = version + 1", "updated_at = ?3");
  // The order reference's own parameters follow as ?6, ?7.
  const refSql =
    ref.sql === "?" ? "?6" : "(SELECT id FROM orders WHERE account_id = ?6 AND external_id = ?7)";
  return db
    .prepare(
      `UPDATE tasks SET ${sets.join(", ")} WHERE account_id = ?4 AND order_id = ${refSql} AND order_index >= ?2 AND order_index < ?5`,
    )
    .bind(json, start, now, accountId, start + chunk.length, ...ref.params);
}

/** New tasks of a chunk, each only if its index is still free in the order (see the header). */
function insertTasksStatement(
  db: D1Database,
  accountId: string,
  ref: { sql: string; params: unknown[] },
  rows: TaskRow[],
): D1PreparedStatement {
  const select = TASK_COLUMNS.map((c) => (c === "order_id" ? ref.sql : `json_extract(j.value, '$.${c}')`));
  return db
    .prepare(
      `INSERT INTO tasks (${TASK_COLUMNS.join(", ")}) SELECT ${select.join(", ")} FROM json_each(?) AS j
       WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.account_id = ? AND t.order_id = ${ref.sql}
         AND t.order_index = json_extract(j.value, '$.order_index'))`,
    )
    .bind(...ref.params, JSON.stringify(rows), accountId, ...ref.params);
}

// ---------------------------------------------------------------------------------------------
// Reads.

/**
 * DELETE /orders/{id}/: the order goes; its tasks stay (a task may already be on its way) and
 * lose their order link, each with a `task.updated` event, all in one batch.
 */
export async function deleteOrder(env: Env, principal: Principal, id: string, ctx: { baseUrl: string }) {
  const db = env.DB;
  await getOrderRow(db, principal, id);
  const now = Date.now();
  const tasks = await orderTasks(db, principal.accountId, id);
  const render = eventRender(ctx.baseUrl);
  await db.batch([
    db
      .prepare(
        "UPDATE tasks SET order_id = NULL, order_index = NULL, version = version + 1, updated_at = ? WHERE account_id = ? AND order_id = ?",
      )
      .bind(now, principal.accountId, id),
    db.prepare("DELETE FROM orders WHERE id = ? AND account_id = ?").bind(id, principal.accountId),
    ...bulkEvents(
      db,
      principal.accountId,
      tasks.map((t) => ({
        type: "task.updated" as const,
        objectId: t.id,
        data: serializeTask(render, {
          ...t,
          order_id: null,
          order_index: null,
          version: t.version + 1,
          updated_at: now,
        }),
      })),
      { now, onlyIfExistsIn: "tasks" },
    ),
  ]);
}
