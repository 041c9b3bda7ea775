import { uuidv7 } from "../../lib/ids";
import type { EventType } from "../events/outbox";

// Two variants of `eventStatement` (services/events/outbox.ts), writing the same `events` rows:
//  - `guardedEvent`: the event is written only when a condition holds at that point of the batch.
//    Put BEFORE a compare-and-set UPDATE with the same condition, the event and the change are
//    both written or neither (a batch is one transaction; nothing interleaves inside it).
//  - `bulkEvents`: many events in one statement (an order brings up to 500 tasks; one INSERT
//    per event would exceed D1's per-invocation query budget), optionally only for objects
//    that exist once the batch has reached it (tasks whose INSERT a concurrent upsert pre-empted
//    produce no event).

export type EventItem = { type: EventType; objectId: string | null; data: unknown };

export function guardedEvent(
  db: D1Database,
  e: EventItem & { accountId: string; now?: number },
  guard: { sql: string; params: unknown[] },
): D1PreparedStatement {
  const now = e.now ?? Date.now();
  return db
    .prepare(
      `INSERT INTO events (id, account_id, type, object_id, payload, created_at) SELECT ?, ?, ?, ?, ?, ? WHERE ${guard.sql}`,
    )
    .bind(uuidv7(now), e.accountId, e.type, e.objectId, JSON.stringify(e.data), now, ...guard.params);
}

/** Events per statement: keeps each bound JSON parameter well under D1's 2 MB value limit. */
const EVENTS_PER_STATEMENT = 100;

export function bulkEvents(
  db: D1Database,
  accountId: string,
  items: EventItem[],
  opts: { now?: number; onlyIfExistsIn?: "tasks" | "orders" } = {},
): D1PreparedStatement[] {
  const now = opts.now ?? Date.now();
  const guard = opts.onlyIfExistsIn
    ? ` WHERE EXISTS (SELECT 1 FROM ${opts.onlyIfExistsIn} x WHERE x.id = json_extract(j.value, '$[2]') AND x.account_id = ?)`
    : "";
  const out: D1PreparedStatement[] = [];
  for (let i = 0; i < items.length; i += EVENTS_PER_STATEMENT) {
    const chunk = items
      .slice(i, i + EVENTS_PER_STATEMENT)
      .map((e) => [uuidv7(now), e.type, e.objectId, JSON.stringify(e.data)]);
    const params: unknown[] = [accountId, now, JSON.stringify(chunk)];
    if (opts.onlyIfExistsIn) params.push(accountId);
    out.push(
      db
        .prepare(
          "INSERT INTO events (id, account_id, type, object_id, payload, created_at) " +
            "SELECT json_extract(j.value, '$[0]'), ?, json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]'), ? " +
            `FROM json_each(?) AS j${guard}`,
        )
        .bind(...params),
    );
  }
  return out;
}
