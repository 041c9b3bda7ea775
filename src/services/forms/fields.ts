import { accountRow } from "../../db/account-rows";
import { type FormFieldType, fieldValueError } from "../../domain/forms";
import { type FieldErrors, fieldError, notFound, ValidationError } from "../../http/errors";
import { paginate } from "../../http/pagination";
import { parseHyperlink } from "../../http/urls";
import { uuidv7 } from "../../lib/ids";
import type { FormFieldPatch, FormFieldWrite } from "../../schemas/forms";
import { isDispatcher, type Principal } from "../auth/principal";
import { getForm } from "./forms";
import type { FormFieldRow } from "./rows";

/** Fields per form (contract §22: a setting, `MAX_FORM_FIELDS`). */
export const DEFAULT_MAX_FORM_FIELDS = 500;
export function maxFormFields(env: { MAX_FORM_FIELDS?: string }) {
  const n = Number(env.MAX_FORM_FIELDS);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_MAX_FORM_FIELDS;
}

const NO_OBJECT = "Invalid hyperlink - Object does not exist.";
const DUPLICATE_KEY = "A field with this key already exists in this form.";
const NO_DEFAULT: Partial<Record<FormFieldType, string>> = {
  photo: "A photo field has no default.",
  signature: "A signature field has no default.",
  section: "A section has no default.",
};

const isUniqueViolation = (err: unknown) =>
  /UNIQUE constraint failed/i.test(String((err as Error)?.message ?? err));

/** A field; for a worker, one with `visible_to_worker: false` does not exist (contract §15). */
export async function getField(db: D1Database, p: Principal, id: string): Promise<FormFieldRow> {
  const row = await accountRow<FormFieldRow>(db, "form_fields", p.accountId, id);
  if (!isDispatcher(p) && !row.visible_to_worker) throw notFound();
  return row;
}

/** The fields of a form in display order (by `position`, then key). */
export async function fieldsOf(db: D1Database, accountId: string, formId: string): Promise<FormFieldRow[]> {
  const { results } = await db
    .prepare("SELECT * FROM form_fields WHERE form_id = ? AND account_id = ? ORDER BY position, key")
    .bind(formId, accountId)
    .all<FormFieldRow>();
  return results;
}

/** Listed by `position` (contract §15), ties by id: filter by `form` for one form's order. */
export function listFields(
  db: D1Database,
  p: Principal,
  q: { form?: string; cursor?: string; page_size?: number },
  url: string,
) {
  const where = ["account_id = ?"];
  const params: unknown[] = [p.accountId];
  // Workers neither write nor read hidden fields, their definitions and defaults included.
  if (!isDispatcher(p)) where.push("visible_to_worker = 1");
  if (q.form !== undefined) {
    const formId = parseHyperlink(q.form, "forms");
    if (!formId) throw fieldError("form", "Invalid hyperlink - No URL match.");
    where.push("form_id = ?");
    params.push(formId);
  }
  return paginate<FormFieldRow>({
    db,
    select: "SELECT * FROM form_fields",
    where,
    params,
    sortExpr: "position",
    sortValue: (row: FormFieldRow) => row.position,
    desc: false,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

/** The errors of a field's type, choices and default taken together. */
function shapeErrors(f: { field_type: FormFieldType; choices: string[]; default: unknown }): FieldErrors {
  const errors: FieldErrors = {};
  if ((f.field_type === "select" || f.field_type === "multiselect") && f.choices.length === 0) {
    errors.choices = [`A ${f.field_type} field needs at least one choice.`];
  }
  if (f.default !== null && f.default !== undefined) {
    const error = NO_DEFAULT[f.field_type] ?? fieldValueError(f, f.default);
    if (error) errors.default = [error];
  }
  return errors;
}

export async function createField(env: Env, p: Principal, input: FormFieldWrite): Promise<FormFieldRow> {
  const db = env.DB;
  const formId = parseHyperlink(input.form, "forms");
  if (!formId) throw fieldError("form", "Invalid hyperlink - No URL match.");
  try {
    await getForm(db, p, formId);
  } catch {
    throw fieldError("form", NO_OBJECT);
  }
  const choices = input.choices ?? [];
  const errors = shapeErrors({ field_type: input.field_type, choices, default: input.default });
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const now = Date.now();
  const id = uuidv7(now);
  const max = maxFormFields(env);
  let changes: number;
  try {
    // The count, the default position and the key's uniqueness are decided by this statement
    // alone, so racing creates can neither pass the limit nor share a key.
    const r = await db
      .prepare(
        `INSERT INTO form_fields (id, account_id, form_id, key, label, field_type, choices, default_value, required, position,
           visible_to_worker, collapsed, layout, created_at, updated_at)
         SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(?, (SELECT MAX(position) FROM form_fields WHERE form_id = ?) + 1, 0),
           ?, ?, ?, ?, ?
         WHERE (SELECT COUNT(*) FROM form_fields WHERE form_id = ?) < ?`,
      )
      .bind(
        id,
        p.accountId,
        formId,
        input.key,
        input.label ?? "",
        input.field_type,
        JSON.stringify(choices),
        input.default === undefined || input.default === null ? null : JSON.stringify(input.default),
        input.required ? 1 : 0,
        input.position ?? null,
        formId,
        input.visible_to_worker === false ? 0 : 1,
        input.collapsed ? 1 : 0,
        input.layout ?? "list",
        now,
        now,
        formId,
        max,
      )
      .run();
    changes = r.meta.changes;
  } catch (err) {
    if (isUniqueViolation(err)) throw fieldError("key", DUPLICATE_KEY);
    throw err;
  }
  if (!changes) throw fieldError("form", `A form has at most ${max} fields.`);
  return getField(db, p, id);
}

export async function updateField(
  db: D1Database,
  p: Principal,
  id: string,
  input: FormFieldPatch,
  method: "patch" | "put",
): Promise<FormFieldRow> {
  const row = await getField(db, p, id);
  const put = method === "put";
  const pick = <T>(v: T | undefined, current: T, fallback: T) =>
    v !== undefined ? v : put ? fallback : current;
  const current = {
    choices: JSON.parse(row.choices || "[]") as string[],
    default: row.default_value === null ? null : JSON.parse(row.default_value),
  };
  const next = {
    key: input.key ?? row.key,
    label: pick(input.label, row.label, ""),
    field_type: input.field_type ?? row.field_type,
    choices: pick(input.choices, current.choices, []),
    default: pick<unknown>(input.default, current.default, null),
    required: pick(input.required, Boolean(row.required), false),
    position: input.position ?? row.position,
    visible_to_worker: pick(input.visible_to_worker, Boolean(row.visible_to_worker), true),
    collapsed: pick(input.collapsed, Boolean(row.collapsed), false),
    layout: pick(input.layout, row.layout, "list"),
  };
  const errors = shapeErrors(next);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  try {
    await db
      .prepare(
        `UPDATE form_fields SET key = ?, label = ?, field_type = ?, choices = ?, default_value = ?, required = ?, position = ?,
           visible_to_worker = ?, collapsed = ?, layout = ?, updated_at = ? WHERE id = ? AND account_id = ?`,
      )
      .bind(
        next.key,
        next.label,
        next.field_type,
        JSON.stringify(next.choices),
        next.default === null || next.default === undefined ? null : JSON.stringify(next.default),
        next.required ? 1 : 0,
        next.position,
        next.visible_to_worker ? 1 : 0,
        next.collapsed ? 1 : 0,
        next.layout,
        Date.now(),
        id,
        p.accountId,
      )
      .run();
  } catch (err) {
    if (isUniqueViolation(err)) throw fieldError("key", DUPLICATE_KEY);
    throw err;
  }
  return getField(db, p, id);
}

export async function deleteField(db: D1Database, p: Principal, id: string) {
  await getField(db, p, id);
  await db.prepare("DELETE FROM form_fields WHERE id = ? AND account_id = ?").bind(id, p.accountId).run();
}
