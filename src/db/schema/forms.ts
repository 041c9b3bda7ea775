import { sql } from "drizzle-orm";
import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** Forms dispatchers design and workers fill in on a task (contract §15). */
export const forms = sqliteTable(
  "forms",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("forms_account_created_idx").on(t.accountId, t.createdAt, t.id)],
);

export const formFields = sqliteTable(
  "form_fields",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    formId: text("form_id").notNull(),
    key: text("key").notNull(),
    label: text("label").notNull().default(""),
    fieldType: text("field_type").notNull(),
    choices: text("choices", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    /** JSON of the default value (a value of the field's type), or null. */
    defaultValue: text("default_value", { mode: "json" }),
    required: integer("required", { mode: "boolean" }).notNull().default(false),
    position: real("position").notNull().default(0),
    visibleToWorker: integer("visible_to_worker", { mode: "boolean" }).notNull().default(true),
    collapsed: integer("collapsed", { mode: "boolean" }).notNull().default(false),
    layout: text("layout").notNull().default("list"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    // One key per form, enforced by the INSERT itself (two racing creates cannot both win).
    uniqueIndex("form_fields_form_key_unique").on(t.formId, t.key),
    index("form_fields_account_created_idx").on(t.accountId, t.createdAt, t.id),
  ],
);

export const formResponses = sqliteTable(
  "form_responses",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    /** Kept when the form is deleted: a completed response reads from its snapshot. */
    formId: text("form_id").notNull(),
    taskId: text("task_id"),
    data: text("data", { mode: "json" }).notNull().default(sql`'{}'`),
    state: text("state").$type<"draft" | "completed">().notNull().default("draft"),
    completedAt: integer("completed_at"),
    completedBy: text("completed_by"),
    /** The form and its fields when the response was completed (null until then). */
    schemaSnapshot: text("schema_snapshot", { mode: "json" }),
    createdBy: text("created_by"),
    /** Bumped by every write: `complete` checks what it read is what it moves (compare-and-set). */
    version: integer("version").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("form_responses_account_created_idx").on(t.accountId, t.createdAt, t.id),
    index("form_responses_account_task_idx").on(t.accountId, t.taskId),
    index("form_responses_form_idx").on(t.formId, t.state),
  ],
);
