import { notFound } from "../http/errors";
import { type Page, paginateByCreation } from "../http/pagination";

/**
 * Tables whose rows belong to one account (an `account_id` column). Only these names are ever
 * put into SQL here: they are literals of the code, never input.
 */
export type AccountTable =
  | "clients"
  | "data_imports"
  | "form_fields"
  | "forms"
  | "metafields"
  | "notification_templates"
  | "recurrences"
  | "route_optimizations"
  | "routes"
  | "sms"
  | "trackers";

/**
 * The account's row with this id. Another account's row is the same 404 as no row, so a
 * caller learns nothing of other accounts (contract §2: another account's object is 404).
 */
export async function accountRow<Row>(
  db: D1Database,
  table: AccountTable,
  accountId: string,
  id: string,
): Promise<Row> {
  const row = await db
    .prepare(`SELECT * FROM ${table} WHERE id = ? AND account_id = ?`)
    .bind(id, accountId)
    .first<Row>();
  if (!row) throw notFound();
  return row;
}

/** A page of the account's rows, newest first: the list of jobs and messages (SMS, imports, ...). */
export function accountRowsNewestFirst<Row extends { id: string; created_at: number }>(
  db: D1Database,
  table: AccountTable,
  accountId: string,
  q: { cursor?: string; page_size?: number },
  url: string,
): Promise<Page<Row>> {
  return paginateByCreation<Row>({
    db,
    select: `SELECT * FROM ${table}`,
    where: ["account_id = ?"],
    params: [accountId],
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
    desc: true,
  });
}
