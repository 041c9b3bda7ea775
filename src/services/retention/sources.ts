/**
 * The kinds of rows the archive takes (./windows.ts `RETAINED`), as archive sources: a part is
 * the rows of one account made on one day before the window's cutoff, by id (UUIDv7) order.
 */
import { paramFor, selectAll, textFor, uuidBytes, uuidText } from "../../db/uuid-bytes";
import { packJsonHex } from "../../formats/packed-json";
import { BASE_JOIN, PAYLOAD_COLUMNS, payloadTexts, type StoredPayload } from "../events/payloads";
import type { ArchiveSource } from "./archive";
import { deleteByIds } from "./archive";
import { cutoffOf, idFloor, idTime, type RetainedKind, SERVICE_SCOPE } from "./windows";

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

/**
 * A batch of a part: the account's rows (the service's, unscoped) of an id range, in id order,
 * with `?` for the account, the range's ends and the limit. Every such table has an index on
 * (account_id, id) or is clustered on it (events), so a batch reads its rows and no others.
 */
export function archiveReadSql(k: RetainedKind): string {
  const where = [
    ...(k.scope === "account" ? [`e.account_id = ${paramFor(k.table, "account_id")}`] : []),
    `e.id >= ${paramFor(k.table, "id")}`,
    `e.id < ${paramFor(k.table, "id")}`,
    ...(k.where ? [k.where] : []),
  ];
  // An event packed against a base is read with the base's payload (events/payloads.ts).
  const from =
    k.table === "events"
      ? `SELECT ${selectAll("events", "e")}, b.payload AS base_payload FROM events e ${BASE_JOIN}`
      : `SELECT ${selectAll(k.table, "e")} FROM ${k.table} e`;
  return `${from} WHERE ${where.join(" AND ")} ORDER BY e.id LIMIT ?`;
}

export function tableSource(k: RetainedKind, now: number): ArchiveSource {
  if (k.keyed === "webhook") return deliverySource(k, now);
  const scoped = k.scope === "account";
  const events = k.table === "events";
  return {
    kind: k.kind,
    async read(env, accountId, day, limit) {
      const upper = Math.min(day.end, cutoffOf(env, k, now));
      const { results } = await env.DB.prepare(archiveReadSql(k))
        .bind(...(scoped ? [accountId] : []), idFloor(day.start), idFloor(upper), limit)
        .all<{ id: string }>();
      return results;
    },
    async lines(_env, rows) {
      if (!events) return rows.map((r) => asLine(r as Record<string, unknown>));
      // The archive has each event whole: its payload as JSON, no reference to a base.
      const texts = payloadTexts(rows as unknown as StoredPayload[]);
      return rows.map((r, i) => {
        const { base_id: _b, base_payload: _p, ...row } = r as Record<string, unknown>;
        return asLine({ ...row, payload: texts[i] });
      });
    },
    async remove(env, accountId, lines) {
      const ids = lines.map((l) => l.id as string);
      if (!ids.length) return;
      const restand = events ? await restandDependents(env, accountId, ids) : [];
      await env.DB.batch([...restand, ...deleteByIds(env.DB, k.table, ids, scoped ? accountId : undefined)]);
    },
  };
}

/**
 * How long after its base a dependent event can have been made: the events of a chunk of
 * commands share the first command's stored task (events/outbox.ts `shared`), all written by
 * one D1 batch of one request.
 */
const DEPENDENTS_WITHIN_MS = 60_000;

/**
 * Events that stay while the base they were packed against goes (a chunk's shared base has a
 * smaller id than the events read with it, so a part or a batch may end between them): each
 * is stored whole again, in the transaction that deletes its base, so no event is ever left
 * without the text it reads with. The rows looked at are the account's events of the minute
 * after the batch, by primary key.
 */
async function restandDependents(env: Env, accountId: string, ids: string[]) {
  const sorted = [...ids].sort(); // ids are text: Math.max does not compare them
  const [first, last] = [sorted[0], sorted[sorted.length - 1]];
  // From the batch's first id: an event kept inside the batch's range (a delivery of it is
  // still owed, windows.ts) may hang from a base the batch removes.
  const { results } = await env.DB.prepare(
    `SELECT ${uuidText("e.id")} AS id, ${PAYLOAD_COLUMNS} FROM events e ${BASE_JOIN}
     WHERE e.account_id = ${uuidBytes()} AND e.id > ${uuidBytes()} AND e.id < ${uuidBytes()}
       AND e.base_id IN (SELECT ${uuidBytes("value")} FROM json_each(?4))
       AND e.id NOT IN (SELECT ${uuidBytes("value")} FROM json_each(?4))`,
  )
    .bind(accountId, first, idFloor(idTime(last) + DEPENDENTS_WITHIN_MS), JSON.stringify(ids))
    .all<StoredPayload>();
  const texts = payloadTexts(results);
  return results.map((r, i) =>
    env.DB.prepare(
      `UPDATE events SET payload = unhex(?), base_id = NULL WHERE account_id = ${uuidBytes()} AND id = ${uuidBytes()}`,
    ).bind(packJsonHex(texts[i]), accountId, r.id),
  );
}

/**
 * Webhook deliveries, clustered on (webhook_id, event_id) (migration 0025): an account's are
 * those of its webhooks (a webhook's deliveries go with it), a day's those whose event was made
 * that day, each webhook's a range of the key. A line is the row as stored; its `id` is the
 * delivery's (`legacy_id`, else the event's).
 */
function deliverySource(k: RetainedKind, now: number): ArchiveSource {
  return {
    kind: k.kind,
    async read(env, accountId, day, limit) {
      const upper = Math.min(day.end, cutoffOf(env, k, now));
      const { results } = await env.DB.prepare(
        `SELECT ${uuidText("d.event_id")} AS id, ${selectAll("webhook_deliveries", "d")}
         FROM webhooks w JOIN webhook_deliveries d ON d.webhook_id = ${uuidBytes("w.id")}
         WHERE w.account_id = ? AND d.event_id >= ${uuidBytes()} AND d.event_id < ${uuidBytes()}${k.where ? ` AND ${k.where}` : ""}
         ORDER BY d.event_id, d.webhook_id LIMIT ?`,
      )
        .bind(accountId, idFloor(day.start), idFloor(upper), limit)
        .all<{ id: string; legacy_id: string | null }>();
      return results;
    },
    async lines(_env, rows) {
      return rows.map((r) => {
        const { id: _key, legacy_id, ...row } = r as Record<string, unknown>;
        return { id: legacy_id ?? row.event_id, ...row, legacy_id };
      });
    },
    async remove(env, _accountId, lines) {
      const keys = lines.map((l) => [l.webhook_id, l.event_id]);
      const statements: D1PreparedStatement[] = [];
      for (let i = 0; i < keys.length; i += 500)
        statements.push(
          env.DB.prepare(
            `DELETE FROM webhook_deliveries
             WHERE (webhook_id, event_id) IN (SELECT ${uuidBytes("value ->> 0")}, ${uuidBytes("value ->> 1")} FROM json_each(?))`,
          ).bind(JSON.stringify(keys.slice(i, i + 500))),
        );
      if (statements.length) await env.DB.batch(statements);
    },
  };
}

/** The oldest row of a kind past its window (its account and time), or null. */
export async function oldestPastWindow(env: Env, k: RetainedKind, now: number) {
  const floor = idFloor(cutoffOf(env, k, now));
  if (k.keyed === "account") {
    // Clustered on (account_id, id): each account's oldest is one seek of the key; the accounts
    // are walked the same way (a loose index scan, SQLite's recursive CTE for "skip-scan").
    return env.DB.prepare(
      `WITH RECURSIVE owners(a) AS (
         SELECT (SELECT MIN(account_id) FROM ${k.table})
         UNION ALL SELECT (SELECT MIN(account_id) FROM ${k.table} WHERE account_id > owners.a) FROM owners WHERE a IS NOT NULL
       )
       SELECT ${textFor(k.table, "account_id", "owner")} AS account_id, ${textFor(k.table, "id", "oldest")} AS id FROM (
         SELECT a AS owner, (SELECT e.id FROM ${k.table} e WHERE e.account_id = owners.a${k.where ? ` AND ${k.where}` : ""} ORDER BY e.id LIMIT 1) AS oldest FROM owners WHERE a IS NOT NULL
       ) WHERE oldest < ${paramFor(k.table, "id")} ORDER BY oldest LIMIT 1`,
    )
      .bind(floor)
      .first<{ account_id: string; id: string }>();
  }
  if (k.keyed === "webhook") {
    // Each webhook's oldest delivery is one seek of (webhook_id, event_id).
    return env.DB.prepare(
      `SELECT account_id, ${uuidText("oldest")} AS id FROM (
         SELECT w.account_id, (SELECT d.event_id FROM webhook_deliveries d WHERE d.webhook_id = ${uuidBytes("w.id")}${k.where ? ` AND ${k.where}` : ""} ORDER BY d.event_id LIMIT 1) AS oldest
         FROM webhooks w
       ) WHERE oldest < ${uuidBytes()} ORDER BY oldest LIMIT 1`,
    )
      .bind(floor)
      .first<{ account_id: string; id: string }>();
  }
  const scoped = k.scope === "account";
  const row = await env.DB.prepare(
    `SELECT ${scoped ? "account_id" : `'${SERVICE_SCOPE}' AS account_id`}, id FROM ${k.table}
     WHERE id < ?${k.where ? ` AND ${k.where}` : ""} ORDER BY id LIMIT 1`,
  )
    .bind(floor)
    .first<{ account_id: string; id: string }>();
  return row;
}
