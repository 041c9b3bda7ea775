/**
 * The kinds of rows the archive takes (./windows.ts `RETAINED`), as archive sources: a part is
 * the rows of one account made on one day before the window's cutoff, by id (UUIDv7) order.
 */
import { unpackJson } from "../../formats/packed-json";
import type { ArchiveSource } from "./archive";
import { deleteByIds } from "./archive";
import { cutoffOf, idFloor, type RetainedKind, SERVICE_SCOPE } from "./windows";

/** Columns holding JSON text, written into the archive as JSON (not as a string of JSON). */
const JSON_COLUMNS = new Set([
  "payload",
  "fields",
  "filters",
  "cursor",
  "parts",
  "columns",
  "errors",
  "result",
  "route_ids",
  "task_ids",
  "attachments",
]);

/** A stored row as an archive line: JSON columns parsed, everything else as stored. */
export function asLine(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    // An event's payload is stored packed (formats/packed-json.ts): the archive has it as JSON.
    if (k === "payload" && v !== null && typeof v !== "string") {
      out[k] = unpackJson(v);
      continue;
    }
    if (JSON_COLUMNS.has(k) && typeof v === "string") {
      try {
        out[k] = JSON.parse(v);
        continue;
      } catch {}
    }
    out[k] = v;
  }
  return out;
}

export function tableSource(k: RetainedKind, now: number): ArchiveSource {
  const scoped = k.scope === "account";
  return {
    kind: k.kind,
    async read(env, accountId, day, limit) {
      const upper = Math.min(day.end, cutoffOf(env, k, now));
      const where = [
        ...(scoped ? ["account_id = ?"] : []),
        "id >= ?",
        "id < ?",
        ...(k.where ? [k.where] : []),
      ];
      const { results } = await env.DB.prepare(
        `SELECT * FROM ${k.table} WHERE ${where.join(" AND ")} ORDER BY id LIMIT ?`,
      )
        .bind(...(scoped ? [accountId] : []), idFloor(day.start), idFloor(upper), limit)
        .all<{ id: string }>();
      return results;
    },
    async lines(_env, rows) {
      return rows.map((r) => asLine(r as Record<string, unknown>));
    },
    async remove(env, _accountId, lines) {
      const ids = lines.map((l) => l.id as string);
      if (ids.length) await env.DB.batch(deleteByIds(env.DB, k.table, ids));
    },
  };
}

/** The oldest row of a kind past its window (its account and time), or null. */
export async function oldestPastWindow(env: Env, k: RetainedKind, now: number) {
  const scoped = k.scope === "account";
  const row = await env.DB.prepare(
    `SELECT ${scoped ? "account_id" : `'${SERVICE_SCOPE}' AS account_id`}, id FROM ${k.table}
     WHERE id < ?${k.where ? ` AND ${k.where}` : ""} ORDER BY id LIMIT 1`,
  )
    .bind(idFloor(cutoffOf(env, k, now)))
    .first<{ account_id: string; id: string }>();
  return row;
}
