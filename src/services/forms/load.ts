import type { FormFieldDef } from "../../domain/forms";
import { type FormFieldRow, type FormRow, fieldDef } from "./rows";

export type FieldDefs = readonly FormFieldDef[];

/**
 * A form and its fields read in one D1 batch (one transaction), so a response is checked, and
 * a snapshot taken, against one consistent version of the form. Null when the form is gone.
 */
export async function formWithFields(db: D1Database, accountId: string, formId: string) {
  const [form, fields] = await db.batch([
    db.prepare("SELECT * FROM forms WHERE id = ? AND account_id = ?").bind(formId, accountId),
    db
      .prepare("SELECT * FROM form_fields WHERE form_id = ? AND account_id = ? ORDER BY position, key")
      .bind(formId, accountId),
  ]);
  const row = form.results[0] as FormRow | undefined;
  if (!row) return null;
  return { form: row, fields: (fields.results as FormFieldRow[]).map(fieldDef) };
}
