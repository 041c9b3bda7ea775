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
 * `dispatched_at` at insert: an account without webhooks has nobody to relay to, so its events
 * are born dispatched and never reach the relay's queue of work (a 100k-task import must not
 * stand between a webhook and its events). Decided in the same transaction as the insert; a
 * webhook only ever receives events created after it (dispatch.ts).
 */
const DISPATCHED_AT =
  "CASE WHEN EXISTS (SELECT 1 FROM webhooks w WHERE w.account_id = ?) THEN NULL ELSE ? END";

export type EventItem = { type: EventType; objectId: string | null; data: unknown };

/**
 * The statement that records an event. Callers put it in the same `DB.batch()` as the
 * change it reports (transactional outbox), so a change is never stored without its event.
 * `data` is the serialized object (tasks inline, contract §9) as the caller rendered it.
 * With `when`, the event is written only if that SQL condition holds at that point of the
 * batch (guarded changes: the event and the change are both written or neither).
 */
export function eventStatement(
  db: D1Database,
  e: EventItem & { accountId: string; now?: number; when?: { sql: string; params: unknown[] } },
): D1PreparedStatement {
  const now = e.now ?? Date.now();
  return db
    .prepare(
      `INSERT INTO events (id, account_id, type, object_id, payload, created_at, dispatched_at)
       SELECT ?, ?, ?, ?, ?, ?, ${DISPATCHED_AT} WHERE ${e.when?.sql ?? "1"}`,
    )
    .bind(
      uuidv7(now),
      e.accountId,
      e.type,
      e.objectId,
      JSON.stringify(e.data),
      now,
      e.accountId,
      now,
      ...(e.when?.params ?? []),
    );
}

/** Events per statement: keeps each bound JSON parameter well under D1's 2 MB value limit. */
const EVENTS_PER_STATEMENT = 100;

/**
 * Many events in few statements (an order brings up to 500 tasks; one INSERT per event would
 * exceed D1's per-invocation query budget), one JSON parameter each (D1 binds at most 100
 * parameters). With `onlyIfExistsIn`, only for objects that exist once the batch reaches the
 * statement (an object whose INSERT a concurrent writer pre-empted produces no event).
 */
export function bulkEventStatements(
  db: D1Database,
  accountId: string,
  items: EventItem[],
  opts: {
    now?: number;
    onlyIfExistsIn?: "tasks" | "orders" | "attachments";
    /** Write the events only if this SQL condition holds when the batch reaches them. */
    when?: { sql: string; params: unknown[] };
  } = {},
): D1PreparedStatement[] {
  const now = opts.now ?? Date.now();
  const conditions: string[] = [];
  if (opts.onlyIfExistsIn) {
    conditions.push(
      `EXISTS (SELECT 1 FROM ${opts.onlyIfExistsIn} x WHERE x.id = json_extract(j.value, '$[2]') AND x.account_id = ?)`,
    );
  }
  if (opts.when) conditions.push(`(${opts.when.sql})`);
  const guard = conditions.length ? ` WHERE ${conditions.join(" AND ")}` : "";
  const out: D1PreparedStatement[] = [];
  for (let i = 0; i < items.length; i += EVENTS_PER_STATEMENT) {
    const chunk = items
      .slice(i, i + EVENTS_PER_STATEMENT)
      .map((e) => [uuidv7(now), e.type, e.objectId, JSON.stringify(e.data)]);
    const params: unknown[] = [accountId, now, accountId, now, JSON.stringify(chunk)];
    if (opts.onlyIfExistsIn) params.push(accountId);
    if (opts.when) params.push(...opts.when.params);
    out.push(
      db
        .prepare(
          "INSERT INTO events (id, account_id, type, object_id, payload, created_at, dispatched_at) " +
            "SELECT json_extract(j.value, '$[0]'), ?, json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'), " +
            `json_extract(j.value, '$[3]'), ?, ${DISPATCHED_AT} FROM json_each(?) AS j${guard}`,
        )
        .bind(...params),
    );
  }
  return out;
}
