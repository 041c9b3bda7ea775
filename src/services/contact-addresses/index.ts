import { type FieldErrors, notFound, ValidationError } from "../../http/errors";
import { accountRows, paginateByCreation } from "../../http/pagination";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { parseHyperlink } from "../../http/urls";
import { uuidv7 } from "../../lib/ids";
import { enqueueGeocodeRetries, type GeocodeQueue } from "../../queues/geocode/message";
import type { ContactAddressWriteBody } from "../../schemas/contact-addresses";
import { GeocodeSession, sameAddressInput } from "../addresses/geocode-session";
import type { Geocoder } from "../addresses/geocoding/types";
import type { Principal } from "../auth/principal";
import { assertMetafields } from "../metafields";
import { addError, MSG } from "../tasks/input";
import {
  type AddressInput,
  EMPTY_CONTACT,
  parseJson,
  type StoredAddress,
  type StoredContact,
} from "../tasks/types";

/**
 * Contact addresses: a reusable address + contact, referenced by tasks through the write-only
 * `contact_address` / `contact_address_external_id` fields (which copy what the task lacks).
 * `external_id` is unique per account, enforced by the unique index in the same INSERT/UPDATE
 * (a duplicate is a field error, never a read-then-write race).
 */

export type ContactAddressRow = {
  id: string;
  account_id: string;
  external_id: string | null;
  address: string;
  contact: string;
  metafields: string;
  created_at: number;
  updated_at: number;
};

/** The address JSON of a contact address keeps its outcome times inside (no indexed columns). */
export type ContactAddressAddress = StoredAddress & {
  geocoded_at: number | null;
  geocode_failed_at: number | null;
};

/**
 * What tests swap (geocoder, retry queue); imports (contract §21) also pass the id a new contact
 * address gets (derived from the import's row, so a replayed row meets its own primary key) and
 * `dryRun` (validate everything, write nothing).
 */
export type ContactAddressDeps = {
  geocoder?: Geocoder;
  geocodeQueue?: GeocodeQueue;
  id?: string;
  dryRun?: boolean;
};

const DUPLICATE = "contact address with this external id already exists.";

export function serializeContactAddress(r: RenderCtx, row: ContactAddressRow) {
  const a = parseJson<Partial<ContactAddressAddress>>(row.address, {});
  return {
    id: row.id,
    url: link(r, "contact_addresses", row.id),
    account: link(r, "accounts", row.account_id),
    external_id: row.external_id,
    address: {
      raw_address: a.raw_address ?? "",
      formatted_address: a.formatted_address ?? null,
      location: a.location ?? null,
      geocoded_at: ts(r, a.geocoded_at ?? null),
      geocode_failed_at: ts(r, a.geocode_failed_at ?? null),
      geocoding_provider: a.geocoding_provider ?? null,
    },
    contact: { ...EMPTY_CONTACT, ...parseJson<Partial<StoredContact>>(row.contact, {}) },
    metafields: parseJson(row.metafields, {}),
    created_at: ts(r, row.created_at),
    updated_at: ts(r, row.updated_at),
  };
}

const isUniqueViolation = (err: unknown) =>
  /UNIQUE constraint failed/i.test(String((err as Error)?.message ?? err));

async function getRow(db: D1Database, accountId: string, id: string) {
  return db
    .prepare("SELECT * FROM contact_addresses WHERE id = ? AND account_id = ?")
    .bind(id, accountId)
    .first<ContactAddressRow>();
}

export async function getContactAddress(db: D1Database, p: Principal, id: string) {
  const row = await getRow(db, p.accountId, id);
  if (!row) throw notFound();
  return row;
}

export async function listContactAddresses(
  db: D1Database,
  p: Principal,
  q: { external_id?: string; cursor?: string; page_size?: number },
  url: string,
) {
  const { where, params } = accountRows(p.accountId, q.external_id);
  return paginateByCreation<ContactAddressRow>({
    db,
    select: "SELECT * FROM contact_addresses",
    where,
    params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

type Parsed = {
  errors: FieldErrors;
  externalId?: string | null;
  addressInput?: AddressInput;
  contact?: StoredContact;
  metafields?: Record<string, unknown>;
};

function parseBody(body: ContactAddressWriteBody, p: Principal, requireAddress: boolean): Parsed {
  const out: Parsed = { errors: {} };
  if (body.account !== undefined && body.account !== null) {
    const accountId = parseHyperlink(body.account, "accounts");
    if (accountId !== p.accountId) addError(out.errors, "account", accountId ? MSG.notExist : MSG.noMatch);
  }
  if (body.external_id !== undefined) out.externalId = body.external_id || null;
  if (body.address) {
    const raw = body.address.raw_address?.trim() ?? "";
    if (!raw && !body.address.location) out.errors.address = { non_field_errors: [MSG.emptyAddress] };
    else out.addressInput = { raw_address: raw, location: body.address.location ?? null };
  } else if (requireAddress || body.address === null) {
    addError(out.errors, "address", body.address === null ? MSG.notNull : MSG.required);
  }
  if (body.contact !== undefined) {
    out.contact = {
      ...EMPTY_CONTACT,
      ...Object.fromEntries(Object.entries(body.contact ?? {}).filter(([, v]) => v !== undefined)),
    };
  }
  if (body.metafields !== undefined) out.metafields = body.metafields ?? {};
  if (Object.keys(out.errors).length) throw new ValidationError(out.errors);
  return out;
}

async function geocodeAddress(env: Env, input: AddressInput, deps: ContactAddressDeps) {
  const r = await GeocodeSession.fromEnv(env, deps.geocoder).resolve(input);
  const address: ContactAddressAddress = {
    ...r.address,
    geocoded_at: r.geocoded_at,
    geocode_failed_at: r.geocode_failed_at,
  };
  return { address, retry: r.retry };
}

async function retry(env: Env, deps: ContactAddressDeps, accountId: string, id: string) {
  await enqueueGeocodeRetries(deps.geocodeQueue ?? env.GEOCODE_QUEUE, [{ accountId, contactAddressId: id }]);
}

export async function createContactAddress(
  env: Env,
  p: Principal,
  body: ContactAddressWriteBody,
  deps: ContactAddressDeps & { dryRun: true },
): Promise<null>;
export async function createContactAddress(
  env: Env,
  p: Principal,
  body: ContactAddressWriteBody,
  deps?: ContactAddressDeps,
): Promise<ContactAddressRow>;
export async function createContactAddress(
  env: Env,
  p: Principal,
  body: ContactAddressWriteBody,
  deps: ContactAddressDeps = {},
): Promise<ContactAddressRow | null> {
  const parsed = parseBody(body, p, true);
  await assertMetafields(env.DB, p.accountId, "contact_addresses", parsed.metafields);
  if (deps.dryRun) return null;
  const { address, retry: again } = await geocodeAddress(env, parsed.addressInput!, deps);
  const now = Date.now();
  const id = deps.id ?? uuidv7(now);
  try {
    await env.DB.prepare(
      "INSERT INTO contact_addresses (id, account_id, external_id, address, contact, metafields, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
      .bind(
        id,
        p.accountId,
        parsed.externalId ?? null,
        JSON.stringify(address),
        JSON.stringify(parsed.contact ?? EMPTY_CONTACT),
        JSON.stringify(parsed.metafields ?? {}),
        now,
        now,
      )
      .run();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ValidationError({ external_id: [DUPLICATE] });
    throw err;
  }
  if (again) await retry(env, deps, p.accountId, id);
  return (await getRow(env.DB, p.accountId, id))!;
}

/** PATCH (fields sent replace the stored ones) or PUT (the rest take their defaults). */
export async function updateContactAddress(
  env: Env,
  p: Principal,
  id: string,
  body: ContactAddressWriteBody,
  mode: "patch" | "put",
  deps: ContactAddressDeps = {},
) {
  const row = await getContactAddress(env.DB, p, id);
  const parsed = parseBody(body, p, mode === "put");
  await assertMetafields(
    env.DB,
    p.accountId,
    "contact_addresses",
    parsed.metafields,
    parseJson(row.metafields, {}),
  );
  if (deps.dryRun) return row;
  const sets: string[] = [];
  const params: unknown[] = [];
  const set = (column: string, value: unknown) => {
    sets.push(`${column} = ?`);
    params.push(value);
  };
  let again = false;
  if (parsed.addressInput) {
    const stored = parseJson<ContactAddressAddress>(row.address, {} as ContactAddressAddress);
    const keep =
      stored.geocoded_at &&
      sameAddressInput(
        {
          raw_address: stored.raw_address ?? "",
          formatted_address: null,
          location: stored.location ?? null,
          geocoding_provider: null,
        },
        parsed.addressInput,
      );
    if (!keep) {
      const g = await geocodeAddress(env, parsed.addressInput, deps);
      set("address", JSON.stringify(g.address));
      again = g.retry;
    }
  }
  if (parsed.externalId !== undefined || mode === "put") set("external_id", parsed.externalId ?? null);
  if (parsed.contact !== undefined || mode === "put")
    set("contact", JSON.stringify(parsed.contact ?? EMPTY_CONTACT));
  if (parsed.metafields !== undefined || mode === "put")
    set("metafields", JSON.stringify(parsed.metafields ?? {}));
  set("updated_at", Date.now());
  try {
    await env.DB.prepare(`UPDATE contact_addresses SET ${sets.join(", ")} WHERE id = ? AND account_id = ?`)
      .bind(...params, id, p.accountId)
      .run();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ValidationError({ external_id: [DUPLICATE] });
    throw err;
  }
  if (again) await retry(env, deps, p.accountId, id);
  return getContactAddress(env.DB, p, id);
}

/**
 * Tasks keep the address and contact they copied, and their link (so `?contact_address=` still
 * finds them): a task is a record of what was to be done where, not a live view.
 */
export async function deleteContactAddress(env: Env, p: Principal, id: string) {
  const r = await env.DB.prepare("DELETE FROM contact_addresses WHERE id = ? AND account_id = ?")
    .bind(id, p.accountId)
    .run();
  if (r.meta.changes !== 1) throw notFound();
}
