import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Exports (contract §21): one row per `/task_exports/` or `/contact_address_exports/` job. The
 * fd-exports consumer writes the file page by page into an R2 multipart upload; its progress
 * (keyset cursor, upload id, uploaded parts, bytes carried over to the next part) lives here and
 * moves only by a compare-and-set on `step`, so a redelivered message never writes a row twice.
 */
export const dataExports = sqliteTable(
  "data_exports",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    /** `tasks` or `contact_addresses`. */
    kind: text("kind").notNull(),
    format: text("format").notNull(),
    fields: text("fields", { mode: "json" }).notNull(),
    filters: text("filters", { mode: "json" }).notNull().default(sql`'{}'`),
    /** Accept-Timezone of the request: filters are read and timestamps written in it. */
    timeZone: text("time_zone"),
    /** queued → running → completed, or failed. */
    state: text("state").notNull().default("queued"),
    rowCount: integer("row_count").notNull().default(0),
    fileKey: text("file_key"),
    errorMessage: text("error_message").notNull().default(""),
    /** Progress: the number of committed steps, the keyset cursor after the last written row. */
    step: integer("step").notNull().default(0),
    cursor: text("cursor"),
    uploadId: text("upload_id"),
    /** JSON list of `{partNumber, etag}` of the uploaded parts. */
    parts: text("parts", { mode: "json" }).notNull().default(sql`'[]'`),
    /** Encoded bytes past the last full part, kept in R2 for the next step (./run.ts). */
    carryBytes: integer("carry_bytes").notNull().default(0),
    createdBy: text("created_by"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    completedAt: integer("completed_at"),
    /** The job's lease (services/jobs): a step renews it; the cron re-queues the job when it lapses. */
    leaseExpiresAt: integer("lease_expires_at"),
    /** Re-queues since the last step that made progress (bounded, then the job fails). */
    leaseAttempts: integer("lease_attempts").notNull().default(0),
    /** Origin of the links the job writes, for a re-queue made by the cron. */
    baseUrl: text("base_url"),
    /** When the file is deleted (`EXPORT_FILE_TTL_DAYS` after completion); its link never outlives it. */
    fileExpiresAt: integer("file_expires_at"),
  },
  (t) => [
    index("data_exports_account_kind_created_idx").on(t.accountId, t.kind, t.createdAt, t.id),
    // The archive reads an account's rows of a day in id order (retention/sources.ts): without
    // this it sorted all of the account's rows for every batch.
    index("data_exports_account_id_idx").on(t.accountId, t.id),
    index("data_exports_lease_idx").on(t.leaseExpiresAt).where(sql`state IN ('queued', 'running')`),
    index("data_exports_file_expiry_idx").on(t.fileExpiresAt).where(sql`file_key IS NOT NULL`),
  ],
);

/**
 * Imports (contract §21): one row per `POST /imports/`. The consumer first stages the file's
 * rows in `import_rows` (checking UTF-8 and the row limit before anything is applied), then
 * applies them group by group; `cursor` (the next group to apply) and the counters move in one
 * compare-and-set per chunk.
 */
export const dataImports = sqliteTable(
  "data_imports",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    /** `orders`, `tasks` or `contact_addresses`. */
    kind: text("kind").notNull(),
    fileUploadId: text("file_upload_id").notNull(),
    fileKey: text("file_key").notNull(),
    dryRun: integer("dry_run", { mode: "boolean" }).notNull().default(false),
    columns: text("columns", { mode: "json" }).notNull(),
    timeZone: text("time_zone"),
    /** queued → running → completed, or failed. */
    state: text("state").notNull().default("queued"),
    /** Whether every row is staged (then `total_rows` and `groups` are known). */
    staged: integer("staged", { mode: "boolean" }).notNull().default(false),
    totalRows: integer("total_rows"),
    groups: integer("groups").notNull().default(0),
    cursor: integer("cursor").notNull().default(0),
    processedRows: integer("processed_rows").notNull().default(0),
    created: integer("created").notNull().default(0),
    updated: integer("updated").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    errors: text("errors", { mode: "json" }).notNull().default(sql`'[]'`),
    errorMessage: text("error_message").notNull().default(""),
    createdBy: text("created_by"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    completedAt: integer("completed_at"),
    /** The job's lease (services/jobs): a step renews it; the cron re-queues the job when it lapses. */
    leaseExpiresAt: integer("lease_expires_at"),
    /** Re-queues since the last step that made progress (bounded, then the job fails). */
    leaseAttempts: integer("lease_attempts").notNull().default(0),
    /** Origin of the links the job writes, for a re-queue made by the cron. */
    baseUrl: text("base_url"),
  },
  (t) => [
    index("data_imports_account_created_idx").on(t.accountId, t.createdAt, t.id),
    // The archive reads an account's rows of a day in id order (retention/sources.ts): without
    // this it sorted all of the account's rows for every batch.
    index("data_imports_account_id_idx").on(t.accountId, t.id),
    index("data_imports_lease_idx").on(t.leaseExpiresAt).where(sql`state IN ('queued', 'running')`),
  ],
);

/** The staged rows of an import: `row` as a spreadsheet numbers it, `grp` the object it builds. */
export const importRows = sqliteTable(
  "import_rows",
  {
    importId: text("import_id").notNull(),
    row: integer("row").notNull(),
    grp: integer("grp").notNull(),
    /** JSON array of the row's cells, in the header's order. */
    cells: text("cells").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.importId, t.row] }),
    index("import_rows_group_idx").on(t.importId, t.grp, t.row),
  ],
);
