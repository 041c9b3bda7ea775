/**
 * D1 binds at most 100 parameters per statement (D1 limits), so `IN (...)` lookups over
 * request-sized lists run in chunks. `sql` holds one `(?)`-free placeholder `IN_LIST` where
 * the chunk's placeholders go; `fixed` parameters come first.
 */
export const MAX_IN_PARAMS = 90;

export async function selectIn<Row>(
  db: D1Database,
  sql: string,
  fixed: unknown[],
  values: unknown[],
): Promise<Row[]> {
  const unique = [...new Set(values)];
  if (!unique.length) return [];
  const size = Math.max(1, MAX_IN_PARAMS - fixed.length);
  const chunks: unknown[][] = [];
  for (let i = 0; i < unique.length; i += size) chunks.push(unique.slice(i, i + size));
  const stmts = chunks.map((chunk) =>
    db.prepare(sql.replace("IN_LIST", chunk.map(() => "?").join(","))).bind(...fixed, ...chunk),
  );
  // One round trip for all chunks: a batch of reads.
  const results = await db.batch<Row>(stmts);
  return results.flatMap((r) => r.results);
}
