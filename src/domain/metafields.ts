/**
 * Metafields: an account's definitions of custom fields, and the check of a `metafields`
 * object against them (contract §12, docs/rules.md). Pure: references (an `assignee` value
 * names a user of the account) come back as ids for the caller to resolve.
 */

export const METAFIELD_KEY_RE = /^[a-z][a-z0-9_]{0,63}$/;
// `clients` is this service's addition to contract §12's list (clients carry metafields too, §13).
export const METAFIELD_TARGETS = ["tasks", "orders", "routes", "contact_addresses", "clients"] as const;
export const METAFIELD_VALUE_TYPES = [
  "string",
  "text",
  "number",
  "integer",
  "boolean",
  "date",
  "datetime",
  "select",
  "multiselect",
  "assignee",
  "link",
] as const;
export const METAFIELD_SOURCES = ["manual", "contact_address"] as const;

export type MetafieldTarget = (typeof METAFIELD_TARGETS)[number];
export type MetafieldValueType = (typeof METAFIELD_VALUE_TYPES)[number];

export type MetafieldDefinition = {
  key: string;
  value_type: MetafieldValueType;
  choices: string[];
  is_required_before_complete: boolean;
  is_editable_by_worker: boolean;
  source: (typeof METAFIELD_SOURCES)[number];
};

/** `string` values are one line of at most this many characters; `text` has no own bound. */
export const STRING_MAX = 255;

export const UNKNOWN_METAFIELD = "Unknown metafield.";

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
// RFC 3339 date-time with a required offset (or Z): a value read back means the same instant.
const DATETIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isCalendarDate(s: string): boolean {
  const m = DATE_RE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** The id of a user named by URL (`.../users/<uuid>/`) or bare UUID; null when it is neither. */
export function userIdOf(value: string): string | null {
  if (UUID_RE.test(value)) return value.toLowerCase();
  try {
    const m = /\/users\/([0-9a-fA-F-]{36})\/?$/.exec(new URL(value).pathname);
    return m && UUID_RE.test(m[1]) ? m[1].toLowerCase() : null;
  } catch {
    return null;
  }
}

const choiceList = (choices: string[]) => choices.join(", ");

/**
 * The error for one value of a definition, or null when it is valid. `null` is a valid value of
 * every type (an empty field); emptiness matters only to `is_required_before_complete`.
 */
export function valueError(def: MetafieldDefinition, value: unknown): string | null {
  if (value === null) return null;
  switch (def.value_type) {
    case "string":
      if (typeof value !== "string") return "Expected a string.";
      if (value.includes("\n")) return "Expected a single line (use a text metafield for several).";
      return value.length > STRING_MAX ? `Ensure this value has at most ${STRING_MAX} characters.` : null;
    case "text":
      return typeof value === "string" ? null : "Expected a string.";
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? null : "Expected a number.";
    case "integer":
      return Number.isSafeInteger(value) ? null : "Expected an integer.";
    case "boolean":
      return typeof value === "boolean" ? null : "Expected a boolean.";
    case "date":
      return typeof value === "string" && isCalendarDate(value) ? null : "Expected a date (YYYY-MM-DD).";
    case "datetime":
      return typeof value === "string" && DATETIME_RE.test(value) && isCalendarDate(value.slice(0, 10))
        ? null
        : "Expected a date-time with a time zone offset (ISO 8601).";
    case "select":
      if (typeof value !== "string") return "Expected one of the choices, as a string.";
      return def.choices.includes(value)
        ? null
        : `"${value}" is not a valid choice. Choices: ${choiceList(def.choices)}.`;
    case "multiselect": {
      if (!Array.isArray(value) || value.some((v) => typeof v !== "string"))
        return "Expected a list of choices.";
      const bad = value.find((v) => !def.choices.includes(v));
      if (bad !== undefined) return `"${bad}" is not a valid choice. Choices: ${choiceList(def.choices)}.`;
      return new Set(value).size === value.length ? null : "Each choice may appear once.";
    }
    case "assignee":
      return typeof value === "string" && userIdOf(value) ? null : "Expected a user URL.";
    case "link": {
      if (typeof value !== "string") return "Expected an http(s) URL.";
      try {
        const u = new URL(value);
        return u.protocol === "http:" || u.protocol === "https:" ? null : "Expected an http(s) URL.";
      } catch {
        return "Expected an http(s) URL.";
      }
    }
  }
}

export type MetafieldCheck = {
  /** Field errors by key (DRF shape under `metafields`). */
  errors: Record<string, string[]>;
  /** Users named by `assignee` values: the caller checks they belong to the account. */
  userIds: Map<string, string>;
};

/**
 * Checks `input` (what a write sends) against the definitions of one target. A key with no
 * definition is refused, unless it is stored already with the same value: a deleted
 * definition leaves its values alone and stops validating them, so a client that sends the
 * object back as it read it is not refused for them.
 */
export function checkMetafields(
  input: Record<string, unknown>,
  definitions: readonly MetafieldDefinition[],
  stored: Record<string, unknown> = {},
): MetafieldCheck {
  const byKey = new Map(definitions.map((d) => [d.key, d]));
  const errors: Record<string, string[]> = {};
  const userIds = new Map<string, string>();
  for (const [key, value] of Object.entries(input)) {
    const def = byKey.get(key);
    if (!def) {
      if (!(key in stored && JSON.stringify(stored[key]) === JSON.stringify(value)))
        errors[key] = [UNKNOWN_METAFIELD];
      continue;
    }
    const error = valueError(def, value);
    if (error) errors[key] = [error];
    else if (def.value_type === "assignee" && typeof value === "string") userIds.set(key, userIdOf(value)!);
  }
  return { errors, userIds };
}

/** Empty for `is_required_before_complete`: absent, null, blank text or an empty list. */
export function isEmptyValue(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    (typeof value === "string" && value.trim() === "") ||
    (Array.isArray(value) && value.length === 0)
  );
}

/** Keys required before `complete` that the task's metafields leave empty, sorted. */
export function missingBeforeComplete(
  metafields: Record<string, unknown>,
  definitions: readonly MetafieldDefinition[],
): string[] {
  return definitions
    .filter((d) => d.is_required_before_complete && isEmptyValue(metafields[d.key]))
    .map((d) => d.key)
    .sort();
}

/** Keys a worker may not set (`is_editable_by_worker: false`) that `input` touches, sorted. */
export function notEditableByWorker(
  input: Record<string, unknown>,
  definitions: readonly MetafieldDefinition[],
): string[] {
  const locked = new Set(definitions.filter((d) => !d.is_editable_by_worker).map((d) => d.key));
  return Object.keys(input)
    .filter((k) => locked.has(k))
    .sort();
}

/** Values copied from a contact address at task creation (`source: contact_address`). */
export function copiedFromContactAddress(
  contactAddressMetafields: Record<string, unknown>,
  definitions: readonly MetafieldDefinition[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const d of definitions) {
    if (d.source === "contact_address" && d.key in contactAddressMetafields)
      out[d.key] = contactAddressMetafields[d.key];
  }
  return out;
}
