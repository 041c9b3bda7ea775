import type { TaskState } from "../../domain/task-state-machine";
import { EMPTY_CONTACT, type StoredAddress, type StoredContact } from "../addresses/types";

export const TASK_CATEGORIES = ["pick_up", "drop_off", "service"] as const;

/** `ordering` of `GET /tasks/` (contract §4), each also with `-`; here beside the list's schema's imports. */
export const ORDERINGS = [
  "created_at",
  "updated_at",
  "complete_after",
  "complete_before",
  "position",
] as const;

/** `expand` of the task endpoints (contract §4). */
export const EXPANDS = ["routes"] as const;

/** A `tasks` row as D1 returns it (JSON columns are text). */
export type TaskRow = {
  id: string;
  account_id: string;
  state: TaskState;
  category: string;
  description: string;
  address: string;
  geocoded_at: number | null;
  geocode_failed_at: number | null;
  contact: string;
  complete_after: number | null;
  complete_before: number | null;
  scheduled_time: number | null;
  duration_seconds: number | null;
  assignee_id: string | null;
  order_id: string | null;
  order_index: number | null;
  position: number | null;
  created_by: string | null;
  metafields: string;
  route_id: string | null;
  signers: string | null;
  form_default_values: string | null;
  recurrence_id: string | null;
  calendar_time: string | null;
  contact_address_id: string | null;
  contact_address_external_id: string | null;
  client_id: string | null;
  task_import_id: string | null;
  version: number;
  /** The command that last moved the task: a command's outcome rows are guarded by it. */
  last_command_id: string | null;
  created_at: number;
  updated_at: number;
};

export type { AddressInput, ResolvedAddress, StoredAddress, StoredContact } from "../addresses/types";

/**
 * Writable task columns with JSON columns parsed. A `Partial<TaskValues>` is "what a request
 * sets": PATCH merges it over the stored row, create and PUT over the defaults.
 */
export type TaskValues = {
  state: TaskState;
  category: string;
  description: string;
  address: StoredAddress;
  geocoded_at: number | null;
  geocode_failed_at: number | null;
  contact: StoredContact;
  complete_after: number | null;
  complete_before: number | null;
  scheduled_time: number | null;
  duration_seconds: number | null;
  assignee_id: string | null;
  order_id: string | null;
  order_index: number | null;
  position: number | null;
  metafields: Record<string, unknown>;
  route_id: string | null;
  signers: unknown;
  form_default_values: Record<string, unknown>;
  contact_address_id: string | null;
  contact_address_external_id: string | null;
  client_id: string | null;
};

export const JSON_COLUMNS = new Set([
  "address",
  "contact",
  "metafields",
  "signers",
  "form_default_values",
  "calendar_time",
]);

/** Every column of `tasks`, in one order for INSERTs. */
export const TASK_COLUMNS = [
  "id",
  "account_id",
  "state",
  "category",
  "description",
  "address",
  "geocoded_at",
  "geocode_failed_at",
  "contact",
  "complete_after",
  "complete_before",
  "scheduled_time",
  "duration_seconds",
  "assignee_id",
  "order_id",
  "order_index",
  "position",
  "created_by",
  "metafields",
  "route_id",
  "signers",
  "form_default_values",
  "recurrence_id",
  "calendar_time",
  "contact_address_id",
  "contact_address_external_id",
  "client_id",
  "task_import_id",
  "version",
  "last_command_id",
  "created_at",
  "updated_at",
] as const satisfies readonly (keyof TaskRow)[];

export { EMPTY_CONTACT } from "../addresses/types";

/** Values of the fields a create (or PUT) does not send. */
export const TASK_DEFAULTS: Omit<TaskValues, "state" | "category" | "address"> = {
  description: "",
  geocoded_at: null,
  geocode_failed_at: null,
  contact: EMPTY_CONTACT,
  complete_after: null,
  complete_before: null,
  scheduled_time: null,
  duration_seconds: null,
  assignee_id: null,
  order_id: null,
  order_index: null,
  position: null,
  metafields: {},
  route_id: null,
  signers: [],
  form_default_values: {},
  contact_address_id: null,
  contact_address_external_id: null,
  client_id: null,
};

/** States in which a task has not started: an order upsert may still cancel it (contract §7). */
export const NOT_STARTED_STATES: readonly TaskState[] = ["draft", "scheduled", "unassigned", "assigned"];
/** States that no longer count as a worker's open work (auto-assign balances the others). */
export const CLOSED_STATES: readonly TaskState[] = ["completed", "failed", "cancelled"];

export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** Row → D1 value: JSON columns as text, the rest as is. */
export function dbValue(column: string, value: unknown): unknown {
  if (JSON_COLUMNS.has(column)) return value === null || value === undefined ? null : JSON.stringify(value);
  if (typeof value === "boolean") return value ? 1 : 0;
  return value ?? null;
}

export function contactOf(row: { contact: string }): StoredContact {
  return { ...EMPTY_CONTACT, ...parseJson<Partial<StoredContact>>(row.contact, {}) };
}

export function addressOf(row: { address: string }): StoredAddress {
  const a = parseJson<Partial<StoredAddress>>(row.address, {});
  return {
    raw_address: a.raw_address ?? "",
    formatted_address: a.formatted_address ?? null,
    location: a.location ?? null,
    geocoding_provider: a.geocoding_provider ?? null,
  };
}

export const isEmptyContact = (c: StoredContact) =>
  !c.name && !c.company && !c.notes && c.emails.length === 0 && c.phones.length === 0;

/** Seconds → `HH:MM:SS` (hours may pass 24: durations are not times of day). */
export function formatDuration(seconds: number | null): string | null {
  if (seconds === null || seconds === undefined) return null;
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const p = (n: number) => String(n).padStart(2, "0");
  return `${p(h)}:${p(m)}:${p(s)}`;
}

export function parseDuration(text: string): number | null {
  const m = /^(\d{1,4}):([0-5]\d):([0-5]\d)$/.exec(text);
  if (!m) return null;
  return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
}
