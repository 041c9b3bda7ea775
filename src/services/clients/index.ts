/**
 * Clients (contract §13): the customers that orders and tasks are for. `external_id` is unique
 * per account, and a POST naming a known one updates that client, as orders do (§7): decided
 * by the INSERT's conflict clause, never by a read before the write.
 */

import { accountRow } from "../../db/account-rows";
import { type FieldErrors, ValidationError } from "../../http/errors";
import { accountRows, paginateByCreation } from "../../http/pagination";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { uuidv7 } from "../../lib/ids";
import type { Principal } from "../auth/principal";
import { metafieldErrors } from "../metafields";
import { parseJson } from "../tasks/types";

export type ClientRow = {
  id: string;
  account_id: string;
  name: string;
  external_id: string | null;
  emails: string;
  phones: string;
  notes: string;
  metafields: string;
  created_at: number;
  updated_at: number;
};

export type ClientWrite = {
  name?: string;
  external_id?: string | null;
  emails?: string[];
  phones?: string[];
  notes?: string;
  metafields?: Record<string, unknown> | null;
};

const FIELDS = ["name", "external_id", "emails", "phones", "notes", "metafields"] as const;
const DEFAULTS: Record<(typeof FIELDS)[number], unknown> = {
  name: "",
  external_id: null,
  emails: [],
  phones: [],
  notes: "",
  metafields: {},
};
const DUPLICATE = "client with this external id already exists.";
const isUniqueViolation = (err: unknown) =>
  /UNIQUE constraint failed/i.test(String((err as Error)?.message ?? err));
const stored = (field: string, v: unknown) =>
  v === null || v === undefined
    ? field === "external_id"
      ? null
      : (DEFAULTS as Record<string, unknown>)[field]
    : v;
const column = (field: string, v: unknown) => {
  const value = stored(field, v);
  return typeof value === "object" && value !== null ? JSON.stringify(value) : value;
};

export function serializeClient(r: RenderCtx, c: ClientRow) {
  return {
    id: c.id,
    url: link(r, "clients", c.id),
    account: link(r, "accounts", c.account_id),
    name: c.name,
    external_id: c.external_id,
    emails: parseJson<string[]>(c.emails, []),
    phones: parseJson<string[]>(c.phones, []),
    notes: c.notes,
    metafields: parseJson<Record<string, unknown>>(c.metafields, {}),
    created_at: ts(r, c.created_at),
    updated_at: ts(r, c.updated_at),
  };
}

export async function getClient(db: D1Database, p: Principal, id: string): Promise<ClientRow> {
  return accountRow<ClientRow>(db, "clients", p.accountId, id);
}

export function listClients(
  db: D1Database,
  p: Principal,
  q: { external_id?: string; cursor?: string; page_size?: number },
  url: string,
) {
  const { where, params } = accountRows(p.accountId, q.external_id);
  return paginateByCreation<ClientRow>({
    db,
    select: "SELECT * FROM clients",
    where,
    params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

async function checkMetafields(db: D1Database, p: Principal, input: ClientWrite, current?: ClientRow) {
  if (!input.metafields) return;
  const [errors] = await metafieldErrors(db, p.accountId, "clients", [
    { metafields: input.metafields, stored: current ? parseJson(current.metafields, {}) : undefined },
  ]);
  if (Object.keys(errors).length) throw new ValidationError({ metafields: errors });
}

/** POST: creates, or with a known `external_id` updates the fields sent (201 or 200). */
export async function upsertClient(db: D1Database, p: Principal, input: ClientWrite) {
  const errors: FieldErrors = {};
  if (!input.name?.trim()) errors.name = ["This field is required."];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  await checkMetafields(db, p, input);
  const now = Date.now();
  const id = uuidv7(now);
  const sent = FIELDS.filter((f) => input[f] !== undefined && f !== "external_id");
  const cols = ["id", "account_id", ...FIELDS, "created_at", "updated_at"];
  const values = [id, p.accountId, ...FIELDS.map((f) => column(f, input[f])), now, now];
  const upsert = input.external_id
    ? ` ON CONFLICT (account_id, external_id) DO UPDATE SET ${[...sent.map((f) => `${f} = excluded.${f}`), "updated_at = excluded.updated_at"].join(", ")}`
    : "";
  const row = await db
    .prepare(
      `INSERT INTO clients (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})${upsert} RETURNING *`,
    )
    .bind(...values)
    .first<ClientRow>();
  return { row: row!, created: row!.id === id };
}

/** PATCH changes the fields sent; PUT resets the others to their defaults. */
export async function updateClient(
  db: D1Database,
  p: Principal,
  id: string,
  input: ClientWrite,
  method: "patch" | "put",
) {
  const current = await getClient(db, p, id);
  if (method === "put" && !input.name?.trim())
    throw new ValidationError({ name: ["This field is required."] });
  if (input.name !== undefined && !input.name.trim())
    throw new ValidationError({ name: ["This field may not be blank."] });
  await checkMetafields(db, p, input, current);
  const fields = FIELDS.filter((f) => method === "put" || input[f] !== undefined);
  if (!fields.length) return current; // a PATCH that sends nothing changes nothing
  try {
    await db
      .prepare(
        `UPDATE clients SET ${fields.map((f) => `${f} = ?`).join(", ")}, updated_at = ? WHERE id = ? AND account_id = ?`,
      )
      .bind(...fields.map((f) => column(f, input[f])), Date.now(), id, p.accountId)
      .run();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ValidationError({ external_id: [DUPLICATE] });
    throw err;
  }
  return getClient(db, p, id);
}

/**
 * Deletes a client; its orders and tasks keep existing with `client: null`, in the same batch
 * (the client is their label, not their owner).
 */
export async function deleteClient(db: D1Database, p: Principal, id: string) {
  await getClient(db, p, id);
  const now = Date.now();
  await db.batch([
    db
      .prepare("UPDATE orders SET client_id = NULL, updated_at = ? WHERE account_id = ? AND client_id = ?")
      .bind(now, p.accountId, id),
    db
      .prepare(
        "UPDATE tasks SET client_id = NULL, updated_at = ?, version = version + 1 WHERE account_id = ? AND client_id = ?",
      )
      .bind(now, p.accountId, id),
    db.prepare("DELETE FROM clients WHERE id = ? AND account_id = ?").bind(id, p.accountId),
  ]);
}
