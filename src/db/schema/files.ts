import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const fileUploads = sqliteTable(
  "file_uploads",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    createdBy: text("created_by"),
    fileName: text("file_name").notNull(),
    fileType: text("file_type").notNull(),
    source: text("source").notNull().default("integration"),
    /** R2 key `fileupload/<id>/<file_name>` (the name keeps its characters, contract §8). */
    key: text("key").notNull(),
    /** Set by the storage endpoint once the body is in R2. */
    uploadedAt: integer("uploaded_at"),
    /**
     * Set when a document or signature is made from this upload: its object is copied and the
     * source deleted, and the storage endpoint refuses the form from then on (a replayed form
     * must not put the file back under the public `fileupload/` key).
     */
    consumedAt: integer("consumed_at"),
    size: integer("size"),
    etag: text("etag"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("file_uploads_account_created_idx").on(t.accountId, t.createdAt, t.id),
    uniqueIndex("file_uploads_key_unique").on(t.key),
  ],
);

/** Documents and signatures share a shape; `kind` tells them apart (one table, one code path). */
export const attachments = sqliteTable(
  "attachments",
  {
    id: text("id").primaryKey(),
    kind: text("kind").$type<"document" | "signature">().notNull(),
    accountId: text("account_id").notNull(),
    taskId: text("task_id"),
    orderId: text("order_id"),
    fileUploadId: text("file_upload_id"),
    externalId: text("external_id"),
    fileName: text("file_name").notNull(),
    key: text("key").notNull(),
    description: text("description").notNull().default(""),
    visibleToWorker: integer("visible_to_worker", { mode: "boolean" }).notNull().default(true),
    visibleToClient: integer("visible_to_client", { mode: "boolean" }).notNull().default(false),
    source: text("source"),
    createdBy: text("created_by"),
    mimetype: text("mimetype"),
    thumbnailKey: text("thumbnail_key"),
    recurrenceId: text("recurrence_id"),
    /** Signatures: who signed (required when the account sets `feature_signer_name`, contract §11). */
    signerName: text("signer_name"),
    s3ResponseHeaders: text("s3_response_headers", { mode: "json" }).notNull().default(sql`'{}'`),
    size: integer("size"),
    etag: text("etag"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("attachments_account_kind_created_idx").on(t.accountId, t.kind, t.createdAt, t.id),
    index("attachments_account_task_idx").on(t.accountId, t.kind, t.taskId),
    index("attachments_account_order_idx").on(t.accountId, t.kind, t.orderId),
    uniqueIndex("attachments_file_upload_unique").on(t.kind, t.fileUploadId),
  ],
);
