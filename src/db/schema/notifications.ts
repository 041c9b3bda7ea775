import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Notification templates (contract §18): a message sent to a task's contact when the task
 * reaches an event. `pod_show_*` null means "the account's value at the time of sending".
 */
export const notificationTemplates = sqliteTable(
  "notification_templates",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    event: text("event").notNull(),
    channel: text("channel").notNull(),
    language: text("language").notNull(),
    subject: text("subject").notNull().default(""),
    body: text("body").notNull(),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    podShowImages: integer("pod_show_images", { mode: "boolean" }),
    podShowSignatures: integer("pod_show_signatures", { mode: "boolean" }),
    podShowTaskEvents: integer("pod_show_task_events", { mode: "boolean" }),
    podShowTaskEventCreators: integer("pod_show_task_event_creators", { mode: "boolean" }),
    podShowReference: integer("pod_show_reference", { mode: "boolean" }),
    podShowDescription: integer("pod_show_description", { mode: "boolean" }),
    createdBy: text("created_by"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("notification_templates_account_created_idx").on(t.accountId, t.createdAt, t.id),
    // The trigger that plans sends looks templates up by account and event.
    index("notification_templates_event_idx").on(t.accountId, t.event, t.isActive),
  ],
);

/**
 * One message a template owes one recipient for one task and event. Rows are planned by
 * triggers on `tasks` (migration 0016) in the statement that moves the task, so no write path
 * can forget them; the unique key is what makes a message go out once per task, event,
 * template and recipient, whatever the queue redelivers. `state`: pending → sending → sent
 * (or failed); `sms_id` is the SMS an `sms` send handed to the fd-sms pipeline.
 */
export const notificationSends = sqliteTable(
  "notification_sends",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    taskId: text("task_id").notNull(),
    event: text("event").notNull(),
    templateId: text("template_id").notNull(),
    channel: text("channel").notNull(),
    recipient: text("recipient").notNull(),
    state: text("state").notNull().default("pending"),
    smsId: text("sms_id"),
    errorMessage: text("error_message").notNull().default(""),
    attempts: integer("attempts").notNull().default(0),
    /** When the relay last queued it; the fence against a lost or duplicated queue message. */
    enqueuedAt: integer("enqueued_at"),
    sentAt: integer("sent_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("notification_sends_once_idx").on(t.taskId, t.event, t.templateId, t.recipient),
    index("notification_sends_pending_idx").on(t.state, t.enqueuedAt),
    index("notification_sends_task_idx").on(t.accountId, t.taskId, t.createdAt),
  ],
);
