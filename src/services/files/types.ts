import type { AttachmentKind } from "../../s3/keys";

export type { AttachmentKind };

/** A `file_uploads` row as D1 returns it. */
export type FileUploadRow = {
  id: string;
  account_id: string;
  created_by: string | null;
  file_name: string;
  file_type: string;
  source: string;
  key: string;
  uploaded_at: number | null;
  size: number | null;
  etag: string | null;
  created_at: number;
  updated_at: number;
};

/** An `attachments` row (documents and signatures, told apart by `kind`). */
export type AttachmentRow = {
  id: string;
  kind: AttachmentKind;
  account_id: string;
  task_id: string | null;
  order_id: string | null;
  file_upload_id: string | null;
  external_id: string | null;
  file_name: string;
  key: string;
  description: string;
  visible_to_worker: number;
  visible_to_client: number;
  source: string | null;
  created_by: string | null;
  mimetype: string | null;
  thumbnail_key: string | null;
  recurrence_id: string | null;
  /** Signatures only: who signed (contract §11). */
  signer_name: string | null;
  /** JSON object of canonical header names to values. */
  s3_response_headers: string;
  size: number | null;
  etag: string | null;
  created_at: number;
  updated_at: number;
};

/** Collection (URL path segment) of each kind. */
export const COLLECTION_OF = { document: "documents", signature: "signatures" } as const;

/**
 * Both kinds, for a statement that wants either: `kind` leads the upload's unique index and
 * follows the account in the others, and SQLite searches an index past its leading columns only
 * when they are bound (no skip-scan without ANALYZE statistics), so naming both kinds turns a
 * scan of the whole index into two searches.
 */
export const EITHER_KIND = "kind IN ('document', 'signature')";
