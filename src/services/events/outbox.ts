import { uuidBytes } from "../../db/uuid-bytes";
import { packJsonHex } from "../../formats/packed-json";
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
  "user.hijacked",
  "worker.duty_changed",
  "task.late",
  "task.auto_assign_failed",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Messages of the live stream only (contract §28): not stored, not in `/events/`, not webhooks. */
export const LIVE_ONLY_TYPES = ["worker.position"] as const;

/**
 * `dispatched_at` at insert: an account without webhooks has nobody to relay to, so its events
 * are born dispatched and never reach the relay's queue of work (a 100k-task import must not
 * stand between a webhook and its events). Decided in the same transaction as the insert; a
 * webhook only ever receives events created after it (dispatch.ts).
 */
const dispatchedAt = (accountExpr = "?", nowExpr = "?") =>
  `CASE WHEN EXISTS (SELECT 1 FROM webhooks w WHERE w.account_id = ${accountExpr}) THEN NULL ELSE ${nowExpr} END`;
const DISPATCHED_AT = dispatchedAt();

/**
 * `objectId` is the object the event is about; it is not stored (nothing reads it: readers take
 * the object from the payload), only used by `onlyIfExistsIn` below.
 */
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
      `INSERT INTO events (id, account_id, type, payload, created_at, dispatched_at)
       SELECT ${uuidBytes()}, ${uuidBytes()}, ?, unhex(?), ?, ${DISPATCHED_AT} WHERE ${e.when?.sql ?? "1"}`,
    )
    .bind(
      uuidv7(now),
      e.accountId,
      e.type,
      packJsonHex(JSON.stringify(e.data)),
      now,
      e.accountId,
      now,
      ...(e.when?.params ?? []),
    );
}

/** A base the events of several statements share: empty until the first of them stores it. */
export type SharedBase = { base: { id: string; text: string } | null };

/** D1 binds at most 100 parameters per statement; each event row takes four. */
const MAX_PARAMS = 100;

/**
 * Many events in few statements (an order brings up to 500 tasks; one INSERT per event would
 * exceed D1's per-invocation query budget). Rows go in as `VALUES` tuples of bound parameters
 * (not as one JSON document, which SQLite would have to parse again for every column), as many
 * per statement as D1's 100-parameter limit allows. With `onlyIfExistsIn`, only for objects
 * that exist once the batch reaches the statement (an object whose INSERT a concurrent writer
 * pre-empted produces no event).
 *
 * Without `onlyIfExistsIn`, a statement's events are written all or none (one condition for
 * all), so they are packed against one of them (contract §23, formats/packed-json.ts format
 * 2): the one with the largest id, stored whole, is the base of the others. A command's event
 * and its task's `task.state_changed`, or a run of commands on one task, then store the task
 * once. With `onlyIfExistsIn` each row stands alone: a base could be the row left out.
 *
 * With `shared`, the events of several statements of one transaction share a base: the first
 * statement that finds `shared.base` empty stores its base whole and leaves it there, and the
 * later ones pack every row against it. The caller vouches that a later statement writes its
 * rows only when the base's statement wrote its own (a chunk of commands on one task: each
 * command is guarded by the task's version after the one before). Such a base has a smaller id
 * than the rows read with it; the archive keeps them readable (retention/sources.ts).
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
    /** A base shared with the transaction's other statements (see above). */
    shared?: SharedBase;
  } = {},
): D1PreparedStatement[] {
  const now = opts.now ?? Date.now();
  const conditions: string[] = [];
  const conditionParams: unknown[] = [];
  if (opts.onlyIfExistsIn) {
    // The fourth value of a row is its object's id here, the base's id otherwise.
    conditions.push(
      `EXISTS (SELECT 1 FROM ${opts.onlyIfExistsIn} x WHERE x.id = v.column4 AND x.account_id = ?)`,
    );
    conditionParams.push(accountId);
  }
  if (opts.when) {
    conditions.push(`(${opts.when.sql})`);
    conditionParams.push(...opts.when.params);
  }
  const guard = conditions.length ? ` WHERE ${conditions.join(" AND ")}` : "";
  const perStatement = Math.floor((MAX_PARAMS - 4 - conditionParams.length) / 4);
  const baseColumn = opts.onlyIfExistsIn ? "NULL" : uuidBytes("v.column4");
  const out: D1PreparedStatement[] = [];
  for (let i = 0; i < items.length; i += perStatement) {
    const chunk = items.slice(i, i + perStatement);
    const outer = opts.onlyIfExistsIn ? null : (opts.shared?.base ?? null);
    let values: unknown[];
    if (opts.onlyIfExistsIn) {
      values = chunk.flatMap((e) => [uuidv7(now), e.type, packJsonHex(JSON.stringify(e.data)), e.objectId]);
    } else {
      const packed = packedEvents(chunk, now, outer);
      values = packed.rows.flat();
      if (opts.shared && !outer) opts.shared.base = packed.base;
    }
    out.push(
      db
        .prepare(
          "INSERT INTO events (id, account_id, type, payload, base_id, created_at, dispatched_at) " +
            `SELECT ${uuidBytes("v.column1")}, ${uuidBytes()}, v.column2, unhex(v.column3), ${baseColumn}, ?, ${DISPATCHED_AT} ` +
            `FROM (VALUES ${chunk.map(() => "(?, ?, ?, ?)").join(", ")}) AS v${guard}`,
        )
        .bind(accountId, now, accountId, now, ...values, ...conditionParams),
    );
  }
  return out;
}

/** An event row as packed for the INSERT: id, type, payload (hex, formats/packed-json.ts), base id. */
export type PackedEvent = [id: string, type: EventType, payloadHex: string, baseId: string | null];

/**
 * Events written all or none, packed (contract §23): against `outer` when given, else against
 * the one of them with the largest id, stored whole (uuidv7 is monotonic within an isolate, so
 * the last; chosen, not assumed). A single event without `outer` stands alone.
 */
export function packedEvents(
  items: readonly EventItem[],
  now: number,
  outer: { id: string; text: string } | null = null,
): { rows: PackedEvent[]; base: { id: string; text: string } } {
  const ids = items.map(() => uuidv7(now));
  const texts = items.map((e) => JSON.stringify(e.data));
  const last = ids.reduce((max, id, j) => (id > ids[max] ? j : max), 0);
  const rows = items.map((e, j): PackedEvent => {
    if (outer) return [ids[j], e.type, packJsonHex(texts[j], outer.text), outer.id];
    if (j === last) return [ids[j], e.type, packJsonHex(texts[j]), null];
    return [ids[j], e.type, packJsonHex(texts[j], texts[last]), ids[last]];
  });
  return { rows, base: { id: ids[last], text: texts[last] } };
}

/**
 * SQL: an INSERT of events from `json_each(?)` whose JSON holds one array per row, laid out as
 * `PackedEvent` followed by `[created_at, ...]`; `where` (over `j.value`) decides each row. For
 * writes of many objects in one statement, each row guarded on its own (task-commands group
 * commit), beyond the 100 bound parameters a `VALUES` list allows. The account is bound once.
 */
export const jsonEventsInsert = (where: string) =>
  "INSERT INTO events (id, account_id, type, payload, base_id, created_at, dispatched_at) " +
  `SELECT ${uuidBytes("j.value ->> 0")}, ${uuidBytes("?1")}, j.value ->> 1, unhex(j.value ->> 2), ` +
  `${uuidBytes("j.value ->> 3")}, j.value ->> 4, ${dispatchedAt("?1", "j.value ->> 4")} FROM json_each(?2) AS j WHERE ${where}`;
