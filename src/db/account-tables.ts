/**
 * Every table, by where its rows live (contract §24, db/shards.ts): an account's data, which
 * lives in its account's database alone and moves with it (`npm run accounts:move`), or global
 * rows, which the directory holds (and shards copy for their accounts' statements). A test
 * (test/db/account-tables.test.ts) holds this list to the schema, so a new table cannot be left
 * behind by a move.
 */

import { paramFor } from "./uuid-bytes";

/**
 * A table of account data: its primary key (or the unique key that stands for one), the order
 * copies and verification walk it in; and which rows are the account's (one `?`: the account
 * id). Parents come before their children (a foreign key, or a child found through its parent).
 * Only these literals are ever put into SQL.
 */
export type AccountDataTable = { table: string; key: string[]; where: string };

// A column of UUIDs stored as bytes (./uuid-bytes.ts) compares with its parent's text through unhex.
const own = (table: string, key = ["id"]): AccountDataTable => ({
  table,
  key,
  where: `account_id = ${paramFor(table, "account_id")}`,
});
const through = (table: string, key: string[], column: string, parent: string): AccountDataTable => ({
  table,
  key,
  where: `${column} IN (SELECT ${paramFor(table, column, "id")} FROM ${parent} WHERE account_id = ?)`,
});

export const ACCOUNT_DATA_TABLES: readonly AccountDataTable[] = [
  own("metafields"),
  own("clients"),
  own("contact_addresses"),
  own("file_uploads"),
  own("forms"),
  own("form_fields"),
  own("routes"),
  own("recurrences"),
  through("recurrence_occurrences", ["recurrence_id", "occurrence_at"], "recurrence_id", "recurrences"),
  own("orders"),
  own("tasks"),
  own("task_metafield_values", ["account_id", "key", "value", "task_id"]),
  own("task_commands"),
  own("attachments"),
  own("form_responses"),
  own("trackers"),
  own("notification_templates"),
  own("notification_sends"),
  own("sms"),
  own("outbound_emails"),
  own("events", ["account_id", "id"]),
  own("webhooks"),
  through("webhook_deliveries", ["webhook_id", "event_id"], "webhook_id", "webhooks"),
  own("data_imports"),
  through("import_rows", ["import_id", "row"], "import_id", "data_imports"),
  own("data_exports"),
  own("route_optimizations"),
  own("archives"),
  // Workers' positions (contract §28): personal data, moved with the account like the rest.
  own("position_slices", ["account_id", "user_id", "slice"]),
  own("worker_positions", ["account_id", "user_id"]),
];

/**
 * Global rows: the directory's (accounts and where each lives, users, roles, tokens, sign-in
 * limits, links sent by e-mail, stream tickets, moves, the lookups of anonymous entry points), copied to a shard where its accounts'
 * statements join them; and dead letters, the operator's record of each database's queues.
 */
export const GLOBAL_TABLES: readonly string[] = [
  "accounts",
  "users",
  "account_roles",
  "auth_tokens",
  "user_tokens",
  "stream_tickets",
  "sign_in_failures",
  "dead_letters",
  "account_moves",
  "public_keys",
];
