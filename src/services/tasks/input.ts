import { copiedFromContactAddress } from "../../domain/metafields";
import type { TaskState } from "../../domain/task-state-machine";
import type { FieldErrors } from "../../http/errors";
import { parseTimestamp } from "../../http/timezones";
import { type Collection, parseHyperlink } from "../../http/urls";
import type { TaskWriteBody } from "../../schemas/tasks";
import type { GeocodeSession } from "../addresses/geocode-session";
import type { Principal } from "../auth/principal";
import { loadDefinitions, metafieldErrors } from "../metafields";
import {
  type AddressInput,
  EMPTY_CONTACT,
  parseDuration,
  type ResolvedAddress,
  type StoredAddress,
  type StoredContact,
  type TaskValues,
} from "./types";

// Reading a task body happens in phases so that an order of 500 tasks costs a handful of
// queries, not thousands: (1) `readTaskBody` parses each body and collects the ids it refers
// to; (2) `resolveRefs` looks them all up at once, in the caller's account only; (3) `bindRefs`
// turns ids into columns or field errors and fills address/contact from a contact address;
// (4) `geocodeDrafts` geocodes what needs it. Nothing is written until every item is valid.

export const MSG = {
  required: "This field is required.",
  notNull: "This field may not be null.",
  noMatch: "Invalid hyperlink - No URL match.",
  notExist: "Invalid hyperlink - Object does not exist.",
  badType: "Incorrect type. Expected URL string.",
  datetime:
    "Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z] (without an offset only with an Accept-Timezone header).",
  stateOnPatch: "State changes are made with task commands: POST /task_commands/.",
  assigneeChange: "Assignment changes are made with task commands: POST /task_commands/.",
  emptyAddress: "Give raw_address, location or both.",
  window: "complete_before must not be earlier than complete_after.",
  scheduledFuture: "A scheduled task needs a scheduled_time in the future.",
  scheduledNeedsTime: "A scheduled task needs a scheduled_time.",
  createState:
    'A task is created in state "draft" or "scheduled", or without a state (it then starts "assigned" with an assignee, else "unassigned").',
} as const;

export function addError(errors: FieldErrors, field: string, message: string) {
  const list = Array.isArray(errors[field]) ? (errors[field] as string[]) : [];
  list.push(message);
  errors[field] = list;
}

export const hasErrors = (e: FieldErrors) => Object.keys(e).length > 0;

/** A contact address as tasks use it (its address JSON also carries its outcome times). */
export type ContactAddressRef = {
  metafields?: Record<string, unknown>;
  id: string;
  external_id: string | null;
  address: StoredAddress & { geocoded_at?: number | null; geocode_failed_at?: number | null };
  contact: StoredContact;
};

/** Ids a request refers to; looked up in one query per kind. */
export class RefSet {
  readonly users = new Set<string>();
  readonly orders = new Set<string>();
  readonly clients = new Set<string>();
  readonly routes = new Set<string>();
  readonly contactAddresses = new Set<string>();
  readonly contactAddressExternalIds = new Set<string>();
}

export type ResolvedRefs = {
  users: Set<string>;
  orders: Set<string>;
  clients: Set<string>;
  /** Route id → state. */
  routes: Map<string, string>;
  contactAddressesById: Map<string, ContactAddressRef>;
  contactAddressesByExternalId: Map<string, ContactAddressRef>;
};

export type DraftMode = "create" | "put" | "patch" | "order";

/** One task body on its way to becoming columns. */
export type TaskDraft = {
  mode: DraftMode;
  errors: FieldErrors;
  /** Keys the caller sent (absent keys keep their value in PATCH and get defaults otherwise). */
  present: Set<string>;
  /** Columns set by plain fields; refs, address and state are added by later phases. */
  values: Partial<TaskValues>;
  state?: TaskState;
  accountId?: string | null;
  /** Parsed ids of hyperlink fields: undefined = not sent, null = sent as null. */
  assignee?: string | null;
  order?: string | null;
  client?: string | null;
  route?: string | null;
  contactAddress?: string | null;
  contactAddressExternalId?: string | null;
  /** The address to geocode (sent, or taken from a contact address that is not geocoded). */
  addressInput?: AddressInput;
  /** Resolved address: from the geocoder, or copied from a contact address. */
  address?: ResolvedAddress;
  /** On creation: the contact address named, whose `source: contact_address` metafields are copied. */
  contactAddressRef?: ContactAddressRef;
  /** PATCH only: what a contact address may fill, if the stored task turns out to lack it. */
  fill?: { contact?: StoredContact };
};

/** A hyperlink field: undefined = not sent (or malformed, with its error), null = sent as null. */
export function readLink(
  errors: FieldErrors,
  field: string,
  value: unknown,
  collection: Collection,
  into?: Set<string>,
): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === "") return null;
  if (typeof value !== "string") {
    addError(errors, field, MSG.badType);
    return undefined;
  }
  const id = parseHyperlink(value, collection);
  if (!id) {
    addError(errors, field, MSG.noMatch);
    return undefined;
  }
  into?.add(id);
  return id;
}

function readTime(draft: TaskDraft, field: keyof TaskValues, value: unknown, zone: string | null) {
  if (value === undefined) return;
  if (value === null || value === "") {
    (draft.values as Record<string, unknown>)[field] = null;
    return;
  }
  const ms = parseTimestamp(String(value), zone);
  if (ms === null) addError(draft.errors, field, MSG.datetime);
  else (draft.values as Record<string, unknown>)[field] = ms;
}

const normalizeContact = (c: TaskWriteBody["contact"]): StoredContact => ({
  ...EMPTY_CONTACT,
  ...Object.fromEntries(Object.entries(c ?? {}).filter(([, v]) => v !== undefined)),
});

/** Phase 1: shapes already checked by zod; parse values and collect referenced ids. */
export function readTaskBody(
  body: TaskWriteBody & { state?: unknown },
  opts: { mode: DraftMode; zone: string | null; refs: RefSet },
): TaskDraft {
  const { mode, zone, refs } = opts;
  const d: TaskDraft = {
    mode,
    errors: {},
    present: new Set(Object.keys(body).filter((k) => (body as Record<string, unknown>)[k] !== undefined)),
    values: {},
  };
  const v = d.values;

  if (mode === "patch" && body.state !== undefined) addError(d.errors, "state", MSG.stateOnPatch);
  if ((mode === "create" || mode === "order") && body.state !== undefined) d.state = body.state as TaskState;

  if (mode !== "order" && mode !== "patch") {
    if (body.account === undefined || body.account === null) addError(d.errors, "account", MSG.required);
  }
  d.accountId = readLink(d.errors, "account", body.account, "accounts");

  if (body.category !== undefined) v.category = body.category;
  if (body.description !== undefined) v.description = body.description;
  if (body.contact !== undefined) v.contact = normalizeContact(body.contact);
  readTime(d, "complete_after", body.complete_after, zone);
  readTime(d, "complete_before", body.complete_before, zone);
  readTime(d, "scheduled_time", body.scheduled_time, zone);
  if (body.position !== undefined) v.position = body.position;
  if (body.duration !== undefined)
    v.duration_seconds = body.duration === null ? null : parseDuration(body.duration);
  if (body.metafields !== undefined) v.metafields = body.metafields ?? {};
  if (body.signers !== undefined) v.signers = body.signers;
  if (body.form_default_values !== undefined) v.form_default_values = body.form_default_values ?? {};

  if (body.address === null) {
    if (mode === "patch") addError(d.errors, "address", MSG.notNull);
  } else if (body.address !== undefined) {
    const raw = body.address.raw_address?.trim() ?? "";
    if (!raw && !body.address.location) d.errors.address = { non_field_errors: [MSG.emptyAddress] };
    else d.addressInput = { raw_address: raw, location: body.address.location ?? null };
  }

  d.assignee = readLink(d.errors, "assignee", body.assignee, "users", refs.users);
  d.order = readLink(d.errors, "order", body.order, "orders", refs.orders);
  d.client = readLink(d.errors, "client", body.client, "clients", refs.clients);
  d.route = readLink(d.errors, "route", body.route, "routes", refs.routes);
  d.contactAddress = readLink(
    d.errors,
    "contact_address",
    body.contact_address,
    "contact_addresses",
    refs.contactAddresses,
  );
  if (body.contact_address_external_id !== undefined) {
    d.contactAddressExternalId = body.contact_address_external_id || null;
    if (d.contactAddressExternalId) refs.contactAddressExternalIds.add(d.contactAddressExternalId);
  }
  return d;
}

/** Phase 2: one query per kind of reference, scoped to the caller's account. */
export async function resolveRefs(db: D1Database, accountId: string, refs: RefSet): Promise<ResolvedRefs> {
  const out: ResolvedRefs = {
    users: new Set(),
    orders: new Set(),
    clients: new Set(),
    routes: new Map(),
    contactAddressesById: new Map(),
    contactAddressesByExternalId: new Map(),
  };
  const jobs: Promise<void>[] = [];
  if (refs.users.size) {
    jobs.push(
      db
        .prepare(
          "SELECT r.user_id AS id FROM account_roles r JOIN users u ON u.id = r.user_id " +
            "WHERE r.account_id = ? AND r.is_active = 1 AND r.state = 'active' AND u.is_active = 1 AND r.user_id IN (SELECT value FROM json_each(?))",
        )
        .bind(accountId, JSON.stringify([...refs.users]))
        .all<{ id: string }>()
        .then(({ results }) => {
          for (const r of results) out.users.add(r.id);
        }),
    );
  }
  if (refs.routes.size) {
    jobs.push(
      db
        .prepare(
          "SELECT id, state FROM routes WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))",
        )
        .bind(accountId, JSON.stringify([...refs.routes]))
        .all<{ id: string; state: string }>()
        .then(({ results }) => {
          for (const r of results) out.routes.set(r.id, r.state);
        }),
    );
  }
  if (refs.clients.size) {
    jobs.push(
      db
        .prepare("SELECT id FROM clients WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))")
        .bind(accountId, JSON.stringify([...refs.clients]))
        .all<{ id: string }>()
        .then(({ results }) => {
          for (const r of results) out.clients.add(r.id);
        }),
    );
  }
  if (refs.orders.size) {
    jobs.push(
      db
        .prepare("SELECT id FROM orders WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))")
        .bind(accountId, JSON.stringify([...refs.orders]))
        .all<{ id: string }>()
        .then(({ results }) => {
          for (const r of results) out.orders.add(r.id);
        }),
    );
  }
  if (refs.contactAddresses.size || refs.contactAddressExternalIds.size) {
    jobs.push(
      db
        .prepare(
          "SELECT id, external_id, address, contact, metafields FROM contact_addresses WHERE account_id = ? AND " +
            "(id IN (SELECT value FROM json_each(?)) OR external_id IN (SELECT value FROM json_each(?)))",
        )
        .bind(
          accountId,
          JSON.stringify([...refs.contactAddresses]),
          JSON.stringify([...refs.contactAddressExternalIds]),
        )
        .all<{
          id: string;
          external_id: string | null;
          address: string;
          contact: string;
          metafields: string;
        }>()
        .then(({ results }) => {
          for (const r of results) {
            const ca: ContactAddressRef = {
              id: r.id,
              external_id: r.external_id,
              address: JSON.parse(r.address || "{}"),
              contact: { ...EMPTY_CONTACT, ...JSON.parse(r.contact || "{}") },
              metafields: JSON.parse(r.metafields || "{}"),
            };
            out.contactAddressesById.set(r.id, ca);
            if (r.external_id) out.contactAddressesByExternalId.set(r.external_id, ca);
          }
        }),
    );
  }
  await Promise.all(jobs);
  return out;
}

/** Phase 3: references become columns (or field errors); a contact address fills the gaps. */
export function bindRefs(d: TaskDraft, refs: ResolvedRefs, principal: Principal) {
  const v = d.values;
  if (d.accountId && d.accountId !== principal.accountId) addError(d.errors, "account", MSG.notExist);
  if (d.assignee !== undefined) {
    if (d.assignee && !refs.users.has(d.assignee)) addError(d.errors, "assignee", MSG.notExist);
    else v.assignee_id = d.assignee;
  }
  if (d.order !== undefined) {
    if (d.order && !refs.orders.has(d.order)) addError(d.errors, "order", MSG.notExist);
    else v.order_id = d.order;
  }
  if (d.client !== undefined) {
    if (d.client && !refs.clients.has(d.client)) addError(d.errors, "client", MSG.notExist);
    else v.client_id = d.client;
  }
  if (d.route !== undefined) {
    const state = d.route ? refs.routes.get(d.route) : null;
    if (state === undefined) addError(d.errors, "route", MSG.notExist);
    else if (state === "archived")
      addError(d.errors, "route", "This route is archived: its stops cannot change.");
    else v.route_id = d.route;
  }

  // undefined: neither field sent; null: the link is cleared.
  let ca: ContactAddressRef | null | undefined;
  let caError = false;
  if (d.contactAddress !== undefined) {
    ca = d.contactAddress ? refs.contactAddressesById.get(d.contactAddress) : null;
    if (ca === undefined) {
      addError(d.errors, "contact_address", MSG.notExist);
      caError = true;
    }
  }
  if (d.contactAddressExternalId !== undefined && !caError) {
    const ext = d.contactAddressExternalId;
    const byExt = ext ? refs.contactAddressesByExternalId.get(ext) : null;
    if (byExt === undefined) {
      addError(d.errors, "contact_address_external_id", `Object with external_id=${ext} does not exist.`);
      caError = true;
    } else if (ca && byExt && ca.id !== byExt.id) {
      addError(
        d.errors,
        "contact_address_external_id",
        "Does not name the same contact address as contact_address.",
      );
      caError = true;
    } else if (!ca) ca = byExt;
  }
  if (caError) ca = undefined;
  if (ca !== undefined) {
    v.contact_address_id = ca?.id ?? null;
    v.contact_address_external_id = ca?.external_id ?? null;
  }

  if (ca && d.mode !== "patch") d.contactAddressRef = ca;
  if (ca) {
    const sentAddress = d.addressInput !== undefined || d.errors.address !== undefined;
    const sentContact = d.present.has("contact") && v.contact !== undefined;
    if (d.mode === "patch") {
      // Only the stored task knows whether its contact is missing: decided by the writer.
      if (!sentContact) d.fill = { contact: ca.contact };
    } else {
      if (!sentAddress) fillAddressFrom(d, ca);
      if (!sentContact || isBlank(v.contact)) v.contact = ca.contact;
    }
  }

  if (d.mode !== "patch") {
    if (!d.present.has("category")) addError(d.errors, "category", MSG.required);
    if (d.addressInput === undefined && d.address === undefined && !d.errors.address) {
      addError(d.errors, "address", MSG.required);
    }
  }
}

const isBlank = (c: StoredContact | undefined) =>
  !c || (!c.name && !c.company && !c.notes && c.emails.length === 0 && c.phones.length === 0);

function fillAddressFrom(d: TaskDraft, ca: ContactAddressRef) {
  const a = ca.address;
  const geocoded = a.geocoded_at !== null && a.geocoded_at !== undefined;
  if (geocoded || (a.raw_address && a.location)) {
    d.address = {
      address: {
        raw_address: a.raw_address ?? "",
        formatted_address: a.formatted_address ?? null,
        location: a.location ?? null,
        geocoding_provider: a.geocoding_provider ?? null,
      },
      geocoded_at: a.geocoded_at ?? null,
      geocode_failed_at: a.geocode_failed_at ?? null,
      retry: false,
    };
  } else if (a.raw_address || a.location) {
    d.addressInput = { raw_address: a.raw_address ?? "", location: a.location ?? null };
  }
}

/** Phase 4: geocode every address that needs it (deduplicated inside the session). */
export async function geocodeDrafts(drafts: TaskDraft[], session: GeocodeSession, now = Date.now()) {
  await Promise.all(
    drafts.map(async (d) => {
      if (d.addressInput && !d.address) d.address = await session.resolve(d.addressInput, now);
    }),
  );
}

/** Address columns of a resolved address. */
export function addressColumns(
  a: ResolvedAddress,
): Pick<TaskValues, "address" | "geocoded_at" | "geocode_failed_at"> {
  return { address: a.address, geocoded_at: a.geocoded_at, geocode_failed_at: a.geocode_failed_at };
}

/**
 * The state a new task starts in (contract §5): `draft` or `scheduled` when asked for (the
 * latter needs a future scheduled_time), else `assigned` with an assignee, else `unassigned`.
 * Sending the state the task would get anyway is accepted (a body copied from a GET works).
 */
export function creationState(d: TaskDraft, values: TaskValues, now: number): TaskState | null {
  const natural: TaskState = values.assignee_id ? "assigned" : "unassigned";
  switch (d.state) {
    case undefined:
      return natural;
    case "draft":
      return "draft";
    case "scheduled":
      if (values.scheduled_time === null || values.scheduled_time <= now) {
        addError(d.errors, "scheduled_time", MSG.scheduledFuture);
        return null;
      }
      return "scheduled";
    default:
      if (d.state === natural) return natural;
      addError(d.errors, "state", MSG.createState);
      return null;
  }
}

export function checkWindow(
  errors: FieldErrors,
  v: { complete_after: number | null; complete_before: number | null },
) {
  if (v.complete_after !== null && v.complete_before !== null && v.complete_before < v.complete_after) {
    addError(errors, "complete_before", MSG.window);
  }
}

/**
 * Checks the `metafields` of task drafts against the account's task definitions (contract §12),
 * adding the errors under `metafields`. `stored` (PATCH/PUT) lets values of deleted definitions
 * be sent back unchanged.
 */
export async function checkDraftMetafields(
  db: D1Database,
  accountId: string,
  drafts: TaskDraft[],
  stored: Record<string, unknown>[] = [],
) {
  const copying = drafts.some((d) => d.contactAddressRef?.metafields);
  const sending = drafts.some((d) => d.values.metafields !== undefined);
  if (!copying && !sending) return;
  const definitions = await loadDefinitions(db, accountId, "tasks");
  for (const d of drafts) {
    // A new task takes `source: contact_address` values its body does not set itself.
    if (!d.contactAddressRef?.metafields) continue;
    const copied = copiedFromContactAddress(d.contactAddressRef.metafields, definitions);
    if (!Object.keys(copied).length) continue;
    const own = (d.values.metafields as Record<string, unknown> | undefined) ?? {};
    d.values.metafields = { ...copied, ...own };
  }
  const sent = drafts.flatMap((d, i) =>
    d.values.metafields !== undefined && !d.errors.metafields
      ? [{ d, metafields: d.values.metafields as Record<string, unknown>, stored: stored[i] }]
      : [],
  );
  const errors = await metafieldErrors(db, accountId, "tasks", sent, definitions);
  sent.forEach((s, i) => {
    if (Object.keys(errors[i]).length) s.d.errors.metafields = errors[i];
  });
}
