/** Reading orders: one, a page, their tasks and documents, and rendering. */
import { fieldError, notFound } from "../../http/errors";
import { accountRows, paginateByCreation } from "../../http/pagination";
import type { RenderCtx } from "../../http/serialize";
import { parseHyperlink } from "../../http/urls";
import type { Principal } from "../auth/principal";
import type { TaskRow } from "../tasks/types";
import type { OrderWriteResult } from "./input";
import { type DocumentRow, type OrderRow, serializeOrder } from "./serialize";

export async function orderTasks(db: D1Database, accountId: string, orderId: string): Promise<TaskRow[]> {
  const { results } = await db
    .prepare("SELECT * FROM tasks WHERE account_id = ? AND order_id = ?")
    .bind(accountId, orderId)
    .all<TaskRow>();
  return results;
}

/** tasks_data order first, then tasks linked to the order afterwards (by creation). */
export function sortForOrder<T extends { order_index: number | null; created_at: number; id: string }>(
  rows: T[],
): T[] {
  return [...rows].sort((a, b) => {
    if (a.order_index !== null && b.order_index !== null) return a.order_index - b.order_index;
    if (a.order_index !== null) return -1;
    if (b.order_index !== null) return 1;
    return a.created_at - b.created_at || (a.id < b.id ? -1 : 1);
  });
}

export async function orderDocuments(
  db: D1Database,
  accountId: string,
  orderIds: string[],
): Promise<DocumentRow[]> {
  if (!orderIds.length) return [];
  const { results } = await db
    .prepare(
      "SELECT * FROM attachments WHERE account_id = ? AND kind = 'document' AND order_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, id",
    )
    .bind(accountId, JSON.stringify(orderIds))
    .all<DocumentRow>();
  return results;
}

/** Orders are dispatchers' business; the account check makes another account's order 404. */
export async function getOrderRow(db: D1Database, principal: Principal, id: string): Promise<OrderRow> {
  const row = await db
    .prepare("SELECT * FROM orders WHERE id = ? AND account_id = ?")
    .bind(id, principal.accountId)
    .first<OrderRow>();
  if (!row) throw notFound();
  return row;
}

/** Tasks and documents of several orders, two queries in all. */
export async function orderRelations(db: D1Database, accountId: string, orderIds: string[]) {
  const taskIds = new Map<string, string[]>(orderIds.map((id) => [id, []]));
  const documents = new Map<string, DocumentRow[]>(orderIds.map((id) => [id, []]));
  if (orderIds.length) {
    const { results } = await db
      .prepare(
        "SELECT id, order_id, order_index, created_at FROM tasks WHERE account_id = ? AND order_id IN (SELECT value FROM json_each(?))",
      )
      .bind(accountId, JSON.stringify(orderIds))
      .all<{ id: string; order_id: string; order_index: number | null; created_at: number }>();
    for (const t of sortForOrder(results)) taskIds.get(t.order_id)?.push(t.id);
    for (const doc of await orderDocuments(db, accountId, orderIds)) documents.get(doc.order_id!)?.push(doc);
  }
  return { taskIds, documents };
}

export async function getOrder(db: D1Database, principal: Principal, id: string) {
  const row = await getOrderRow(db, principal, id);
  const rel = await orderRelations(db, principal.accountId, [row.id]);
  return { row, taskIds: rel.taskIds.get(row.id)!, documents: rel.documents.get(row.id)! };
}

export async function listOrders(
  db: D1Database,
  principal: Principal,
  q: { external_id?: string; client?: string; cursor?: string; page_size?: number },
  url: string,
) {
  const { where, params } = accountRows(principal.accountId, q.external_id);
  if (q.client !== undefined) {
    const clientId = parseHyperlink(q.client, "clients");
    if (!clientId) throw fieldError("client", "Invalid hyperlink - No URL match.");
    where.push("client_id = ?");
    params.push(clientId);
  }
  const page = await paginateByCreation<OrderRow>({
    db,
    select: "SELECT * FROM orders",
    where,
    params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
  const rel = await orderRelations(
    db,
    principal.accountId,
    page.results.map((o) => o.id),
  );
  return { page, rel };
}

export const renderOrder = (
  r: RenderCtx,
  result: Omit<OrderWriteResult, "created">,
  expandDocuments = false,
) => serializeOrder(r, result.row, { taskIds: result.taskIds, documents: result.documents, expandDocuments });
