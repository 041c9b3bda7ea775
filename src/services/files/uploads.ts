/**
 * File uploads (interface §2.1, §4.1): a record that reserves an object key and carries the
 * signed form a client posts the file with. The storage endpoint marks it uploaded.
 */
import { findByPublicKey, registerPublicKey } from "../../db/shards";
import { type FieldErrors, ValidationError } from "../../http/errors";
import { type Page, paginateByCreation } from "../../http/pagination";
import { uuidv7 } from "../../lib/ids";
import { fileNameProblem, fileUploadKey, MAX_KEY_BYTES } from "../../s3/keys";
import type { Principal } from "../auth/principal";
import type { FileUploadRow } from "./types";

export type FileUploadInput = { file_name: string; file_type: string; source?: string };

/**
 * A media type as RFC 9110 §8.3.1 writes it: `type/subtype` tokens, optional parameters. It
 * is repeated verbatim in the form's `Content-Type` field, which the policy pins exactly.
 */
export const MEDIA_TYPE_RE =
  /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*;\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+=("[^"\r\n]*"|[!#$%&'*+.^_`|~0-9A-Za-z-]+))*$/;

export async function createFileUpload(
  env: Env,
  p: Principal,
  input: FileUploadInput,
  now = Date.now(),
): Promise<FileUploadRow> {
  const db = env.DB;
  const errors: FieldErrors = {};
  const nameProblem = fileNameProblem(input.file_name);
  if (nameProblem) errors.file_name = [nameProblem];
  if (!MEDIA_TYPE_RE.test(input.file_type) || input.file_type.length > 255) {
    errors.file_type = ['Enter a media type such as "image/jpeg".'];
  }
  const id = uuidv7(now);
  const key = fileUploadKey(id, input.file_name);
  if (!nameProblem && new TextEncoder().encode(key).length > MAX_KEY_BYTES) {
    errors.file_name = [`The file name is too long for a storage key (${MAX_KEY_BYTES} bytes).`];
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const row: FileUploadRow = {
    id,
    account_id: p.accountId,
    created_by: p.userId,
    file_name: input.file_name,
    file_type: input.file_type,
    source: input.source ?? "integration",
    key,
    uploaded_at: null,
    size: null,
    etag: null,
    created_at: now,
    updated_at: now,
  };
  await db
    .prepare(
      "INSERT INTO file_uploads (id, account_id, created_by, file_name, file_type, source, key, created_at, updated_at) " +
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(row.id, row.account_id, row.created_by, row.file_name, row.file_type, row.source, row.key, now, now)
    .run();
  // The form's key names no account: its lookup in the directory does (contract §24), so
  // `POST /storage/` reads and marks the upload in the account's database alone.
  await registerPublicKey(env, "upload", key, p.accountId);
  return row;
}

/** Workers see the uploads they made; the other roles see the account's. */
function visibility(p: Principal): { sql: string[]; params: unknown[] } {
  const sql = ["account_id = ?"];
  const params: unknown[] = [p.accountId];
  if (p.role === "worker") {
    sql.push("created_by = ?");
    params.push(p.userId);
  }
  return { sql, params };
}

export async function getFileUpload(db: D1Database, p: Principal, id: string): Promise<FileUploadRow | null> {
  const v = visibility(p);
  return db
    .prepare(`SELECT * FROM file_uploads WHERE id = ? AND ${v.sql.join(" AND ")}`)
    .bind(id, ...v.params)
    .first<FileUploadRow>();
}

export async function listFileUploads(
  db: D1Database,
  p: Principal,
  q: { cursor?: string; page_size?: number },
  url: string,
): Promise<Page<FileUploadRow>> {
  const v = visibility(p);
  return paginateByCreation<FileUploadRow>({
    db,
    select: "SELECT * FROM file_uploads",
    where: v.sql,
    params: v.params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

/**
 * Called by the storage endpoint once an object is stored: the upload whose key it is (if
 * any: a form may name any key the policy allows) records when, how big, and its ETag. A
 * second post of the same form replaces the object, and these with it, as on S3.
 */
export async function markUploaded(db: D1Database, key: string, object: R2Object, now = Date.now()) {
  await db
    .prepare(
      "UPDATE file_uploads SET uploaded_at = ?, size = ?, etag = ?, updated_at = ? WHERE key = ? AND consumed_at IS NULL",
    )
    .bind(object.uploaded.getTime() || now, object.size, object.etag, now, key)
    .run();
}

/**
 * The env of the database that holds the upload with this key (its account's, by the
 * directory's lookup), or null when no database has it.
 */
export async function uploadHome(env: Env, key: string): Promise<Env | null> {
  const found = await findByPublicKey(env, "upload", key, (scoped) =>
    scoped.DB.prepare("SELECT account_id FROM file_uploads WHERE key = ?")
      .bind(key)
      .first<{ account_id: string }>(),
  );
  return found?.env ?? null;
}

/** True when the upload with this key already became a document or signature. */
export async function isConsumedUpload(db: D1Database, key: string): Promise<boolean> {
  const row = await db
    .prepare("SELECT consumed_at FROM file_uploads WHERE key = ?")
    .bind(key)
    .first<{ consumed_at: number | null }>();
  return row?.consumed_at != null;
}
