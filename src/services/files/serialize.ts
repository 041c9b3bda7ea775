import { link, type RenderCtx, ts } from "../../http/serialize";
import { STORAGE_PREFIX } from "../../http/urls";
import { fileUrl } from "../../s3/keys";
import { createPostForm } from "../../s3/post-policy";
import { type StorageSettings, UPLOAD_POLICY_SECONDS } from "./settings";
import { type AttachmentRow, COLLECTION_OF, type FileUploadRow } from "./types";

/** `{upload_url}`: the storage endpoint this Worker serves in front of R2 (contract §8). */
export const uploadUrl = (baseUrl: string) => `${baseUrl}${STORAGE_PREFIX}/`;

/**
 * The FileUpload of interface §2.1. `s3_signature` is the form issued at creation: it is
 * signed again from the stored creation time, which yields the same policy and signature
 * byte for byte (SigV4 is deterministic), so it expires one hour after `created_at` however
 * often it is read. Beyond the interface: `file_name`, `file_type`, and `uploaded_at` (null
 * until the storage endpoint has stored the file).
 */
export async function serializeFileUpload(r: RenderCtx, row: FileUploadRow, s: StorageSettings) {
  const form = await createPostForm({
    accessKeyId: s.accessKeyId,
    secretAccessKey: s.secretAccessKey,
    region: s.region,
    bucket: s.bucket,
    key: row.key,
    contentType: row.file_type,
    acl: "public-read",
    maxBytes: s.maxBytes,
    expiresInSeconds: UPLOAD_POLICY_SECONDS,
    now: new Date(row.created_at),
  });
  return {
    id: row.id,
    url: link(r, "file_uploads", row.id),
    file: fileUrl(r.baseUrl, row.key),
    file_name: row.file_name,
    file_type: row.file_type,
    s3_signature: { url: uploadUrl(r.baseUrl), fields: form.fields },
    created_by: link(r, "users", row.created_by),
    source: row.source,
    uploaded_at: ts(r, row.uploaded_at),
    created_at: ts(r, row.created_at),
    updated_at: ts(r, row.updated_at),
  };
}

/** A Document (interface §2.2) or Signature (§2.3): one shape. `s3_response_headers` is write-only. */
export function serializeAttachment(r: RenderCtx, row: AttachmentRow) {
  return {
    id: row.id,
    url: link(r, COLLECTION_OF[row.kind], row.id),
    account: link(r, "accounts", row.account_id),
    task: link(r, "tasks", row.task_id),
    order: link(r, "orders", row.order_id),
    file_upload: link(r, "file_uploads", row.file_upload_id),
    external_id: row.external_id,
    file: fileUrl(r.baseUrl, row.key),
    file_name: row.file_name,
    description: row.description,
    visible_to_worker: !!row.visible_to_worker,
    visible_to_client: !!row.visible_to_client,
    source: row.source,
    created_by: link(r, "users", row.created_by),
    mimetype: row.mimetype,
    thumbnail: row.thumbnail_key ? fileUrl(r.baseUrl, row.thumbnail_key) : null,
    recurrence: link(r, "recurrences", row.recurrence_id),
    ...(row.kind === "signature" ? { signer_name: row.signer_name } : {}),
    created_at: ts(r, row.created_at),
    updated_at: ts(r, row.updated_at),
  };
}

export type SerializedAttachment = ReturnType<typeof serializeAttachment>;
