import { bulkEventStatements, type EventItem, eventStatement } from "../events/outbox";

// Task writes use the outbox's two statement shapes (services/events/outbox.ts):
//  - `guardedEvent`: the event is written only when a condition holds at that point of the batch.
//    Put BEFORE a compare-and-set UPDATE with the same condition, the event and the change are
//    both written or neither (a batch is one transaction; nothing interleaves inside it).
//  - `bulkEvents`: many events in one statement, optionally only for objects that exist.

export type { EventItem };

export function guardedEvent(
  db: D1Database,
  e: EventItem & { accountId: string; now?: number },
  guard: { sql: string; params: unknown[] },
): D1PreparedStatement {
  return eventStatement(db, { ...e, when: guard });
}

export const bulkEvents = bulkEventStatements;
