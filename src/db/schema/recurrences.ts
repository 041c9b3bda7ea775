import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** Recurrences (contract §20): a rule, a local start and a template of a task or an order. */
export const recurrences = sqliteTable(
  "recurrences",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    /** `task` or `order`: what each occurrence creates. */
    kind: text("kind").notNull(),
    /** RFC 5545 RRULE value. */
    rule: text("rule").notNull(),
    /** Local date-times `YYYY-MM-DDTHH:MM:SS`, read in `timezone`. */
    startLocal: text("start_local").notNull(),
    endLocal: text("end_local"),
    timezone: text("timezone").notNull(),
    assigneeId: text("assignee_id"),
    /** The body of POST /tasks/ or POST /orders/, times normalized to UTC. */
    template: text("template", { mode: "json" }).notNull().default(sql`'{}'`),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    /** The first occurrence not yet made (epoch ms), null when none is left: the cron's index. */
    nextOccurrenceAt: integer("next_occurrence_at"),
    createdBy: text("created_by"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("recurrences_account_created_idx").on(t.accountId, t.createdAt, t.id),
    index("recurrences_due_idx").on(t.isActive, t.nextOccurrenceAt),
  ],
);

/**
 * One row per made occurrence: the UNIQUE (recurrence_id, occurrence_at) key is what makes each
 * occurrence exactly once, however many cron runs overlap (src/services/recurrences/sweep.ts).
 */
export const recurrenceOccurrences = sqliteTable(
  "recurrence_occurrences",
  {
    recurrenceId: text("recurrence_id")
      .notNull()
      .references(() => recurrences.id, { onDelete: "cascade" }),
    occurrenceAt: integer("occurrence_at").notNull(),
    /** The task or order made for it. */
    objectId: text("object_id").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("recurrence_occurrences_unique").on(t.recurrenceId, t.occurrenceAt)],
);
