import { sql } from "drizzle-orm";
import {
  blob,
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";

// Every index leads with account_id: each list is one account's, so no query needs a scan
// of the whole table, and the second column serves the filter or the ordering.

export const contactAddresses = sqliteTable(
  "contact_addresses",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    externalId: text("external_id"),
    /** Address object (raw_address, formatted_address, location, geocoding fields) as JSON. */
    address: text("address", { mode: "json" }).notNull().default(sql`'{}'`),
    contact: text("contact", { mode: "json" }).notNull().default(sql`'{}'`),
    metafields: text("metafields", { mode: "json" }).notNull().default(sql`'{}'`),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("contact_addresses_external_id_unique").on(t.accountId, t.externalId),
    index("contact_addresses_account_created_idx").on(t.accountId, t.createdAt, t.id),
  ],
);

export const orders = sqliteTable(
  "orders",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    externalId: text("external_id"),
    reference: text("reference").notNull().default(""),
    description: text("description").notNull().default(""),
    clientId: text("client_id"),
    orderer: text("orderer", { mode: "json" }),
    /** Custom fields (contract §12), validated against the `orders` definitions. */
    metafields: text("metafields", { mode: "json" }).notNull().default(sql`'{}'`),
    assigneeId: text("assignee_id"),
    autoAssign: integer("auto_assign", { mode: "boolean" }).notNull().default(false),
    createdBy: text("created_by"),
    recurrenceId: text("recurrence_id"),
    /** The occurrence's time, for an order made by a recurrence (contract §20), as tasks keep it. */
    calendarTime: text("calendar_time", { mode: "json" }),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("orders_external_id_unique").on(t.accountId, t.externalId),
    index("orders_account_created_idx").on(t.accountId, t.createdAt, t.id),
    index("orders_account_updated_idx").on(t.accountId, t.updatedAt, t.id),
    index("orders_account_client_idx").on(t.accountId, t.clientId, t.createdAt, t.id),
  ],
);

/** Clients (contract §13): the customers orders and tasks are for. */
export const clients = sqliteTable(
  "clients",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    name: text("name").notNull(),
    /** Unique per account: a POST with a known one updates that client (as orders do). */
    externalId: text("external_id"),
    emails: text("emails", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    phones: text("phones", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    notes: text("notes").notNull().default(""),
    metafields: text("metafields", { mode: "json" }).notNull().default(sql`'{}'`),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("clients_external_id_unique").on(t.accountId, t.externalId),
    index("clients_account_created_idx").on(t.accountId, t.createdAt, t.id),
  ],
);

export const tasks = sqliteTable(
  "tasks",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    state: text("state").notNull(),
    category: text("category").notNull(),
    description: text("description").notNull().default(""),
    /** Address object as JSON; the columns below copy what lists filter on. */
    address: text("address", { mode: "json" }).notNull().default(sql`'{}'`),
    geocodedAt: integer("geocoded_at"),
    geocodeFailedAt: integer("geocode_failed_at"),
    contact: text("contact", { mode: "json" }).notNull().default(sql`'{}'`),
    completeAfter: integer("complete_after"),
    completeBefore: integer("complete_before"),
    scheduledTime: integer("scheduled_time"),
    durationSeconds: integer("duration_seconds"),
    assigneeId: text("assignee_id"),
    orderId: text("order_id"),
    /** Index of the task inside its order's tasks_data (order upsert matches on it). */
    orderIndex: integer("order_index"),
    position: real("position"),
    createdBy: text("created_by"),
    metafields: text("metafields", { mode: "json" }).notNull().default(sql`'{}'`),
    routeId: text("route_id"),
    signers: text("signers", { mode: "json" }),
    formDefaultValues: text("form_default_values", { mode: "json" }),
    recurrenceId: text("recurrence_id"),
    calendarTime: text("calendar_time", { mode: "json" }),
    contactAddressId: text("contact_address_id"),
    contactAddressExternalId: text("contact_address_external_id"),
    /** The task's client (contract §13); on deletion of the client, set to null. */
    clientId: text("client_id"),
    taskImportId: text("task_import_id"),
    /** Incremented on every write: a cheap change counter for the TaskDO and for ETags. */
    version: integer("version").notNull().default(1),
    /**
     * The command whose guarded update last changed the task: the command row and its events
     * are written as accepted only where this names them, in the same batch (exact, even if
     * another writer bumped `version` meanwhile).
     */
    lastCommandId: text("last_command_id"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("tasks_account_created_idx").on(t.accountId, t.createdAt, t.id),
    index("tasks_account_updated_idx").on(t.accountId, t.updatedAt, t.id),
    index("tasks_account_state_created_idx").on(t.accountId, t.state, t.createdAt, t.id),
    index("tasks_account_assignee_state_idx").on(t.accountId, t.assigneeId, t.state, t.createdAt, t.id),
    index("tasks_account_order_idx").on(t.accountId, t.orderId, t.orderIndex),
    // Across accounts on purpose: the cron re-arms scheduled tasks whose alarm was lost. Partial,
    // so the planner never takes it for an account's list.
    index("tasks_scheduled_due_idx").on(t.scheduledTime).where(sql`state = 'scheduled'`),
    // One task per slot of an order's tasks_data: D1 itself refuses a duplicate upsert.
    uniqueIndex("tasks_order_index_unique").on(t.orderId, t.orderIndex),
    index("tasks_account_after_idx").on(t.accountId, t.completeAfter, t.id),
    index("tasks_account_before_idx").on(t.accountId, t.completeBefore, t.id),
    index("tasks_account_position_idx").on(t.accountId, t.position, t.id),
    // The cron's lateness check (contract §28): open, assigned tasks by the end of their window.
    index("tasks_open_due_idx")
      .on(t.completeBefore)
      .where(sql`assignee_id IS NOT NULL AND state IN ('assigned', 'accepted', 'transit', 'active')`),
    index("tasks_account_category_idx").on(t.accountId, t.category, t.createdAt, t.id),
    // Partial (contract §23: what a task leaves behind stays small): most tasks have no contact
    // address, client, route, import or failed geocoding, and a filter on one of these (`= ?`,
    // `IN (...)`) implies `IS NOT NULL`, so SQLite still takes the index for it (SQLite's
    // partial-index rule), while a task without one adds no entry to it.
    index("tasks_account_contact_address_idx")
      .on(t.accountId, t.contactAddressId)
      .where(sql`contact_address_id IS NOT NULL`),
    index("tasks_account_contact_address_ext_idx")
      .on(t.accountId, t.contactAddressExternalId)
      .where(sql`contact_address_external_id IS NOT NULL`),
    index("tasks_account_client_idx")
      .on(t.accountId, t.clientId, t.createdAt, t.id)
      .where(sql`client_id IS NOT NULL`),
    index("tasks_account_route_idx")
      .on(t.accountId, t.routeId, t.position, t.id)
      .where(sql`route_id IS NOT NULL`),
    index("tasks_account_import_idx").on(t.accountId, t.taskImportId).where(sql`task_import_id IS NOT NULL`),
    index("tasks_account_geocoded_idx").on(t.accountId, t.geocodedAt),
    index("tasks_account_geocode_failed_idx")
      .on(t.accountId, t.geocodeFailedAt)
      .where(sql`geocode_failed_at IS NOT NULL`),
  ],
);

export const taskCommands = sqliteTable(
  "task_commands",
  {
    /** UUIDs as their 16 bytes (db/uuid-bytes.ts, migration 0036). */
    id: blob("id").primaryKey(),
    accountId: blob("account_id").notNull(),
    taskId: blob("task_id").notNull(),
    externalId: text("external_id").notNull(),
    action: text("action").notNull(),
    time: integer("time").notNull(),
    assigneeId: blob("assignee_id"),
    taskData: text("task_data", { mode: "json" }).notNull().default(sql`'{}'`),
    notes: text("notes").notNull().default(""),
    location: text("location", { mode: "json" }),
    userId: blob("user_id"),
    /** pending (asynchronous mode, not yet applied), accepted, rejected. */
    state: text("state").notNull(),
    errorMessage: text("error_message").notNull().default(""),
    acceptedAt: integer("accepted_at"),
    rejectedAt: integer("rejected_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("task_commands_external_id_unique").on(t.accountId, t.externalId),
    index("task_commands_account_created_idx").on(t.accountId, t.createdAt, t.id),
    // A task's commands: task ids are unique across accounts, so the account need not lead
    // (every query names the task; the account is still checked on the row). 36 bytes less
    // per command than (account_id, task_id, ...), which a finished task keeps for good.
    index("task_commands_task_idx").on(t.taskId, t.createdAt, t.id),
    // The cron's sweep of stale pending commands spans accounts; partial, so it holds only
    // the few rows still pending and costs writes nothing once a command is applied.
    index("task_commands_pending_idx").on(t.createdAt, t.id).where(sql`state = 'pending'`),
    // A worker's last reported location, for the ETA of a public tracking page
    // (trackers/public.ts): without it every page view read and sorted all of the account's
    // commands. Partial: only the commands that carried a location (a phone's completion, not
    // a dispatcher's assign), so most rows cost it nothing.
    index("task_commands_user_location_idx").on(t.userId, t.time).where(sql`location IS NOT NULL`),
  ],
);

/**
 * An index of task metafield values for `GET /tasks/?metafields__<key>=` (contract §12): one row
 * per scalar value, and per item of a list value. Kept by triggers on `tasks` (migration
 * 0010), so every write path updates it in the statement that writes the task.
 */
export const taskMetafieldValues = sqliteTable(
  "task_metafield_values",
  {
    accountId: text("account_id").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    taskId: text("task_id").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.key, t.value, t.taskId] }),
    index("task_metafield_values_task_idx").on(t.taskId),
  ],
);

/** Routes (contract §16): one worker's ordered stops on a date. */
export const routes = sqliteTable(
  "routes",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    name: text("name").notNull().default(""),
    assigneeId: text("assignee_id"),
    /** `YYYY-MM-DD` in the account's time zone. */
    date: text("date"),
    state: text("state").notNull().default("draft"),
    objective: text("objective").notNull().default("distance"),
    startAddress: text("start_address", { mode: "json" }),
    endAddress: text("end_address", { mode: "json" }),
    metafields: text("metafields", { mode: "json" }).notNull().default(sql`'{}'`),
    distanceM: real("distance_m"),
    durationS: real("duration_s"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("routes_account_created_idx").on(t.accountId, t.createdAt, t.id)],
);

/** Route optimizations (contract §16): a job solved from the fd-route-optimizations queue. */
export const routeOptimizations = sqliteTable(
  "route_optimizations",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    state: text("state").notNull().default("queued"),
    /** JSON lists of route and task ids taking part. */
    routeIds: text("route_ids", { mode: "json" }).notNull(),
    taskIds: text("task_ids", { mode: "json" }).notNull(),
    ignoreTimeWindows: integer("ignore_time_windows", { mode: "boolean" }).notNull().default(false),
    objective: text("objective"),
    apply: integer("apply", { mode: "boolean" }).notNull().default(true),
    /** Re-planning from now (contract §29): finished stops stay, stops under way stay first. */
    fromNow: integer("from_now", { mode: "boolean" }).notNull().default(false),
    /** False: assigned tasks keep their assignee (contract §29). */
    reassign: integer("reassign", { mode: "boolean" }).notNull().default(true),
    result: text("result", { mode: "json" }),
    errorMessage: text("error_message").notNull().default(""),
    createdBy: text("created_by"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** The job's lease (services/jobs): a step renews it; the cron re-queues the job when it lapses. */
    leaseExpiresAt: integer("lease_expires_at"),
    /** Re-queues since the last step that made progress (bounded, then the job fails). */
    leaseAttempts: integer("lease_attempts").notNull().default(0),
    /** Origin of the links the job writes, for a re-queue made by the cron. */
    baseUrl: text("base_url"),
  },
  (t) => [
    index("route_optimizations_account_created_idx").on(t.accountId, t.createdAt, t.id),
    // The archive reads an account's rows of a day in id order (retention/sources.ts): without
    // this it sorted all of the account's rows for every batch.
    index("route_optimizations_account_id_idx").on(t.accountId, t.id),
    index("route_optimizations_lease_idx").on(t.leaseExpiresAt).where(sql`state IN ('queued', 'running')`),
  ],
);

/** Trackers (contract §17): a public page for some tasks, behind an unguessable token. */
export const trackers = sqliteTable(
  "trackers",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    /** 128 random bits, base64url: the capability in `public_url`. */
    token: text("token").notNull(),
    taskIds: text("task_ids", { mode: "json" }).notNull(),
    orderId: text("order_id"),
    publicTaskFields: text("public_task_fields", { mode: "json" }).notNull(),
    /** Null: the account's `tracker_task_popup_template` at the time of reading. */
    taskPopupTemplate: text("task_popup_template"),
    expiresAt: integer("expires_at").notNull(),
    createdBy: text("created_by"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("trackers_token_unique").on(t.token),
    index("trackers_account_created_idx").on(t.accountId, t.createdAt, t.id),
  ],
);

/** Text messages (contract §18), sent from the fd-sms queue through one provider interface. */
export const sms = sqliteTable(
  "sms",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    toNumber: text("to_number").notNull(),
    message: text("message").notNull(),
    taskId: text("task_id"),
    /** queued → sending → sent → delivered, or failed. */
    state: text("state").notNull().default("queued"),
    provider: text("provider").notNull(),
    providerMessageId: text("provider_message_id"),
    errorMessage: text("error_message").notNull().default(""),
    sentAt: integer("sent_at"),
    createdBy: text("created_by"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("sms_account_created_idx").on(t.accountId, t.createdAt, t.id),
    // The archive reads an account's rows of a day in id order (retention/sources.ts): without
    // this it sorted all of the account's rows for every batch.
    index("sms_account_id_idx").on(t.accountId, t.id),
    index("sms_duplicate_idx").on(t.accountId, t.toNumber, t.createdAt),
    index("sms_provider_message_idx").on(t.providerMessageId),
  ],
);
