import { uuidBytes } from "./uuid-bytes";

/**
 * `IN` over a request-sized list. D1 binds at most 100 parameters per statement (D1 limits),
 * so the list goes in as ONE JSON parameter: `IN (SELECT value FROM json_each(?))`, which
 * SQLite still answers with index lookups. `sql` names the spot `IN_LIST`, or `UUID_LIST` for a
 * column of UUIDs stored as bytes (./uuid-bytes.ts); `fixed` parameters come first.
 */
/** `column IN (…)` over one JSON parameter, for a `WHERE` built piece by piece (its value: `JSON.stringify(list)`). */
export const IN_JSON = (column: string) => `${column} IN (SELECT value FROM json_each(?))`;

export function inStatement(
  db: D1Database,
  sql: string,
  fixed: unknown[],
  values: unknown[],
): D1PreparedStatement {
  return db
    .prepare(
      sql
        .replace("UUID_LIST", `SELECT ${uuidBytes("value")} FROM json_each(?)`)
        .replace("IN_LIST", "SELECT value FROM json_each(?)"),
    )
    .bind(...fixed, JSON.stringify([...new Set(values)]));
}

export async function selectIn<Row>(
  db: D1Database,
  sql: string,
  fixed: unknown[],
  values: unknown[],
): Promise<Row[]> {
  if (!values.length) return [];
  const { results } = await inStatement(db, sql, fixed, values).all<Row>();
  return results;
}
