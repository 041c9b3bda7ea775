/**
 * Form responses (contract §15): created for a task from the form's defaults and the task's
 * `form_default_values`, written while `draft`, and completed once, atomically, with the
 * form's schema snapshot and the `form_response.completed` event in the same D1 batch.
 */

import { IN_JSON } from "../../db/in-list";
import {
  checkFormData,
  type FormSnapshot,
  missingRequired,
  snapshotOf,
  startingData,
} from "../../domain/forms";
import { hiddenKeysOfSnapshot } from "../../domain/worker-view";
import { type FieldErrors, fieldError, nonFieldError, notFound, ValidationError } from "../../http/errors";
import { paginateByCreation } from "../../http/pagination";
import { parseHyperlink, parseHyperlinkList } from "../../http/urls";
import { uuidv7 } from "../../lib/ids";
import type { FormResponseWrite } from "../../schemas/forms";
import { isDispatcher, type Principal } from "../auth/principal";
import { eventStatement } from "../events/outbox";
import { eventRender, serializeTask } from "../tasks/serialize";
import { parseJson, type TaskRow } from "../tasks/types";
import { fieldsOf } from "./fields";
import { type FieldDefs, formWithFields } from "./load";
import { type FormResponseRow, serializeResponse } from "./rows";

export const COMPLETED = "Form response is completed.";
const NO_OBJECT = "Invalid hyperlink - Object does not exist.";
const NOT_OF_TASK = {
  documents: "Expected a document of this response's task.",
  signatures: "Expected a signature of this response's task.",
};
/** A write that lost a race with another write of the same response is tried again this often. */
const ATTEMPTS = 5;

/** Workers see responses of tasks assigned to them only; anything else is 404. */
const VISIBLE_TO_WORKER = "task_id IN (SELECT id FROM tasks WHERE account_id = ? AND assignee_id = ?)";

export async function getResponse(db: D1Database, p: Principal, id: string): Promise<FormResponseRow> {
  const worker = !isDispatcher(p);
  const row = await db
    .prepare(
      `SELECT * FROM form_responses WHERE id = ? AND account_id = ?${worker ? ` AND ${VISIBLE_TO_WORKER}` : ""}`,
    )
    .bind(id, p.accountId, ...(worker ? [p.accountId, p.userId] : []))
    .first<FormResponseRow>();
  if (!row) throw notFound();
  return row;
}

export function listResponses(
  db: D1Database,
  p: Principal,
  q: {
    form?: string;
    task?: string;
    task__in?: string;
    state?: "draft" | "completed";
    cursor?: string;
    page_size?: number;
  },
  url: string,
) {
  const where = ["account_id = ?"];
  const params: unknown[] = [p.accountId];
  for (const [name, collection] of [
    ["form", "forms"],
    ["task", "tasks"],
  ] as const) {
    const value = q[name];
    if (value === undefined) continue;
    const id = parseHyperlink(value, collection);
    if (!id) throw fieldError(name, "Invalid hyperlink - No URL match.");
    where.push(`${name}_id = ?`);
    params.push(id);
  }
  if (q.task__in !== undefined) {
    const list = parseHyperlinkList(q.task__in, "tasks");
    if ("error" in list) throw fieldError("task__in", list.error);
    where.push(IN_JSON("task_id"));
    params.push(JSON.stringify(list.ids));
  }
  if (q.state) {
    where.push("state = ?");
    params.push(q.state);
  }
  if (!isDispatcher(p)) {
    where.push(VISIBLE_TO_WORKER);
    params.push(p.accountId, p.userId);
  }
  return paginateByCreation<FormResponseRow>({
    db,
    select: "SELECT * FROM form_responses",
    where,
    params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

/**
 * The keys a reader may not see: for a worker, those of fields hidden from workers (the
 * snapshot's, once completed; the form's current ones before).
 */
export async function hiddenKeysFor(db: D1Database, p: Principal, rows: FormResponseRow[]) {
  const out = new Map<string, Set<string>>();
  if (isDispatcher(p)) return out;
  const current = new Map<string, Set<string>>();
  for (const row of rows) {
    if (row.state === "completed") {
      const snap = parseJson<FormSnapshot | null>(row.schema_snapshot, null);
      out.set(row.id, hiddenKeysOfSnapshot(snap));
      continue;
    }
    if (!current.has(row.form_id)) {
      const fields = await fieldsOf(db, p.accountId, row.form_id);
      current.set(row.form_id, new Set(fields.filter((f) => !f.visible_to_worker).map((f) => f.key)));
    }
    out.set(row.id, current.get(row.form_id)!);
  }
  return out;
}

async function readableTask(db: D1Database, p: Principal, taskId: string) {
  const task = await db
    .prepare("SELECT * FROM tasks WHERE id = ? AND account_id = ?")
    .bind(taskId, p.accountId)
    .first<TaskRow>();
  if (!task || (!isDispatcher(p) && task.assignee_id !== p.userId)) return null;
  return task;
}

/**
 * Checks `data` against the fields, and that each photo and signature it names is an
 * attachment of the response's task (never of another task or account).
 */
async function dataErrors(
  db: D1Database,
  p: Principal,
  data: Record<string, unknown>,
  fields: FieldDefs,
  taskId: string | null,
): Promise<FieldErrors> {
  const check = checkFormData(data, fields, { worker: !isDispatcher(p) });
  const errors: Record<string, string[]> = { ...check.errors };
  for (const kind of ["documents", "signatures"] as const) {
    const named = check[kind];
    if (!named.size) continue;
    const ids = [...new Set(named.values())];
    const { results } = taskId
      ? await db
          .prepare(
            `SELECT id FROM attachments WHERE account_id = ? AND task_id = ? AND kind = ? AND id IN (${ids.map(() => "?").join(", ")})`,
          )
          .bind(p.accountId, taskId, kind === "documents" ? "document" : "signature", ...ids)
          .all<{ id: string }>()
      : { results: [] as { id: string }[] };
    const found = new Set(results.map((r) => r.id));
    for (const [key, id] of named) if (!found.has(id)) errors[key] = [NOT_OF_TASK[kind]];
  }
  return Object.keys(errors).length ? { data: errors } : {};
}

export async function createResponse(
  env: Env,
  p: Principal,
  input: FormResponseWrite,
): Promise<FormResponseRow> {
  const db = env.DB;
  const errors: FieldErrors = {};
  const formId = parseHyperlink(input.form, "forms");
  const loaded = formId ? await formWithFields(db, p.accountId, formId) : null;
  if (!formId) errors.form = ["Invalid hyperlink - No URL match."];
  else if (!loaded) errors.form = [NO_OBJECT];
  else if (!loaded.form.is_active) errors.form = ["This form is not active."];
  let task: TaskRow | null = null;
  if (input.task !== undefined && input.task !== null) {
    const taskId = parseHyperlink(input.task, "tasks");
    task = taskId ? await readableTask(db, p, taskId) : null;
    if (!task) errors.task = [taskId ? NO_OBJECT : "Invalid hyperlink - No URL match."];
  } else if (!isDispatcher(p)) {
    // A worker's responses belong to its tasks.
    errors.task = ["This field is required."];
  }
  if (Object.keys(errors).length || !loaded) throw new ValidationError(errors);
  const sent = input.data ?? {};
  const bad = await dataErrors(db, p, sent, loaded.fields, task?.id ?? null);
  if (Object.keys(bad).length) throw new ValidationError(bad);
  const overrides = parseJson<Record<string, Record<string, unknown>>>(task?.form_default_values, {})?.[
    formId!
  ];
  const data = { ...startingData(loaded.fields, overrides ?? {}), ...sent };
  const now = Date.now();
  const row: FormResponseRow = {
    id: uuidv7(now),
    account_id: p.accountId,
    form_id: formId!,
    task_id: task?.id ?? null,
    data: JSON.stringify(data),
    state: "draft",
    completed_at: null,
    completed_by: null,
    schema_snapshot: null,
    created_by: p.userId,
    version: 0,
    created_at: now,
    updated_at: now,
  };
  await db
    .prepare(
      "INSERT INTO form_responses (id, account_id, form_id, task_id, data, state, created_by, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'draft', ?, 0, ?, ?)",
    )
    .bind(row.id, row.account_id, row.form_id, row.task_id, row.data, row.created_by, now, now)
    .run();
  return row;
}

/**
 * PATCH/PUT replace `data` (DRF: the field is one value). A worker's write keeps the values of
 * fields hidden from workers, which it can neither see nor send.
 */
export async function updateResponse(
  env: Env,
  p: Principal,
  id: string,
  input: { data?: Record<string, unknown> },
  method: "patch" | "put",
): Promise<FormResponseRow> {
  const db = env.DB;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const row = await getResponse(db, p, id);
    if (row.state === "completed") throw nonFieldError(COMPLETED);
    if (input.data === undefined && method === "patch") return row;
    const sent = input.data ?? {};
    const fields = (await formWithFields(db, p.accountId, row.form_id))?.fields ?? [];
    const bad = await dataErrors(db, p, sent, fields, row.task_id);
    if (Object.keys(bad).length) throw new ValidationError(bad);
    const kept = isDispatcher(p)
      ? {}
      : Object.fromEntries(
          Object.entries(parseJson<Record<string, unknown>>(row.data, {})).filter(([k]) =>
            fields.some((f) => f.key === k && !f.visible_to_worker),
          ),
        );
    const now = Date.now();
    const data = JSON.stringify({ ...kept, ...sent });
    const r = await db
      .prepare(
        "UPDATE form_responses SET data = ?, version = version + 1, updated_at = ? WHERE id = ? AND state = 'draft' AND version = ?",
      )
      .bind(data, now, id, row.version)
      .run();
    if (r.meta.changes === 1) return { ...row, data, version: row.version + 1, updated_at: now };
  }
  throw nonFieldError("The form response changed while it was being written; try again.");
}

export async function deleteResponse(db: D1Database, p: Principal, id: string) {
  const row = await getResponse(db, p, id);
  if (row.state === "completed") throw nonFieldError(COMPLETED);
  const r = await db.prepare("DELETE FROM form_responses WHERE id = ? AND state = 'draft'").bind(id).run();
  if (r.meta.changes === 0) throw nonFieldError(COMPLETED);
}

/**
 * `POST /form_responses/{id}/complete/`: the required check, the state, `completed_at`,
 * `completed_by`, the schema snapshot and the event are one compare-and-set on the response's
 * version, so of two racing completes exactly one succeeds, and an edit that lands between
 * the check and the write makes the complete start over on the new data.
 */
export async function completeResponse(env: Env, p: Principal, id: string, baseUrl: string) {
  const db = env.DB;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const row = await getResponse(db, p, id);
    if (row.state === "completed") throw nonFieldError(COMPLETED);
    const loaded = await formWithFields(db, p.accountId, row.form_id);
    if (!loaded) throw nonFieldError("The form of this response no longer exists.");
    const data = parseJson<Record<string, unknown>>(row.data, {});
    // The data is checked against the form as it is now: the snapshot must describe it.
    const dispatcherView = { ...p, role: "admin" as const };
    const bad = await dataErrors(db, dispatcherView, data, loaded.fields, row.task_id);
    if (Object.keys(bad).length) throw new ValidationError(bad);
    const missing = missingRequired(data, loaded.fields);
    if (missing.length) {
      throw new ValidationError({
        data: Object.fromEntries(missing.map((k) => [k, ["This field is required."]])),
      });
    }
    const now = Date.now();
    const snapshot = snapshotOf(loaded.form, loaded.fields);
    const completed: FormResponseRow = {
      ...row,
      state: "completed",
      completed_at: now,
      completed_by: p.userId,
      schema_snapshot: JSON.stringify(snapshot),
      version: row.version + 1,
      updated_at: now,
    };
    const task = row.task_id
      ? await db.prepare("SELECT * FROM tasks WHERE id = ?").bind(row.task_id).first<TaskRow>()
      : null;
    const r = eventRender(baseUrl);
    const guard = {
      sql: "EXISTS (SELECT 1 FROM form_responses WHERE id = ? AND state = 'draft' AND version = ?)",
      params: [id, row.version],
    };
    const [, update] = await db.batch([
      eventStatement(db, {
        accountId: p.accountId,
        type: "form_response.completed",
        objectId: id,
        data: { ...serializeResponse(r, completed), task: task ? serializeTask(r, task) : null },
        now,
        when: guard,
      }),
      db
        .prepare(
          `UPDATE form_responses SET state = 'completed', completed_at = ?, completed_by = ?, schema_snapshot = ?,
             version = version + 1, updated_at = ? WHERE id = ? AND state = 'draft' AND version = ?`,
        )
        .bind(now, p.userId, completed.schema_snapshot, now, id, row.version),
    ]);
    if (update.meta.changes === 1) return completed;
  }
  throw nonFieldError("The form response changed while it was being completed; try again.");
}
