import { z } from "@hono/zod-openapi";
import { base64url, fromBase64url } from "../lib/crypto";
import { fieldError } from "./errors";

/**
 * Cursor pagination (contract §4; the shape of DRF's CursorPagination): opaque cursors
 * hold the last seen (sort value, id), so pages stay stable while rows are inserted.
 */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

export const paginationQuery = {
  cursor: z.string().optional().openapi({ description: "Opaque cursor from `next` or `previous`." }),
  page_size: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .optional()
    .openapi({ description: `Items per page (default ${DEFAULT_PAGE_SIZE}, max ${MAX_PAGE_SIZE}).` }),
};

export const pageSchema = <T extends z.ZodTypeAny>(item: T) =>
  z.object({
    next: z.string().url().nullable(),
    previous: z.string().url().nullable(),
    results: z.array(item),
  });

type SortValue = string | number | null;
type Cursor = { v: SortValue; id: string; p: boolean };

function encodeCursor(c: Cursor): string {
  return base64url(new TextEncoder().encode(JSON.stringify([c.v, c.id, c.p ? 1 : 0])));
}

function decodeCursor(s: string): Cursor {
  try {
    const [v, id, p] = JSON.parse(new TextDecoder().decode(fromBase64url(s)));
    if (typeof id !== "string" || !(v === null || typeof v === "string" || typeof v === "number")) throw 0;
    return { v, id, p: p === 1 };
  } catch {
    throw fieldError("cursor", "Invalid cursor.");
  }
}

export type PageRequest = {
  db: D1Database;
  /** `SELECT <cols> FROM <table> [JOIN ...]` without WHERE/ORDER. */
  select: string;
  where: string[];
  params: unknown[];
  /** Column (or indexed expression) to sort on, never NULL (wrap nullable columns in COALESCE). */
  sortExpr: string;
  /** The sort value of a row, as stored in the cursor. */
  sortValue: (row: any) => SortValue;
  idExpr?: string;
  /**
   * SQL of the cursor's bound sort value and id (`?`; a UUID stored as bytes compares with
   * `unhex(?, '-')`, db/uuid-bytes.ts).
   */
  sortParam?: string;
  idParam?: string;
  desc: boolean;
  cursor?: string;
  pageSize?: number;
  url: string;
};

export type Page<Row> = { results: Row[]; next: string | null; previous: string | null };

export async function paginate<Row extends { id: string }>(req: PageRequest): Promise<Page<Row>> {
  const size = req.pageSize ?? DEFAULT_PAGE_SIZE;
  const cur = req.cursor ? decodeCursor(req.cursor) : null;
  const idExpr = req.idExpr ?? "id";
  // Walking backwards flips the order; the rows are flipped back before answering.
  const backwards = cur?.p ?? false;
  const desc = req.desc !== backwards;
  const where = [...req.where];
  const params = [...req.params];
  if (cur) {
    const op = desc ? "<" : ">";
    const [v, id] = [req.sortParam ?? "?", req.idParam ?? "?"];
    where.push(`(${req.sortExpr} ${op} ${v} OR (${req.sortExpr} = ${v} AND ${idExpr} ${op} ${id}))`);
    params.push(cur.v, cur.v, cur.id);
  }
  const dir = desc ? "DESC" : "ASC";
  const sql = `${req.select}${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY ${req.sortExpr} ${dir}, ${idExpr} ${dir} LIMIT ?`;
  const { results } = await req.db
    .prepare(sql)
    .bind(...params, size + 1)
    .all<Row>();
  const more = results.length > size;
  const rows = more ? results.slice(0, size) : results;
  if (backwards) rows.reverse();
  const link = (c: Cursor) => {
    const u = new URL(req.url);
    u.searchParams.set("cursor", encodeCursor(c));
    return u.toString();
  };
  const first = rows[0];
  const last = rows[rows.length - 1];
  let next: string | null = null;
  let previous: string | null = null;
  if (backwards) {
    if (last) next = link({ v: req.sortValue(last), id: last.id, p: false });
    else if (cur) next = link({ v: cur.v, id: cur.id, p: false });
    if (more && first) previous = link({ v: req.sortValue(first), id: first.id, p: true });
  } else {
    if (more && last) next = link({ v: req.sortValue(last), id: last.id, p: false });
    if (cur && first) previous = link({ v: req.sortValue(first), id: first.id, p: true });
    else if (cur) previous = link({ v: cur.v, id: cur.id, p: true });
  }
  return { results: rows, next, previous };
}

/** The default list order of most resources: creation time, oldest first (ids break ties). */
export function paginateByCreation<Row extends { id: string; created_at: number }>(
  req: Omit<PageRequest, "sortExpr" | "sortValue" | "desc"> & { createdExpr?: string; desc?: boolean },
): Promise<Page<Row>> {
  const { createdExpr, desc, ...rest } = req;
  return paginate<Row>({
    ...rest,
    sortExpr: createdExpr ?? "created_at",
    sortValue: (row) => row.created_at,
    desc: desc ?? false,
  });
}

/**
 * The rows of one account, and with `externalId` only the one with that `external_id`: the
 * filter every resource with an external id takes (`?external_id=`, interface §4).
 */
export function accountRows(accountId: string, externalId?: string): { where: string[]; params: unknown[] } {
  const where = ["account_id = ?"];
  const params: unknown[] = [accountId];
  if (externalId !== undefined) {
    where.push("external_id = ?");
    params.push(externalId);
  }
  return { where, params };
}

/** A page with its rows serialized. */
export const mapPage = <A, B>(page: Page<A>, serialize: (row: A) => B): Page<B> => ({
  ...page,
  results: page.results.map(serialize),
});
