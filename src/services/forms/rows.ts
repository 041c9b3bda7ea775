import type { FormFieldDef, FormFieldType, FormSnapshot } from "../../domain/forms";
import { responseForReader } from "../../domain/worker-view";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { parseJson } from "../tasks/types";

export type FormRow = {
  id: string;
  account_id: string;
  name: string;
  description: string;
  is_active: number;
  created_at: number;
  updated_at: number;
};

export type FormFieldRow = {
  id: string;
  account_id: string;
  form_id: string;
  key: string;
  label: string;
  field_type: FormFieldType;
  choices: string;
  default_value: string | null;
  required: number;
  position: number;
  visible_to_worker: number;
  collapsed: number;
  layout: "list" | "table";
  created_at: number;
  updated_at: number;
};

export type FormResponseRow = {
  id: string;
  account_id: string;
  form_id: string;
  task_id: string | null;
  data: string;
  state: "draft" | "completed";
  completed_at: number | null;
  completed_by: string | null;
  schema_snapshot: string | null;
  created_by: string | null;
  version: number;
  created_at: number;
  updated_at: number;
};

/** A stored field as the pure rules of domain/forms.ts take it. */
export function fieldDef(row: FormFieldRow): FormFieldDef {
  return {
    id: row.id,
    key: row.key,
    label: row.label,
    field_type: row.field_type,
    choices: parseJson<string[]>(row.choices, []),
    default: parseJson<unknown>(row.default_value, null),
    required: Boolean(row.required),
    position: row.position,
    visible_to_worker: Boolean(row.visible_to_worker),
    collapsed: Boolean(row.collapsed),
    layout: row.layout,
  };
}

export function serializeForm(r: RenderCtx, f: FormRow) {
  return {
    id: f.id,
    url: link(r, "forms", f.id),
    account: link(r, "accounts", f.account_id),
    name: f.name,
    description: f.description,
    is_active: Boolean(f.is_active),
    created_at: ts(r, f.created_at),
    updated_at: ts(r, f.updated_at),
  };
}

export function serializeField(r: RenderCtx, f: FormFieldRow) {
  const d = fieldDef(f);
  return {
    id: f.id,
    url: link(r, "form_fields", f.id),
    form: link(r, "forms", f.form_id),
    key: d.key,
    label: d.label,
    field_type: d.field_type,
    choices: d.choices,
    default: d.default,
    required: d.required,
    position: d.position,
    visible_to_worker: d.visible_to_worker,
    collapsed: d.collapsed,
    layout: d.layout,
    created_at: ts(r, f.created_at),
    updated_at: ts(r, f.updated_at),
  };
}

/**
 * A response as its reader may see it: `data` without the keys of fields hidden from workers
 * when the reader is one (`hidden`), and, once completed, those of the snapshot's hidden fields.
 */
export function serializeResponse(
  r: RenderCtx,
  row: FormResponseRow,
  hidden: ReadonlySet<string> = new Set(),
) {
  const data = parseJson<Record<string, unknown>>(row.data, {});
  const snapshot = parseJson<FormSnapshot | null>(row.schema_snapshot, null);
  return responseForReader(
    {
      id: row.id,
      url: link(r, "form_responses", row.id),
      account: link(r, "accounts", row.account_id),
      form: link(r, "forms", row.form_id),
      task: link(r, "tasks", row.task_id),
      data,
      state: row.state,
      completed_at: ts(r, row.completed_at),
      completed_by: link(r, "users", row.completed_by),
      schema_snapshot: snapshot,
      created_by: link(r, "users", row.created_by),
      created_at: ts(r, row.created_at),
      updated_at: ts(r, row.updated_at),
    },
    hidden,
  );
}
