import { uuidv7 } from "../../lib/ids";

/** Event names of contract §9. */
export const EVENT_TYPES = [
  "task.created",
  "task.updated",
  "task.state_changed",
  "task.deleted",
  "task_command.accepted",
  "task_command.rejected",
  "order.created",
  "order.updated",
  "document.created",
  "document.deleted",
  "signature.created",
  "signature.deleted",
  "form_response.completed",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The statement that records an event. Callers put it in the same `DB.batch()` as the
 * change it reports (transactional outbox), so a change is never stored without its event.
 * `data` is the serialized object (tasks inline, contract §9) as the caller rendered it.
 */
export function eventStatement(
  db: D1Database,
  e: {
    accountId: string;
    type: EventType;
    objectId: string | null;
    data: unknown;
    now?: number;
    /** Write the event only if this SQL condition holds when the batch runs (guarded changes). */
    when?: { sql: string; params: unknown[] };
  },
): D1PreparedStatement {
  const now = e.now ?? Date.now();
  return db
    .prepare(
      `INSERT INTO events (id, account_id, type, object_id, payload, created_at) SELECT ?, ?, ?, ?, ?, ? WHERE ${e.when?.sql ?? "1"}`,
    )
    .bind(
      uuidv7(now),
      e.accountId,
      e.type,
      e.objectId,
      JSON.stringify(e.data),
      now,
      ...(e.when?.params ?? []),
    );
}
