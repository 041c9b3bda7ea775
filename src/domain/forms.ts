/**
 * Forms: the check of a response's `data` against its form's fields, the required check of
 * `complete`, the starting data of a new response, and the schema snapshot a completed
 * response keeps (contract §15). Pure: `photo` and `signature` values come back as ids for
 * the caller to check against the response's task.
 */

export const FORM_FIELD_TYPES = [
  "text",
  "textarea",
  "number",
  "boolean",
  "date",
  "time",
  "datetime",
  "select",
  "multiselect",
  "photo",
  "signature",
  "section",
] as const;
export type FormFieldType = (typeof FORM_FIELD_TYPES)[number];
export const FORM_LAYOUTS = ["list", "table"] as const;
export const FORM_FIELD_KEY_RE = /^[a-z][a-z0-9_]{0,63}$/;

export type FormFieldDef = {
  id: string;
  key: string;
  label: string;
  field_type: FormFieldType;
  choices: string[];
  default: unknown;
  required: boolean;
  position: number;
  visible_to_worker: boolean;
  collapsed: boolean;
  layout: (typeof FORM_LAYOUTS)[number];
};

export const UNKNOWN_FIELD = "Unknown field.";
export const HIDDEN_FROM_WORKER = "This field is not visible to workers.";
export const SECTION_HOLDS_NO_VALUE = "A section holds no value.";

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_RE = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/;
const DATETIME_RE = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function isCalendarDate(s: string): boolean {
  const m = DATE_RE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** The id in a link to `collection` (`.../<collection>/<uuid>/`) or a bare UUID; else null. */
export function idIn(value: unknown, collection: "documents" | "signatures"): string | null {
  if (typeof value !== "string") return null;
  if (UUID_RE.test(value)) return value.toLowerCase();
  try {
    const m = new RegExp(`/${collection}/([0-9a-fA-F-]{36})/?$`).exec(new URL(value).pathname);
    return m && UUID_RE.test(m[1]) ? m[1].toLowerCase() : null;
  } catch {
    return null;
  }
}

/** The error for one value of a field, or null when valid; null is every field's empty value. */
export function fieldValueError(
  field: Pick<FormFieldDef, "field_type" | "choices">,
  value: unknown,
): string | null {
  if (value === null) return null;
  const choices = field.choices.join(", ");
  switch (field.field_type) {
    case "text":
    case "textarea":
      return typeof value === "string" ? null : "Expected a string.";
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? null : "Expected a number.";
    case "boolean":
      return typeof value === "boolean" ? null : "Expected a boolean.";
    case "date":
      return typeof value === "string" && isCalendarDate(value) ? null : "Expected a date (YYYY-MM-DD).";
    case "time":
      return typeof value === "string" && TIME_RE.test(value) ? null : "Expected a time (HH:MM or HH:MM:SS).";
    case "datetime":
      return typeof value === "string" && DATETIME_RE.test(value) && isCalendarDate(value.slice(0, 10))
        ? null
        : "Expected a date-time with a time zone offset (ISO 8601).";
    case "select":
      if (typeof value !== "string") return "Expected one of the choices, as a string.";
      return field.choices.includes(value) ? null : `"${value}" is not a valid choice. Choices: ${choices}.`;
    case "multiselect": {
      if (!Array.isArray(value) || value.some((v) => typeof v !== "string"))
        return "Expected a list of choices.";
      const bad = value.find((v) => !field.choices.includes(v));
      if (bad !== undefined) return `"${bad}" is not a valid choice. Choices: ${choices}.`;
      return new Set(value).size === value.length ? null : "Each choice may appear once.";
    }
    case "photo":
      return idIn(value, "documents") ? null : "Expected a document URL.";
    case "signature":
      return idIn(value, "signatures") ? null : "Expected a signature URL.";
    case "section":
      return SECTION_HOLDS_NO_VALUE;
  }
}

export type DataCheck = {
  errors: Record<string, string[]>;
  /** Documents and signatures the data names: the caller checks they are of the response's task. */
  documents: Map<string, string>;
  signatures: Map<string, string>;
};

/**
 * Checks the keys a write sends. A worker may not write a field hidden from workers (the
 * field is refused as if it did not exist for them).
 */
export function checkFormData(
  data: Record<string, unknown>,
  fields: readonly FormFieldDef[],
  opts: { worker: boolean },
): DataCheck {
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const out: DataCheck = { errors: {}, documents: new Map(), signatures: new Map() };
  for (const [key, value] of Object.entries(data)) {
    const field = byKey.get(key);
    if (!field) {
      out.errors[key] = [UNKNOWN_FIELD];
      continue;
    }
    if (opts.worker && !field.visible_to_worker) {
      out.errors[key] = [HIDDEN_FROM_WORKER];
      continue;
    }
    const error = fieldValueError(field, value);
    if (error) out.errors[key] = [error];
    else if (field.field_type === "photo" && value !== null)
      out.documents.set(key, idIn(value, "documents")!);
    else if (field.field_type === "signature" && value !== null)
      out.signatures.set(key, idIn(value, "signatures")!);
  }
  return out;
}

const isEmpty = (v: unknown) =>
  v === undefined ||
  v === null ||
  (typeof v === "string" && v.trim() === "") ||
  (Array.isArray(v) && v.length === 0);

/** Required fields the data leaves empty, in the form's order (checked on complete only). */
export function missingRequired(data: Record<string, unknown>, fields: readonly FormFieldDef[]): string[] {
  return sortFields(fields)
    .filter((f) => f.required && f.field_type !== "section" && isEmpty(data[f.key]))
    .map((f) => f.key);
}

/**
 * The data a new response starts from: each field's `default`, overridden by the task's
 * `form_default_values` for this form where they are valid values of a field of it.
 */
export function startingData(
  fields: readonly FormFieldDef[],
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (f.field_type === "section") continue;
    if (f.default !== null && f.default !== undefined) out[f.key] = f.default;
    if (f.key in overrides && fieldValueError(f, overrides[f.key]) === null) out[f.key] = overrides[f.key];
  }
  return out;
}

/** Fields in display order: by `position`, ties by key (a stable order for equal positions). */
export function sortFields<T extends Pick<FormFieldDef, "position" | "key">>(fields: readonly T[]): T[] {
  return [...fields].sort((a, b) => a.position - b.position || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** What a worker sees of a response's data: the keys of fields visible to workers only. */
export function visibleData(
  data: Record<string, unknown>,
  fields: readonly FormFieldDef[],
): Record<string, unknown> {
  const hidden = new Set(fields.filter((f) => !f.visible_to_worker).map((f) => f.key));
  return Object.fromEntries(Object.entries(data).filter(([k]) => !hidden.has(k)));
}

export type FormSnapshot = {
  form: { id: string; name: string; description: string };
  fields: Omit<FormFieldDef, "id">[];
};

/** The form and its fields as they are when a response is completed: how it reads forever. */
export function snapshotOf(
  form: { id: string; name: string; description: string },
  fields: readonly FormFieldDef[],
): FormSnapshot {
  return {
    form: { id: form.id, name: form.name, description: form.description },
    fields: sortFields(fields).map(({ id: _id, ...rest }) => structuredClone(rest)),
  };
}
