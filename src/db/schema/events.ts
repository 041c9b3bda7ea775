import { sql } from "drizzle-orm";
import { blob, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * The outbox: an event row is written in the same D1 batch as the change it reports, so
 * no change is ever without its event; delivery reads from here (transactional outbox).
 * Stored clustered on (account_id, id), a WITHOUT ROWID table (migration 0025: drizzle-kit
 * cannot say so, the migration does).
 */
export const events = sqliteTable(
  "events",
  {
    /** UUIDs as their 16 bytes (db/uuid-bytes.ts, migration 0036). */
    id: blob("id").notNull(),
    accountId: blob("account_id").notNull(),
    type: text("type").notNull(),
    /** The event's `data` as rendered when the change happened, packed (formats/packed-json.ts). */
    payload: blob("payload").notNull(),
    /**
     * The event of the same write whose payload this one's is packed against (format 2), with a
     * larger id; null for a payload stored whole (services/events/payloads.ts). No foreign key:
     * the clustered key is (account_id, id), and retention removes the base after its readers.
     */
    baseId: blob("base_id"),
    createdAt: integer("created_at").notNull(),
    /** Set once the event has been handed to the webhook queue (a sweeper re-sends the rest). */
    dispatchedAt: integer("dispatched_at"),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    // Partial: only events still waiting for the relay are in it (most are born dispatched),
    // so writing an event costs one index entry less and the relay's scan stays small.
    index("events_undispatched_idx").on(t.createdAt).where(sql`dispatched_at IS NULL`),
  ],
);

export const webhooks = sqliteTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    url: text("url").notNull(),
    events: text("events", { mode: "json" }).$type<string[]>().notNull(),
    state: text("state").$type<"active" | "failed">().notNull().default("active"),
    failedAt: integer("failed_at"),
    failMessage: text("fail_message").notNull().default(""),
    formResponseEvents: integer("form_response_events", { mode: "boolean" }).notNull().default(false),
    secret: text("secret").notNull(),
    createdBy: text("created_by"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("webhooks_account_idx").on(t.accountId, t.createdAt, t.id)],
);

/**
 * One event to one webhook. Clustered on (webhook_id, event_id), a WITHOUT ROWID table
 * (migration 0025); a delivery's id is its event's id, or `legacy_id` for one made before.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    /** UUIDs as their 16 bytes (db/uuid-bytes.ts, migration 0036). */
    webhookId: blob("webhook_id").notNull(),
    eventId: blob("event_id").notNull(),
    /** pending, succeeded, failed (gave up), held (webhook failed; resumes when set active). */
    state: text("state").notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error").notNull().default(""),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    legacyId: text("legacy_id"),
  },
  (t) => [
    // Also the delivery log's order (newest event first): no second index per delivery.
    primaryKey({ columns: [t.webhookId, t.eventId] }),
    // The sweeper's "pending and overdue" query. Partial: a delivery that succeeded (nearly all
    // of them) leaves no entry behind (contract §23).
    index("webhook_deliveries_due_idx").on(t.state, t.nextAttemptAt).where(sql`state = 'pending'`),
    uniqueIndex("webhook_deliveries_legacy_idx").on(t.legacyId).where(sql`legacy_id IS NOT NULL`),
    // Retention keeps an event while a delivery of it is still owed (services/retention): the
    // owed ones by event. Partial, so it holds only the few deliveries not yet final.
    index("webhook_deliveries_owed_idx").on(t.eventId).where(sql`state IN ('pending', 'held')`),
  ],
);

/**
 * Messages that exhausted their queue's retries, as the dead-letter consumers received them:
 * what the message was and why it is here, for an operator to look at (and an alert in the log).
 */
export const deadLetters = sqliteTable("dead_letters", {
  id: text("id").primaryKey(),
  queue: text("queue").notNull(),
  /** The message body as JSON (cut at 16 KiB). */
  body: text("body").notNull(),
  reason: text("reason").notNull(),
  createdAt: integer("created_at").notNull(),
});
