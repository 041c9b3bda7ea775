import { messageEnv } from "../../db/shards";
/**
 * Applying an import's staged rows (contract §21), a chunk of groups at a time, through the
 * API's own services: `createTask`, `writeOrders` (upsert by external_id), the contact address
 * create/update (upsert by external_id). Each service validates as the API does (zod schema,
 * references, metafields against the account's definitions).
 *
 * Never twice, and why this way: a service writes its object in its own D1 batch (with its
 * events, geocoding before it), so the chunk cursor cannot join that batch. Instead every row's
 * effect is idempotent by a key derived from (import id, row or group):
 *  - a task, or a contact address without external_id, is created with the id
 *    `importObjectId(import, row)`: a replayed row finds that id and is counted, not redone
 *    (and a racing duplicate meets the primary key);
 *  - an order is an upsert by external_id: re-sending the same group rewrites the same order and
 *    the same tasks (tasks_data[i] matches the order's i-th task), and a new order gets the id
 *    `importObjectId(import, group)`, so a replay still counts it as created;
 *  - a contact address with external_id is an update or a create by that id, likewise.
 * The cursor and the counters then move in one compare-and-set per chunk; a crash between the
 * effects and that commit replays the chunk with the same outcome and the same counts.
 */
import type { MetafieldValueType } from "../../domain/metafields";
import { type FieldErrors, ValidationError } from "../../http/errors";
import { zodToFieldErrors } from "../../http/openapi";
import { pool } from "../../lib/pool";
import type { ImportMessage } from "../../queues/imports/message";
import { ContactAddressWriteSchema } from "../../schemas/contact-addresses";
import { type OrderWriteBody, OrderWriteSchema } from "../../schemas/orders";
import { TaskWriteSchema } from "../../schemas/tasks";
import { JobError, jobPrincipal } from "../auth/job-principal";
import type { Principal } from "../auth/principal";
import { createContactAddress, updateContactAddress } from "../contact-addresses";
import { leaseUntil } from "../jobs/lease";
import { loadDefinitions } from "../metafields";
import { orderLimits, writeOrders } from "../orders";
import { createTask } from "../tasks";
import { parseJson } from "../tasks/types";
import {
  cellsOf,
  contactAddressBody,
  flattenErrors,
  orderBody,
  type RowBody,
  type RowError,
  taskBody,
} from "./columns";
import type { ImportRow } from "./index";
import { FileProblem, stageImport } from "./stage";

/** The first errors kept on the import (contract §21). */
export const MAX_ERRORS = 1000;

export function importSettings(env: Env) {
  const vars = env as unknown as Record<string, string | undefined>;
  const n = (v: string | undefined, d: number) => (Number(v) > 0 ? Math.floor(Number(v)) : d);
  return { chunkGroups: n(vars.IMPORT_CHUNK_SIZE, 100), chunksPerStep: n(vars.IMPORT_CHUNKS_PER_STEP, 10) };
}

/**
 * The id of the object an import's row (or group) creates: a UUIDv8 (RFC 9562 §5.8) whose first
 * 48 bits are the import's creation time (so ids still sort roughly by creation) and the rest a
 * SHA-256 of (import, what, n): the same row always gets the same id.
 */
export async function importObjectId(row: ImportRow, what: string, n: number): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${row.id}:${what}:${n}`)),
  );
  const b = digest.slice(0, 16);
  const t = row.created_at;
  b[0] = (t / 2 ** 40) & 0xff;
  b[1] = (t / 2 ** 32) & 0xff;
  b[2] = (t >>> 24) & 0xff;
  b[3] = (t >>> 16) & 0xff;
  b[4] = (t >>> 8) & 0xff;
  b[5] = t & 0xff;
  b[6] = 0x80 | (b[6] & 0x0f);
  b[8] = 0x80 | (b[8] & 0x3f);
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

type Staged = { row: number; grp: number; cells: string };
type Tally = { processed: number; created: number; updated: number; failed: number; errors: RowError[] };
type Ctx = {
  env: Env;
  imp: ImportRow;
  p: Principal;
  header: string[];
  baseUrl: string;
  taskTypes: Map<string, MetafieldValueType>;
  orderTypes: Map<string, MetafieldValueType>;
  caTypes: Map<string, MetafieldValueType>;
  emails: Map<string, string>;
};

const loadImport = (db: D1Database, id: string) =>
  db.prepare("SELECT * FROM data_imports WHERE id = ?").bind(id).first<ImportRow>();

function fail(t: Tally, row: number, e: { field: string | null; message: string }[]) {
  for (const x of e.length ? e : [{ field: null, message: "Invalid row." }]) t.errors.push({ row, ...x });
}

/** A row's body checked by the API's zod schema, with the cells that could not be read. */
function checked(
  rb: RowBody,
  schema: typeof TaskWriteSchema | typeof ContactAddressWriteSchema,
): FieldErrors {
  const parsed = schema.safeParse(rb.body);
  return { ...(parsed.success ? {} : zodToFieldErrors(parsed.error.issues, "json", rb.body)), ...rb.errors };
}

async function existingIds(db: D1Database, table: "tasks" | "contact_addresses", ids: string[]) {
  const { results } = await db
    .prepare(`SELECT id FROM ${table} WHERE id IN (SELECT value FROM json_each(?))`)
    .bind(JSON.stringify(ids))
    .all<{ id: string }>();
  return new Set(results.map((r) => r.id));
}

async function applyTasks(c: Ctx, rows: Staged[], t: Tally) {
  const ids = await Promise.all(rows.map((r) => importObjectId(c.imp, "row", r.row)));
  const done = await existingIds(c.env.DB, "tasks", ids);
  await pool(
    rows.map((r, i) => ({ r, id: ids[i] })),
    4,
    async ({ r, id }) => {
      t.processed++;
      if (done.has(id)) {
        t.created++; // applied before a crash; its row is not applied again
        return;
      }
      const { cells, problem } = cellsOf(c.header, JSON.parse(r.cells));
      const rb = taskBody(cells, { taskTypes: c.taskTypes, emails: c.emails, forOrder: false });
      rb.body.account = c.imp.account_id;
      const errors = checked(rb, TaskWriteSchema);
      if (problem || Object.keys(errors).length) {
        t.failed++;
        fail(t, r.row, [...(problem ? [{ field: null, message: problem }] : []), ...flattenErrors(errors)]);
        return;
      }
      try {
        const ctx = { zone: c.imp.time_zone, baseUrl: c.baseUrl };
        const deps = { id, taskImportId: c.imp.id };
        if (c.imp.dry_run) await createTask(c.env, c.p, rb.body, ctx, { ...deps, dryRun: true });
        else await createTask(c.env, c.p, rb.body, ctx, deps);
        t.created++;
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        t.failed++;
        fail(t, r.row, flattenErrors(err.body));
      }
    },
  );
}

async function applyContactAddresses(c: Ctx, rows: Staged[], t: Tally) {
  const ids = await Promise.all(rows.map((r) => importObjectId(c.imp, "row", r.row)));
  const done = await existingIds(c.env.DB, "contact_addresses", ids);
  await pool(
    rows.map((r, i) => ({ r, id: ids[i] })),
    4,
    async ({ r, id }) => {
      t.processed++;
      const { cells, problem } = cellsOf(c.header, JSON.parse(r.cells));
      const rb = contactAddressBody(cells, c.caTypes);
      const errors = checked(rb, ContactAddressWriteSchema);
      if (problem || Object.keys(errors).length) {
        t.failed++;
        fail(t, r.row, [...(problem ? [{ field: null, message: problem }] : []), ...flattenErrors(errors)]);
        return;
      }
      const dryRun = Boolean(c.imp.dry_run);
      try {
        const ext = rb.body.external_id as string | undefined;
        const existing = ext
          ? await c.env.DB.prepare(
              "SELECT id FROM contact_addresses WHERE account_id = ? AND external_id = ?",
            )
              .bind(c.imp.account_id, ext)
              .first<{ id: string }>()
          : null;
        if (existing) {
          await updateContactAddress(c.env, c.p, existing.id, rb.body, "patch", { dryRun });
          if (existing.id === id) t.created++;
          else t.updated++;
        } else if (done.has(id)) {
          t.created++; // applied before a crash
        } else {
          if (dryRun) await createContactAddress(c.env, c.p, rb.body, { id, dryRun: true });
          else await createContactAddress(c.env, c.p, rb.body, { id });
          t.created++;
        }
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        t.failed++;
        fail(t, r.row, flattenErrors(err.body));
      }
    },
  );
}

type OrderGroup = { grp: number; rows: number[]; body: OrderWriteBody; id: string; external: string };

/** An order's errors, back on its rows: `tasks_data[i]` on row i, the order's own on its first row. */
function orderErrors(g: OrderGroup, e: FieldErrors, t: Tally) {
  const { tasks_data, ...own } = e;
  if (Object.keys(own).length) fail(t, g.rows[0], flattenErrors(own, "order."));
  if (Array.isArray(tasks_data)) {
    tasks_data.forEach((x, i) => {
      if (Object.keys(x as FieldErrors).length) fail(t, g.rows[i], flattenErrors(x as FieldErrors));
    });
  }
  t.failed += g.rows.length;
}

async function applyOrders(c: Ctx, rows: Staged[], t: Tally) {
  const byGroup = new Map<number, Staged[]>();
  for (const r of rows) byGroup.set(r.grp, [...(byGroup.get(r.grp) ?? []), r]);
  const maxTasks = orderLimits(c.env).tasks;
  const ready: OrderGroup[] = [];
  for (const [grp, members] of byGroup) {
    t.processed += members.length;
    const parsed = members.map((m) => cellsOf(c.header, JSON.parse(m.cells)));
    const head = orderBody(parsed[0].cells, c.orderTypes);
    const tasks = parsed.map((x) =>
      taskBody(x.cells, { taskTypes: c.taskTypes, emails: c.emails, forOrder: true }),
    );
    const g: OrderGroup = {
      grp,
      rows: members.map((m) => m.row),
      body: {
        ...head.body,
        account: c.imp.account_id,
        tasks_data: tasks.map((x) => x.body),
      } as OrderWriteBody,
      id: await importObjectId(c.imp, "group", grp),
      external: (head.body.external_id as string | undefined) ?? "",
    };
    const e: FieldErrors = {};
    if (!g.external) e.external_id = ["This field is required."];
    if (members.length > maxTasks) e.non_field_errors = [`Too many rows for one order: at most ${maxTasks}.`];
    Object.assign(e, head.errors);
    const z = OrderWriteSchema.safeParse(g.body);
    const ze = z.success ? {} : zodToFieldErrors(z.error.issues, "json", g.body);
    const taskErrors = tasks.map((x, i) => ({
      ...((ze.tasks_data as unknown as Record<string, FieldErrors> | undefined)?.[i] ?? {}),
      ...x.errors,
      ...(parsed[i].problem ? { non_field_errors: [parsed[i].problem!] } : {}),
    }));
    delete ze.tasks_data;
    Object.assign(e, ze);
    if (Object.keys(e).length || taskErrors.some((x) => Object.keys(x).length)) {
      orderErrors(g, { ...e, tasks_data: taskErrors }, t);
      continue;
    }
    ready.push(g);
  }
  if (!ready.length) return;
  const { results: known } = await c.env.DB.prepare(
    "SELECT id, external_id FROM orders WHERE account_id = ? AND external_id IN (SELECT value FROM json_each(?))",
  )
    .bind(c.imp.account_id, JSON.stringify(ready.map((g) => g.external)))
    .all<{ id: string; external_id: string }>();
  const before = new Map(known.map((o) => [o.external_id, o.id]));
  // One call for the chunk's orders (written concurrently); an invalid order makes the call
  // refuse every order, with its errors aligned: those are recorded and the rest sent again.
  let batch = ready;
  for (let attempt = 0; attempt < 2 && batch.length; attempt++) {
    try {
      await writeOrders(
        c.env,
        c.p,
        batch.map((g) => g.body),
        {
          isArray: true,
          target: { kind: "post" },
          zone: c.imp.time_zone,
          baseUrl: c.baseUrl,
          orderIds: batch.map((g) => g.id),
        },
        { taskImportId: c.imp.id, dryRun: Boolean(c.imp.dry_run) },
      );
      for (const g of batch) {
        const was = before.get(g.external);
        if (was === undefined || was === g.id) t.created++;
        else t.updated++;
      }
      return;
    } catch (err) {
      if (!(err instanceof ValidationError) || !Array.isArray(err.body) || attempt > 0) throw err;
      const items = err.body;
      const bad = batch.filter((_, i) => Object.keys(items[i] ?? {}).length);
      batch.forEach((g, i) => {
        if (Object.keys(items[i] ?? {}).length) orderErrors(g, items[i], t);
      });
      batch = batch.filter((g) => !bad.includes(g));
    }
  }
}

async function context(env: Env, imp: ImportRow, baseUrl: string): Promise<Ctx> {
  const p = await jobPrincipal(env.DB, imp.account_id, imp.created_by);
  const types = async (target: "tasks" | "orders" | "contact_addresses") =>
    new Map((await loadDefinitions(env.DB, imp.account_id, target)).map((d) => [d.key, d.value_type]));
  const header = parseJson<string[]>(imp.columns, []);
  const emails = new Map<string, string>();
  if (header.includes("assignee.email")) {
    const { results } = await env.DB.prepare(
      "SELECT u.id, u.email FROM account_roles ro JOIN users u ON u.id = ro.user_id WHERE ro.account_id = ? AND ro.state = 'active'",
    )
      .bind(imp.account_id)
      .all<{ id: string; email: string }>();
    for (const u of results) emails.set(u.email.toLowerCase(), u.id);
  }
  return {
    env,
    imp,
    p,
    header,
    baseUrl,
    taskTypes: await types("tasks"),
    orderTypes: await types("orders"),
    caTypes: await types("contact_addresses"),
    emails,
  };
}

/** Runs one step: staging, or up to IMPORT_CHUNKS_PER_STEP chunks; queues the next step. */
export async function runImportStep(env: Env, msg: ImportMessage): Promise<void> {
  env = await messageEnv(env, (db) =>
    db.prepare("SELECT 1 FROM data_imports WHERE id = ?").bind(msg.importId).first(),
  );
  const db = env.DB;
  const imp = await loadImport(db, msg.importId);
  if (!imp || imp.state === "completed" || imp.state === "failed") return;
  const now = Date.now();
  if (!imp.staged) {
    await db
      .prepare(
        "UPDATE data_imports SET state = 'running', lease_expires_at = ?, updated_at = ? WHERE id = ? AND state = 'queued'",
      )
      .bind(leaseUntil(env, now), now, imp.id)
      .run();
    await jobPrincipal(db, imp.account_id, imp.created_by);
    const staged = await stageImport(env, imp);
    const res = await db
      .prepare(
        `UPDATE data_imports SET staged = 1, total_rows = ?, groups = ?, lease_expires_at = ?, lease_attempts = 0, updated_at = ?
         WHERE id = ? AND staged = 0 AND state = 'running'`,
      )
      .bind(staged.totalRows, staged.groups, leaseUntil(env), Date.now(), imp.id)
      .run();
    if (res.meta.changes) await env.IMPORTS_QUEUE.send(msg);
    return;
  }
  const c = await context(env, imp, msg.baseUrl);
  const { chunkGroups, chunksPerStep } = importSettings(env);
  const errors = parseJson<RowError[]>(imp.errors, []);
  let cursor = imp.cursor;
  for (let k = 0; k < chunksPerStep && cursor < imp.groups; k++) {
    const end = cursor + chunkGroups;
    const { results } = await db
      .prepare(
        "SELECT row, grp, cells FROM import_rows WHERE import_id = ? AND grp >= ? AND grp < ? ORDER BY grp, row",
      )
      .bind(imp.id, cursor, end)
      .all<Staged>();
    const t: Tally = { processed: 0, created: 0, updated: 0, failed: 0, errors: [] };
    if (imp.kind === "tasks") await applyTasks(c, results, t);
    else if (imp.kind === "orders") await applyOrders(c, results, t);
    else await applyContactAddresses(c, results, t);
    t.errors.sort((a, b) => a.row - b.row);
    errors.push(...t.errors.slice(0, Math.max(0, MAX_ERRORS - errors.length)));
    const res = await db
      .prepare(
        `UPDATE data_imports SET cursor = ?, processed_rows = processed_rows + ?, created = created + ?, updated = updated + ?,
           failed = failed + ?, errors = ?, lease_expires_at = ?, lease_attempts = 0, updated_at = ?
         WHERE id = ? AND cursor = ? AND state = 'running'`,
      )
      .bind(
        end,
        t.processed,
        t.created,
        t.updated,
        t.failed,
        JSON.stringify(errors),
        leaseUntil(env),
        Date.now(),
        imp.id,
        cursor,
      )
      .run();
    if (!res.meta.changes) return; // another delivery committed this chunk first, or it was cancelled
    cursor = end;
  }
  if (cursor >= imp.groups) {
    await db.batch([
      db
        .prepare(
          "UPDATE data_imports SET state = 'completed', completed_at = ?, updated_at = ? WHERE id = ? AND state = 'running'",
        )
        .bind(Date.now(), Date.now(), imp.id),
      db.prepare("DELETE FROM import_rows WHERE import_id = ?").bind(imp.id),
    ]);
    return;
  }
  await env.IMPORTS_QUEUE.send(msg);
}

/** Fails an import with the reason (and, for a file problem, its row), from the consumer. */
export async function failImport(
  env: Env,
  msg: ImportMessage,
  reason: string,
  error: RowError | null = null,
) {
  env = await messageEnv(env, (db) =>
    db.prepare("SELECT 1 FROM data_imports WHERE id = ?").bind(msg.importId).first(),
  );
  await env.DB.batch([
    env.DB.prepare(
      "UPDATE data_imports SET state = 'failed', error_message = ?, errors = CASE WHEN ? IS NULL THEN errors ELSE json_array(json(?)) END, updated_at = ? WHERE id = ? AND state IN ('queued', 'running')",
    ).bind(reason.slice(0, 1000), error ? 1 : null, JSON.stringify(error), Date.now(), msg.importId),
    env.DB.prepare("DELETE FROM import_rows WHERE import_id = ?").bind(msg.importId),
  ]);
}

export { FileProblem, JobError };
