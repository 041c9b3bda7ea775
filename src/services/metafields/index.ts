/**
 * Metafield definitions (contract §12) and the check of the `metafields` objects that tasks,
 * orders and contact addresses are written with. The rules are pure (domain/metafields.ts);
 * here they meet the account: definitions are read, and `assignee` values resolved to users.
 */

import { accountRow } from "../../db/account-rows";
import {
  checkMetafields,
  type MetafieldDefinition,
  type MetafieldTarget,
  type MetafieldValueType,
} from "../../domain/metafields";
import { type FieldErrors, fieldError, ValidationError } from "../../http/errors";
import { paginateByCreation } from "../../http/pagination";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { uuidv7 } from "../../lib/ids";
import type { Principal } from "../auth/principal";

export type MetafieldRow = {
  id: string;
  account_id: string;
  key: string;
  label: string;
  applies_to: MetafieldTarget;
  value_type: MetafieldValueType;
  choices: string;
  is_required_before_complete: number;
  is_editable_by_worker: number;
  hide_when_empty: number;
  source: "manual" | "contact_address";
  created_at: number;
  updated_at: number;
};

export type MetafieldWrite = {
  key: string;
  label?: string;
  applies_to: MetafieldTarget;
  value_type: MetafieldValueType;
  choices?: string[];
  is_required_before_complete?: boolean;
  is_editable_by_worker?: boolean;
  hide_when_empty?: boolean;
  source?: "manual" | "contact_address";
};

const DUPLICATE = "A metafield with this key already exists for this target.";
const isUniqueViolation = (err: unknown) =>
  /UNIQUE constraint failed/i.test(String((err as Error)?.message ?? err));

export function definitionOf(row: MetafieldRow): MetafieldDefinition {
  return {
    key: row.key,
    value_type: row.value_type,
    choices: JSON.parse(row.choices || "[]"),
    is_required_before_complete: Boolean(row.is_required_before_complete),
    is_editable_by_worker: Boolean(row.is_editable_by_worker),
    source: row.source,
  };
}

export function serializeMetafield(r: RenderCtx, row: MetafieldRow) {
  const d = definitionOf(row);
  return {
    id: row.id,
    url: link(r, "metafields", row.id),
    account: link(r, "accounts", row.account_id),
    key: row.key,
    label: row.label,
    applies_to: row.applies_to,
    value_type: row.value_type,
    choices: d.choices,
    is_required_before_complete: d.is_required_before_complete,
    is_editable_by_worker: d.is_editable_by_worker,
    hide_when_empty: Boolean(row.hide_when_empty),
    source: row.source,
    created_at: ts(r, row.created_at),
    updated_at: ts(r, row.updated_at),
  };
}

/** The definitions of one target in an account (read once per write). */
export async function loadDefinitions(db: D1Database, accountId: string, target: MetafieldTarget) {
  const { results } = await db
    .prepare("SELECT * FROM metafields WHERE account_id = ? AND applies_to = ?")
    .bind(accountId, target)
    .all<MetafieldRow>();
  return results.map(definitionOf);
}

/**
 * Checks several `metafields` objects of one target (an order brings many tasks) with one read
 * of the definitions and one of the users that `assignee` values name. Returns the field errors
 * per object (`{}` when valid), keyed by metafield as DRF nests them.
 */
export async function metafieldErrors(
  db: D1Database,
  accountId: string,
  target: MetafieldTarget,
  objects: { metafields: Record<string, unknown>; stored?: Record<string, unknown> }[],
  preloaded?: readonly MetafieldDefinition[],
): Promise<Record<string, string[]>[]> {
  if (!objects.length) return [];
  const definitions = preloaded ?? (await loadDefinitions(db, accountId, target));
  const checks = objects.map((o) => checkMetafields(o.metafields, definitions, o.stored));
  const userIds = new Set(checks.flatMap((c) => [...c.userIds.values()]));
  let known = new Set<string>();
  if (userIds.size) {
    const { results } = await db
      .prepare(
        "SELECT user_id FROM account_roles WHERE account_id = ? AND state = 'active' AND user_id IN (SELECT value FROM json_each(?))",
      )
      .bind(accountId, JSON.stringify([...userIds]))
      .all<{ user_id: string }>();
    known = new Set(results.map((r) => r.user_id));
  }
  return checks.map((c) => {
    const errors = { ...c.errors };
    for (const [key, id] of c.userIds) if (!known.has(id)) errors[key] = ["Expected a user of this account."];
    return errors;
  });
}

/** Throws the field errors of one object under `metafields`, if any. */
export async function assertMetafields(
  db: D1Database,
  accountId: string,
  target: MetafieldTarget,
  metafields: Record<string, unknown> | undefined,
  stored?: Record<string, unknown>,
) {
  if (!metafields) return;
  const [errors] = await metafieldErrors(db, accountId, target, [{ metafields, stored }]);
  if (Object.keys(errors).length) throw new ValidationError({ metafields: errors });
}

export async function getMetafield(db: D1Database, p: Principal, id: string) {
  return accountRow<MetafieldRow>(db, "metafields", p.accountId, id);
}

export function listMetafields(
  db: D1Database,
  p: Principal,
  q: { applies_to?: MetafieldTarget; cursor?: string; page_size?: number },
  url: string,
) {
  const where = ["account_id = ?"];
  const params: unknown[] = [p.accountId];
  if (q.applies_to) {
    where.push("applies_to = ?");
    params.push(q.applies_to);
  }
  return paginateByCreation<MetafieldRow>({
    db,
    select: "SELECT * FROM metafields",
    where,
    params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

function shapeErrors(
  m: Required<Pick<MetafieldWrite, "applies_to" | "value_type" | "choices">> & MetafieldWrite,
) {
  const errors: FieldErrors = {};
  if ((m.value_type === "select" || m.value_type === "multiselect") && m.choices.length === 0) {
    errors.choices = [`A ${m.value_type} metafield needs at least one choice.`];
  }
  if (m.is_required_before_complete && m.applies_to !== "tasks") {
    errors.is_required_before_complete = ["Only task metafields can be required before completion."];
  }
  if (m.source === "contact_address" && m.applies_to !== "tasks") {
    errors.source = ["Only task metafields can be copied from a contact address."];
  }
  return errors;
}

export async function createMetafield(db: D1Database, p: Principal, input: MetafieldWrite) {
  const m = { ...input, choices: input.choices ?? [] };
  const errors = shapeErrors(m);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const now = Date.now();
  const id = uuidv7(now);
  try {
    await db
      .prepare(
        `INSERT INTO metafields (id, account_id, key, label, applies_to, value_type, choices, is_required_before_complete,
           is_editable_by_worker, hide_when_empty, source, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        id,
        p.accountId,
        m.key,
        m.label ?? "",
        m.applies_to,
        m.value_type,
        JSON.stringify(m.choices),
        m.is_required_before_complete ? 1 : 0,
        m.is_editable_by_worker === false ? 0 : 1,
        m.hide_when_empty ? 1 : 0,
        m.source ?? "manual",
        now,
        now,
      )
      .run();
  } catch (err) {
    if (isUniqueViolation(err)) throw fieldError("key", DUPLICATE);
    throw err;
  }
  return getMetafield(db, p, id);
}

/** PATCH changes the fields sent; PUT resets the others to their defaults. */
export async function updateMetafield(
  db: D1Database,
  p: Principal,
  id: string,
  input: Partial<MetafieldWrite>,
  method: "patch" | "put",
) {
  const row = await getMetafield(db, p, id);
  const put = method === "put";
  const cur = definitionOf(row);
  const pick = <T>(v: T | undefined, current: T, fallback: T) =>
    v !== undefined ? v : put ? fallback : current;
  const next = {
    key: input.key ?? row.key,
    label: pick(input.label, row.label, ""),
    applies_to: input.applies_to ?? row.applies_to,
    value_type: input.value_type ?? row.value_type,
    choices: pick(input.choices, cur.choices, []),
    is_required_before_complete: pick(
      input.is_required_before_complete,
      cur.is_required_before_complete,
      false,
    ),
    is_editable_by_worker: pick(input.is_editable_by_worker, cur.is_editable_by_worker, true),
    hide_when_empty: pick(input.hide_when_empty, Boolean(row.hide_when_empty), false),
    source: pick(input.source, row.source, "manual"),
  };
  const errors = shapeErrors(next);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  try {
    await db
      .prepare(
        `UPDATE metafields SET key = ?, label = ?, applies_to = ?, value_type = ?, choices = ?, is_required_before_complete = ?,
           is_editable_by_worker = ?, hide_when_empty = ?, source = ?, updated_at = ? WHERE id = ? AND account_id = ?`,
      )
      .bind(
        next.key,
        next.label,
        next.applies_to,
        next.value_type,
        JSON.stringify(next.choices),
        next.is_required_before_complete ? 1 : 0,
        next.is_editable_by_worker ? 1 : 0,
        next.hide_when_empty ? 1 : 0,
        next.source,
        Date.now(),
        id,
        p.accountId,
      )
      .run();
  } catch (err) {
    if (isUniqueViolation(err)) throw fieldError("key", DUPLICATE);
    throw err;
  }
  return getMetafield(db, p, id);
}

/** Stored values stay; they are no longer validated (contract §12). */
export async function deleteMetafield(db: D1Database, p: Principal, id: string) {
  await getMetafield(db, p, id);
  await db.prepare("DELETE FROM metafields WHERE id = ? AND account_id = ?").bind(id, p.accountId).run();
}
