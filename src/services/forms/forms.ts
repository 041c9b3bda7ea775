import { accountRow } from "../../db/account-rows";
import { paginateByCreation } from "../../http/pagination";
import { uuidv7 } from "../../lib/ids";
import type { FormWrite } from "../../schemas/forms";
import type { Principal } from "../auth/principal";
import type { FormRow } from "./rows";

export async function getForm(db: D1Database, p: Principal, id: string): Promise<FormRow> {
  return accountRow<FormRow>(db, "forms", p.accountId, id);
}

export function listForms(
  db: D1Database,
  p: Principal,
  q: { is_active?: "true" | "false"; cursor?: string; page_size?: number },
  url: string,
) {
  const where = ["account_id = ?"];
  const params: unknown[] = [p.accountId];
  if (q.is_active !== undefined) {
    where.push("is_active = ?");
    params.push(q.is_active === "true" ? 1 : 0);
  }
  return paginateByCreation<FormRow>({
    db,
    select: "SELECT * FROM forms",
    where,
    params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

export async function createForm(db: D1Database, p: Principal, input: FormWrite) {
  const now = Date.now();
  const row: FormRow = {
    id: uuidv7(now),
    account_id: p.accountId,
    name: input.name,
    description: input.description ?? "",
    is_active: input.is_active === false ? 0 : 1,
    created_at: now,
    updated_at: now,
  };
  await db
    .prepare(
      "INSERT INTO forms (id, account_id, name, description, is_active, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(row.id, row.account_id, row.name, row.description, row.is_active, now, now)
    .run();
  return row;
}

/** PATCH changes the fields sent; PUT resets the others to their defaults (DRF semantics). */
export async function updateForm(
  db: D1Database,
  p: Principal,
  id: string,
  input: Partial<FormWrite>,
  method: "patch" | "put",
) {
  const row = await getForm(db, p, id);
  const next: FormRow = {
    ...row,
    name: input.name ?? row.name,
    description: input.description ?? (method === "put" ? "" : row.description),
    is_active:
      input.is_active !== undefined ? (input.is_active ? 1 : 0) : method === "put" ? 1 : row.is_active,
    updated_at: Date.now(),
  };
  await db
    .prepare(
      "UPDATE forms SET name = ?, description = ?, is_active = ?, updated_at = ? WHERE id = ? AND account_id = ?",
    )
    .bind(next.name, next.description, next.is_active, next.updated_at, id, p.accountId)
    .run();
  return next;
}

/**
 * Deletes a form, its fields and its draft responses in one batch. Completed responses stay:
 * they read from their snapshot, whatever happens to the form (contract §15).
 */
export async function deleteForm(db: D1Database, p: Principal, id: string) {
  await getForm(db, p, id);
  await db.batch([
    db
      .prepare("DELETE FROM form_responses WHERE form_id = ? AND account_id = ? AND state = 'draft'")
      .bind(id, p.accountId),
    db.prepare("DELETE FROM form_fields WHERE form_id = ? AND account_id = ?").bind(id, p.accountId),
    db.prepare("DELETE FROM forms WHERE id = ? AND account_id = ?").bind(id, p.accountId),
  ]);
}
