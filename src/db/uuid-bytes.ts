/**
 * UUIDs stored as their 16 bytes (RFC 9562 §4: the 128 bits in network byte order) in the
 * tables a delivered task leaves the most rows in: events, webhook_deliveries, task_commands
 * (contract §23, migration 0036). The text form costs 36 bytes in the row and again in every
 * index that holds the column; the bytes cost 16. Bytes compare as the lowercase text does (hex
 * digits sort as their values), so every keyset order (`id > ?`) is the same as before.
 *
 * Only SQL converts, so the code around a statement keeps binding and reading text ids: a bound
 * id goes in through `unhex(?, '-')` (SQLite 3.41; the dashes are skipped, either case reads)
 * and a stored one comes out in its canonical text form (lowercase, dashed, RFC 9562 §4).
 * Text that is not a UUID becomes NULL on the way in, so it matches nothing.
 */

/** SQL: the bytes of the text UUID `expr` (a bound `?` by default). */
export const uuidBytes = (expr = "?") => `unhex(${expr}, '-')`;

/** SQL: the canonical text form of the stored bytes of `column` (NULL stays NULL). */
export function uuidText(column: string): string {
  const hex = `hex(${column})`;
  const part = (from: number, length?: number) =>
    `substr(${hex}, ${from}${length === undefined ? "" : `, ${length}`})`;
  return `CASE WHEN ${column} IS NULL THEN NULL ELSE lower(${part(1, 8)} || '-' || ${part(9, 4)} || '-' || ${part(13, 4)} || '-' || ${part(17, 4)} || '-' || ${part(21)}) END`;
}

/**
 * SQL: a select list of `columns` of the table aliased `alias` (or unqualified), those in
 * `uuids` as text under their own names, so rows read as they did when ids were text.
 */
export function selectColumns(
  columns: readonly string[],
  uuids: ReadonlySet<string>,
  alias?: string,
): string {
  const q = (c: string) => (alias ? `${alias}.${c}` : c);
  return columns.map((c) => (uuids.has(c) ? `${uuidText(q(c))} AS ${c}` : q(c))).join(", ");
}

/** SQL: the values list of an INSERT of `columns`, a bound parameter each (bytes for `uuids`). */
export const insertParams = (columns: readonly string[], uuids: ReadonlySet<string>) =>
  columns.map((c) => (uuids.has(c) ? uuidBytes() : "?")).join(", ");

/**
 * SQL: the select list of an INSERT ... SELECT FROM json_each(?) whose JSON holds one array per
 * row, `columns` in order (bytes for `uuids`).
 */
export const jsonRowColumns = (columns: readonly string[], uuids: ReadonlySet<string>) =>
  columns.map((c, i) => (uuids.has(c) ? uuidBytes(`value ->> ${i}`) : `value ->> ${i}`)).join(", ");

/** The columns of each table stored as bytes. */
export const EVENT_UUIDS: ReadonlySet<string> = new Set(["id", "account_id", "base_id"]);
export const DELIVERY_UUIDS: ReadonlySet<string> = new Set(["webhook_id", "event_id"]);
export const COMMAND_UUIDS: ReadonlySet<string> = new Set([
  "id",
  "account_id",
  "task_id",
  "assignee_id",
  "user_id",
]);

/** By table, for code that walks tables generically (account moves, the archive). */
export const UUID_COLUMNS: Readonly<Record<string, ReadonlySet<string>>> = {
  events: EVENT_UUIDS,
  webhook_deliveries: DELIVERY_UUIDS,
  task_commands: COMMAND_UUIDS,
  // Workers' trails and latest positions (migration 0038), bytes from the start.
  position_slices: new Set(["account_id", "user_id"]),
  worker_positions: new Set(["account_id", "user_id"]),
};

/** SQL: a bound value compared with `table.column`: bytes when the column holds them. */
export const paramFor = (table: string, column: string, expr = "?") =>
  UUID_COLUMNS[table]?.has(column) ? uuidBytes(expr) : expr;

/** SQL: `expr` (a value of `table.column`) as text: converted when the column holds bytes. */
export const textFor = (table: string, column: string, expr: string) =>
  UUID_COLUMNS[table]?.has(column) ? uuidText(expr) : expr;

/** SQL: every column of `table` aliased `alias`, as its rows read (`alias.*` with ids as text). */
export function selectAll(table: string, alias: string): string {
  const uuids = UUID_COLUMNS[table];
  return uuids ? selectColumns(TABLE_COLUMNS[table], uuids, alias) : `${alias}.*`;
}

/** The columns of a task command row, in their stored order (migration 0036). */
export const TASK_COMMAND_COLUMNS = [
  "id",
  "account_id",
  "task_id",
  "external_id",
  "action",
  "time",
  "assignee_id",
  "task_data",
  "notes",
  "location",
  "user_id",
  "state",
  "error_message",
  "accepted_at",
  "rejected_at",
  "created_at",
  "updated_at",
] as const;

/** The columns of the tables with bytes, in their stored order (migration 0036). */
const TABLE_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  position_slices: ["account_id", "user_id", "slice", "count", "data"],
  worker_positions: ["account_id", "user_id", "lon", "lat", "time", "accuracy_m"],
  events: ["id", "account_id", "type", "payload", "base_id", "created_at", "dispatched_at"],
  webhook_deliveries: [
    "webhook_id",
    "event_id",
    "state",
    "attempts",
    "next_attempt_at",
    "last_status_code",
    "last_error",
    "created_at",
    "updated_at",
    "legacy_id",
  ],
  task_commands: TASK_COMMAND_COLUMNS,
};
