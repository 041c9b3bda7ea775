/**
 * The columns of an export (contract §21), which are also the columns an import reads: every
 * task (or contact address) field by its name, dotted sub-fields of the objects
 * (`address.formatted_address`, `contact.phones`, `metafields.<key>`) and a few fields of
 * related objects (`assignee.email`, `order.external_id`, ...).
 *
 * A value is rendered as the API renders it (links as URLs, times in the export's zone). In CSV
 * a list or object is its JSON text, a boolean `true`/`false`, null an empty cell; in JSON
 * Lines each row is one flat object keyed by these names.
 */
import { link, type RenderCtx, ts } from "../../http/serialize";
import type { StoredAddress, StoredContact } from "../addresses/types";
import type { ContactAddressAddress, ContactAddressRow } from "../contact-addresses";
import { addressOf, contactOf, formatDuration, parseJson, type TaskRow } from "../tasks/types";

export type ExportKind = "tasks" | "contact_addresses";
export const EXPORT_KINDS: readonly ExportKind[] = ["tasks", "contact_addresses"];

/** Rows of related tables that some columns read (one query per page each). */
export type Related = {
  users: Map<string, { email: string; name: string }>;
  orders: Map<
    string,
    {
      external_id: string | null;
      reference: string;
      description: string;
      metafields: Record<string, unknown>;
    }
  >;
};

type View = {
  row: Record<string, unknown>;
  address: StoredAddress & { geocoded_at: number | null; geocode_failed_at: number | null };
  contact: StoredContact;
  metafields: Record<string, unknown>;
};
type Getter = (v: View, rel: Related, r: RenderCtx) => unknown;

const lat = (a: StoredAddress) => (a.location ? a.location.coordinates[1] : null);
const lon = (a: StoredAddress) => (a.location ? a.location.coordinates[0] : null);

/** Address and contact columns: the same for tasks and contact addresses. */
const SHARED: Record<string, Getter> = {
  address: (v, _x, r) => ({
    ...v.address,
    geocoded_at: ts(r, v.address.geocoded_at),
    geocode_failed_at: ts(r, v.address.geocode_failed_at),
  }),
  "address.raw_address": (v) => v.address.raw_address,
  "address.formatted_address": (v) => v.address.formatted_address,
  "address.location": (v) => v.address.location,
  "address.latitude": (v) => lat(v.address),
  "address.longitude": (v) => lon(v.address),
  "address.geocoded_at": (v, _x, r) => ts(r, v.address.geocoded_at),
  "address.geocode_failed_at": (v, _x, r) => ts(r, v.address.geocode_failed_at),
  "address.geocoding_provider": (v) => v.address.geocoding_provider,
  contact: (v) => v.contact,
  "contact.name": (v) => v.contact.name,
  "contact.company": (v) => v.contact.company,
  "contact.emails": (v) => v.contact.emails,
  "contact.phones": (v) => v.contact.phones,
  "contact.notes": (v) => v.contact.notes,
  metafields: (v) => v.metafields,
};

const col = (name: string) => (v: View) => v.row[name] ?? null;
const time = (name: string) => (v: View, _x: Related, r: RenderCtx) => ts(r, v.row[name] as number | null);

const TASK_FIELDS: Record<string, Getter> = {
  id: col("id"),
  url: (v, _x, r) => link(r, "tasks", v.row.id as string),
  account: (v, _x, r) => link(r, "accounts", v.row.account_id as string),
  state: col("state"),
  category: col("category"),
  description: col("description"),
  complete_after: time("complete_after"),
  complete_before: time("complete_before"),
  scheduled_time: time("scheduled_time"),
  duration: (v) => formatDuration(v.row.duration_seconds as number | null),
  position: col("position"),
  assignee: (v, _x, r) => link(r, "users", v.row.assignee_id as string | null),
  "assignee.email": (v, x) => x.users.get(v.row.assignee_id as string)?.email ?? null,
  "assignee.name": (v, x) => x.users.get(v.row.assignee_id as string)?.name ?? null,
  order: (v, _x, r) => link(r, "orders", v.row.order_id as string | null),
  "order.external_id": (v, x) => x.orders.get(v.row.order_id as string)?.external_id ?? null,
  "order.reference": (v, x) => x.orders.get(v.row.order_id as string)?.reference ?? null,
  "order.description": (v, x) => x.orders.get(v.row.order_id as string)?.description ?? null,
  client: (v, _x, r) => link(r, "clients", v.row.client_id as string | null),
  route: (v, _x, r) => link(r, "routes", v.row.route_id as string | null),
  created_by: (v, _x, r) => link(r, "users", v.row.created_by as string | null),
  signers: (v) => parseJson(v.row.signers as string | null, []),
  recurrence: (v, _x, r) => link(r, "recurrences", v.row.recurrence_id as string | null),
  calendar_time: (v) => parseJson(v.row.calendar_time as string | null, null),
  form_default_values: (v) => parseJson(v.row.form_default_values as string | null, {}) ?? {},
  contact_address: (v, _x, r) => link(r, "contact_addresses", v.row.contact_address_id as string | null),
  contact_address_external_id: col("contact_address_external_id"),
  task_import: (v, _x, r) => link(r, "imports", v.row.task_import_id as string | null),
  created_at: time("created_at"),
  updated_at: time("updated_at"),
  ...SHARED,
};

const CONTACT_ADDRESS_FIELDS: Record<string, Getter> = {
  id: col("id"),
  url: (v, _x, r) => link(r, "contact_addresses", v.row.id as string),
  account: (v, _x, r) => link(r, "accounts", v.row.account_id as string),
  external_id: col("external_id"),
  created_at: time("created_at"),
  updated_at: time("updated_at"),
  ...SHARED,
};

const STATIC: Record<ExportKind, Record<string, Getter>> = {
  tasks: TASK_FIELDS,
  contact_addresses: CONTACT_ADDRESS_FIELDS,
};

/** Every fixed column name of a kind (the `metafields.<key>` ones come from the definitions). */
export const fieldNames = (kind: ExportKind) => Object.keys(STATIC[kind]);

/** The metafield keys defined for each target a kind's columns may name. */
export type MetafieldKeys = { own: string[]; order: string[] };

/**
 * The columns when `fields` is left out: what a person reads and what an import needs to
 * recreate the object, then one column per metafield definition of the kind.
 */
export function defaultFields(kind: ExportKind, keys: MetafieldKeys): string[] {
  const common = [
    "address.raw_address",
    "address.formatted_address",
    "address.latitude",
    "address.longitude",
    "contact.name",
    "contact.company",
    "contact.phones",
    "contact.emails",
    "contact.notes",
  ];
  const meta = keys.own.map((k) => `metafields.${k}`);
  if (kind === "contact_addresses")
    return ["id", "external_id", ...common, ...meta, "created_at", "updated_at"];
  return [
    "id",
    "state",
    "category",
    "description",
    ...common,
    "complete_after",
    "complete_before",
    "scheduled_time",
    "duration",
    "assignee.email",
    "order.external_id",
    "order.reference",
    ...meta,
    "created_at",
    "updated_at",
  ];
}

const OWN_META = /^metafields\.([a-z][a-z0-9_]{0,63})$/;
const ORDER_META = /^order\.metafields\.([a-z][a-z0-9_]{0,63})$/;

/** The metafield column names of each kind, as the document's `pattern` (`unknownFields`). */
export const METAFIELD_COLUMN: Record<ExportKind, string> = {
  tasks: "^(order\\.)?metafields\\.[a-z][a-z0-9_]{0,63}$",
  contact_addresses: OWN_META.source,
};

/** The names that are not columns of this kind (metafield columns must name a definition). */
export function unknownFields(kind: ExportKind, names: readonly string[], keys: MetafieldKeys): string[] {
  return names.filter((n) => {
    if (n in STATIC[kind]) return false;
    const own = OWN_META.exec(n);
    if (own) return !keys.own.includes(own[1]);
    const ord = ORDER_META.exec(n);
    if (ord && kind === "tasks") return !keys.order.includes(ord[1]);
    return true;
  });
}

export type ColumnPlan = {
  names: string[];
  getters: Getter[];
  needsUsers: boolean;
  needsOrders: boolean;
};

/** Getters for known names (check them with `unknownFields` first). */
export function planColumns(kind: ExportKind, names: readonly string[]): ColumnPlan {
  const getters = names.map((n): Getter => {
    const fixed = STATIC[kind][n];
    if (fixed) return fixed;
    const own = OWN_META.exec(n);
    if (own) return (v) => v.metafields[own[1]] ?? null;
    const ord = ORDER_META.exec(n);
    if (ord) return (v, x) => x.orders.get(v.row.order_id as string)?.metafields[ord[1]] ?? null;
    return () => null;
  });
  return {
    names: [...names],
    getters,
    needsUsers: names.some((n) => n.startsWith("assignee.")),
    needsOrders: names.some((n) => n.startsWith("order.")),
  };
}

function viewOf(kind: ExportKind, row: Record<string, unknown>): View {
  if (kind === "tasks") {
    const t = row as TaskRow;
    return {
      row,
      address: { ...addressOf(t), geocoded_at: t.geocoded_at, geocode_failed_at: t.geocode_failed_at },
      contact: contactOf(t),
      metafields: parseJson(t.metafields, {}),
    };
  }
  const c = row as ContactAddressRow;
  const a = parseJson<Partial<ContactAddressAddress>>(c.address, {});
  return {
    row,
    address: {
      raw_address: a.raw_address ?? "",
      formatted_address: a.formatted_address ?? null,
      location: a.location ?? null,
      geocoding_provider: a.geocoding_provider ?? null,
      geocoded_at: a.geocoded_at ?? null,
      geocode_failed_at: a.geocode_failed_at ?? null,
    },
    contact: contactOf(c),
    metafields: parseJson(c.metafields, {}),
  };
}

/** One row's values, in column order. */
export function rowValues(
  kind: ExportKind,
  plan: ColumnPlan,
  row: Record<string, unknown>,
  rel: Related,
  r: RenderCtx,
): unknown[] {
  const v = viewOf(kind, row);
  return plan.getters.map((g) => g(v, rel, r) ?? null);
}

/** A value as one CSV cell (before RFC 4180 quoting and formula escaping). */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/** The related rows a page of tasks needs: its assignees and orders (one query each). */
export async function loadRelated(
  db: D1Database,
  accountId: string,
  plan: ColumnPlan,
  rows: readonly Record<string, unknown>[],
): Promise<Related> {
  const rel: Related = { users: new Map(), orders: new Map() };
  const ids = (col: string) => JSON.stringify([...new Set(rows.map((r) => r[col]).filter(Boolean))]);
  if (plan.needsUsers) {
    const { results } = await db
      .prepare("SELECT id, email, name FROM users WHERE id IN (SELECT value FROM json_each(?))")
      .bind(ids("assignee_id"))
      .all<{ id: string; email: string; name: string }>();
    for (const u of results) rel.users.set(u.id, { email: u.email, name: u.name });
  }
  if (plan.needsOrders) {
    const { results } = await db
      .prepare(
        "SELECT id, external_id, reference, description, metafields FROM orders WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))",
      )
      .bind(accountId, ids("order_id"))
      .all<{
        id: string;
        external_id: string | null;
        reference: string;
        description: string;
        metafields: string;
      }>();
    for (const o of results) rel.orders.set(o.id, { ...o, metafields: parseJson(o.metafields, {}) });
  }
  return rel;
}
