/**
 * Documents and signatures (interface §2.2, §2.3, §4.3; contract §8): one code path, the kind
 * a parameter. An attachment is made from an uploaded file upload: the object is copied to
 * the attachment's own key, its media type detected from its first bytes on the way, and a
 * thumbnail made later by the files queue for images.
 *
 * Visibility: admins, managers and integration users see the account's attachments; a
 * worker sees those of the tasks assigned to it that are `visible_to_worker`. Changing or
 * deleting one takes a dispatcher role, or being the user who created it.
 */

import { IN_JSON } from "../../db/in-list";
import { WORKER_ATTACHMENT_SQL } from "../../domain/worker-view";
import { type FieldErrors, notFound, permissionDenied, ValidationError } from "../../http/errors";
import { type Page, paginateByCreation } from "../../http/pagination";
import { link } from "../../http/serialize";
import { parseHyperlink, parseHyperlinkList } from "../../http/urls";
import { uuidv7 } from "../../lib/ids";
import { enqueueFiles } from "../../queues/files/message";
import { attachmentFileName, attachmentKey, thumbnailKey } from "../../s3/keys";
import { isDispatcher, type Principal } from "../auth/principal";
import { bulkEventStatements, type EventType, eventStatement } from "../events/outbox";
import { eventRender, serializeTask } from "../tasks/serialize";
import type { TaskRow } from "../tasks/types";
import { detectMimetype, SNIFF_BYTES, THUMBNAIL_TYPES } from "./mimetype";
import { httpMetadataFor, type ResponseHeaders, readResponseHeaders } from "./response-headers";
import { serializeAttachment } from "./serialize";
import {
  type AttachmentKind,
  type AttachmentRow,
  COLLECTION_OF,
  EITHER_KIND,
  type FileUploadRow,
} from "./types";

export const MSG = {
  noMatch: "Invalid hyperlink - No URL match.",
  notExist: "Invalid hyperlink - Object does not exist.",
  notUploaded: "The file has not been uploaded yet: post it with the file upload's s3_signature first.",
  missing: "The uploaded file is no longer in storage.",
  used: (kind: string) => `This file upload is already attached to a ${kind}.`,
  mayNotDelete: "You do not have permission to delete this object.",
};

export type AttachmentInput = {
  account: string;
  task: string;
  file_upload: string;
  order?: string | null;
  description?: string;
  visible_to_worker?: boolean;
  visible_to_client?: boolean;
  external_id?: string | null;
  source?: string | null;
  s3_response_headers?: Record<string, unknown>;
  /** Signatures only. */
  signer_name?: string | null;
};

export type AttachmentPatch = {
  description?: string;
  visible_to_worker?: boolean;
  visible_to_client?: boolean;
};

type Ctx = { baseUrl: string };

/**
 * With the account's `feature_signer_name` (contract §11), a signature names its signer, and
 * when the task lists `signers`, one of them (compared as sent, after trimming).
 */
function signerNameError(p: Principal, task: TaskRow, name: string | null | undefined): string | null {
  if (!p.account.featureSignerName) return null;
  const given = name?.trim() ?? "";
  if (!given) return "This field is required.";
  const signers = parseSigners(task.signers);
  if (signers.length && !signers.includes(given)) {
    return `"${given}" is not one of the task's signers: ${signers.map((s) => `"${s}"`).join(", ")}.`;
  }
  return null;
}

function parseSigners(json: string | null): string[] {
  try {
    const list = JSON.parse(json ?? "[]");
    return Array.isArray(list)
      ? list.map((s) => (typeof s?.name === "string" ? s.name.trim() : "")).filter(Boolean)
      : [];
  } catch {
    return [];
  }
}

function addError(errors: FieldErrors, field: string, message: string) {
  const list = (errors[field] as string[] | undefined) ?? [];
  list.push(message);
  errors[field] = list;
}

/** Event payload: the attachment with its task inline (contract §9), rendered in UTC. */
function eventData(baseUrl: string, row: AttachmentRow, task: TaskRow | null | undefined) {
  const r = eventRender(baseUrl);
  return {
    ...serializeAttachment(r, row),
    task: task ? serializeTask(r, task) : link(r, "tasks", row.task_id),
  };
}

const eventType = (kind: AttachmentKind, verb: "created" | "deleted") => `${kind}.${verb}` as EventType;

// ------------------------------------------------------------------------------------------
// Create
// ------------------------------------------------------------------------------------------

/**
 * Copy the uploaded object to the attachment's key in one pass: the first bytes are read to
 * detect the media type (the R2 object keeps it as its Content-Type), then they and the rest
 * of the source stream go through a FixedLengthStream, because R2's `put` needs the length of
 * a stream up front (and the source's size is known). R2 has no server-side copy in the
 * Workers API, so the bytes do pass through the Worker, never held whole.
 */
async function copyObject(
  bucket: R2Bucket,
  sourceKey: string,
  targetKey: string,
  headers: ResponseHeaders,
): Promise<{ object: R2Object; mimetype: string }> {
  const src = await bucket.get(sourceKey);
  if (!src) throw new ValidationError({ file_upload: [MSG.missing] });
  const reader = src.body.getReader();
  const head: Uint8Array[] = [];
  let got = 0;
  let ended = false;
  while (got < SNIFF_BYTES) {
    const r = await reader.read();
    if (r.done) {
      ended = true;
      break;
    }
    head.push(r.value);
    got += r.value.length;
  }
  const sniff = new Uint8Array(Math.min(got, SNIFF_BYTES));
  let at = 0;
  for (const c of head) {
    if (at >= sniff.length) break;
    const n = Math.min(c.length, sniff.length - at);
    sniff.set(c.subarray(0, n), at);
    at += n;
  }
  const mimetype = await detectMimetype(sniff);

  const fixed = new FixedLengthStream(src.size);
  const pump = (async () => {
    const w = fixed.writable.getWriter();
    for (const c of head) await w.write(c);
    while (!ended) {
      const r = await reader.read();
      if (r.done) break;
      await w.write(r.value);
    }
    await w.close();
  })();
  pump.catch((err) => reader.cancel(err).catch(() => {}));
  const [object] = await Promise.all([
    bucket.put(targetKey, fixed.readable, { httpMetadata: httpMetadataFor(headers, mimetype) }),
    pump,
  ]);
  return { object: object!, mimetype };
}

export async function createAttachment(
  env: Env,
  p: Principal,
  kind: AttachmentKind,
  input: AttachmentInput,
  ctx: Ctx,
): Promise<AttachmentRow> {
  const db = env.DB;
  const errors: FieldErrors = {};
  const accountId = parseHyperlink(input.account, "accounts");
  if (!accountId) addError(errors, "account", MSG.noMatch);
  else if (accountId !== p.accountId) addError(errors, "account", MSG.notExist);
  const taskId = parseHyperlink(input.task, "tasks");
  if (!taskId) addError(errors, "task", MSG.noMatch);
  const uploadId = parseHyperlink(input.file_upload, "file_uploads");
  if (!uploadId) addError(errors, "file_upload", MSG.noMatch);
  let orderId: string | null | undefined;
  if (input.order === null) orderId = null;
  else if (input.order !== undefined) {
    orderId = parseHyperlink(input.order, "orders");
    if (!orderId) addError(errors, "order", MSG.noMatch);
  }
  const rh = readResponseHeaders(input.s3_response_headers);
  if (rh.errors) errors.s3_response_headers = rh.errors;

  // References, read in one round trip. Another account's object is "does not exist" (contract §2).
  const [t, u, used, o] = await db.batch([
    db.prepare("SELECT * FROM tasks WHERE id = ? AND account_id = ?").bind(taskId ?? "", p.accountId),
    db
      .prepare("SELECT * FROM file_uploads WHERE id = ? AND account_id = ?")
      .bind(uploadId ?? "", p.accountId),
    db
      .prepare(`SELECT kind FROM attachments WHERE ${EITHER_KIND} AND file_upload_id = ? LIMIT 1`)
      .bind(uploadId ?? ""),
    db.prepare("SELECT id FROM orders WHERE id = ? AND account_id = ?").bind(orderId ?? "", p.accountId),
  ]);
  const task = t.results[0] as TaskRow | undefined;
  if (taskId && (!task || (p.role === "worker" && task.assignee_id !== p.userId))) {
    addError(errors, "task", MSG.notExist);
  }
  const upload = u.results[0] as FileUploadRow | undefined;
  if (uploadId) {
    if (!upload) addError(errors, "file_upload", MSG.notExist);
    else if (upload.uploaded_at === null) addError(errors, "file_upload", MSG.notUploaded);
    else if (used.results.length) {
      addError(errors, "file_upload", MSG.used((used.results[0] as { kind: string }).kind));
    }
  }
  if (orderId && !o.results.length) addError(errors, "order", MSG.notExist);
  const signerProblem = kind === "signature" && task ? signerNameError(p, task, input.signer_name) : null;
  if (signerProblem) addError(errors, "signer_name", signerProblem);
  if (Object.keys(errors).length || !task || !upload) throw new ValidationError(errors);

  const now = Date.now();
  const id = uuidv7(now);
  const fileName = attachmentFileName(upload.file_name);
  const key = attachmentKey(kind, id, fileName);
  const { object, mimetype } = await copyObject(env.FILES, upload.key, key, rh.headers);

  const row: AttachmentRow = {
    id,
    kind,
    account_id: p.accountId,
    task_id: task.id,
    // Without an explicit order, the task's: listing an order's documents then finds it.
    order_id: orderId !== undefined ? orderId : task.order_id,
    file_upload_id: upload.id,
    external_id: input.external_id ?? null,
    file_name: fileName,
    key,
    description: input.description ?? "",
    visible_to_worker: input.visible_to_worker === false ? 0 : 1,
    visible_to_client: input.visible_to_client ? 1 : 0,
    source: input.source !== undefined ? input.source : upload.source,
    created_by: p.userId,
    mimetype,
    thumbnail_key: null,
    recurrence_id: null,
    signer_name: kind === "signature" ? (input.signer_name ?? null) : null,
    s3_response_headers: JSON.stringify(rh.headers),
    size: object.size,
    etag: object.etag,
    created_at: now,
    updated_at: now,
  };
  const cols = Object.keys(row) as (keyof AttachmentRow)[];
  // One upload, one attachment of either kind: checked by the INSERT itself (D1 runs each
  // statement atomically), not by the read above, so two racing requests cannot both attach it.
  const insert = db
    .prepare(
      `INSERT INTO attachments (${cols.join(", ")}) SELECT ${cols.map(() => "?").join(", ")} ` +
        `WHERE NOT EXISTS (SELECT 1 FROM attachments WHERE ${EITHER_KIND} AND file_upload_id = ?)`,
    )
    .bind(...cols.map((c) => row[c]), upload.id);
  const event = eventStatement(db, {
    accountId: p.accountId,
    type: eventType(kind, "created"),
    objectId: id,
    data: eventData(ctx.baseUrl, row, task),
    now,
    when: { sql: "EXISTS (SELECT 1 FROM attachments WHERE id = ?)", params: [id] },
  });
  const consume = db
    .prepare(
      "UPDATE file_uploads SET consumed_at = ?, updated_at = ? WHERE id = ? AND EXISTS (SELECT 1 FROM attachments WHERE id = ?)",
    )
    .bind(now, now, upload.id, id);
  let inserted: boolean;
  try {
    const [ins] = await db.batch([insert, event, consume]);
    inserted = ins.meta.changes > 0;
  } catch (err) {
    await env.FILES.delete(key).catch(() => {});
    if (/UNIQUE constraint failed/i.test(String(err))) inserted = false;
    else throw err;
  }
  if (!inserted) {
    await env.FILES.delete(key).catch(() => {});
    throw new ValidationError({ file_upload: [MSG.used("document or signature")] });
  }
  // The copy is the file now: the source under the public `fileupload/` prefix goes, so a
  // deleted document leaves nothing readable behind (the form is refused from now on).
  await deleteKeys(env, [upload.key]);
  if (THUMBNAIL_TYPES.has(mimetype)) {
    await enqueueFiles(env.FILES_QUEUE, { type: "thumbnail", attachmentId: id });
  }
  return row;
}

// ------------------------------------------------------------------------------------------
// Read
// ------------------------------------------------------------------------------------------

function visibility(p: Principal, kind: AttachmentKind): { sql: string[]; params: unknown[] } {
  const sql = ["account_id = ?", "kind = ?"];
  const params: unknown[] = [p.accountId, kind];
  if (p.role === "worker") {
    sql.push(
      WORKER_ATTACHMENT_SQL,
      "task_id IN (SELECT id FROM tasks WHERE account_id = ? AND assignee_id = ?)",
    );
    params.push(p.accountId, p.userId);
  }
  return { sql, params };
}

const canModify = (p: Principal, row: AttachmentRow) => isDispatcher(p) || row.created_by === p.userId;

export async function getAttachment(
  db: D1Database,
  p: Principal,
  kind: AttachmentKind,
  id: string,
): Promise<AttachmentRow | null> {
  const v = visibility(p, kind);
  return db
    .prepare(`SELECT * FROM attachments WHERE id = ? AND ${v.sql.join(" AND ")}`)
    .bind(id, ...v.params)
    .first<AttachmentRow>();
}

export async function listAttachments(
  db: D1Database,
  p: Principal,
  kind: AttachmentKind,
  q: { task?: string; task__in?: string; order?: string; cursor?: string; page_size?: number },
  url: string,
): Promise<Page<AttachmentRow>> {
  const v = visibility(p, kind);
  const errors: FieldErrors = {};
  for (const [field, collection] of [
    ["task", "tasks"],
    ["order", "orders"],
  ] as const) {
    const value = q[field];
    if (value === undefined) continue;
    const id = parseHyperlink(value, collection);
    if (!id) addError(errors, field, MSG.noMatch);
    else {
      v.sql.push(`${field}_id = ?`);
      v.params.push(id);
    }
  }
  if (q.task__in !== undefined) {
    const list = parseHyperlinkList(q.task__in, "tasks");
    if ("error" in list) addError(errors, "task__in", list.error);
    else {
      v.sql.push(IN_JSON("task_id"));
      v.params.push(JSON.stringify(list.ids));
    }
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return paginateByCreation<AttachmentRow>({
    db,
    select: "SELECT * FROM attachments",
    where: v.sql,
    params: v.params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

// ------------------------------------------------------------------------------------------
// Update
// ------------------------------------------------------------------------------------------

export async function updateAttachment(
  db: D1Database,
  p: Principal,
  kind: AttachmentKind,
  id: string,
  patch: AttachmentPatch,
): Promise<AttachmentRow> {
  const row = await getAttachment(db, p, kind, id);
  if (!row) throw notFound();
  if (!canModify(p, row)) throw permissionDenied();
  const sets: string[] = [];
  const params: unknown[] = [];
  if (patch.description !== undefined) {
    sets.push("description = ?");
    params.push(patch.description);
  }
  if (patch.visible_to_worker !== undefined) {
    sets.push("visible_to_worker = ?");
    params.push(patch.visible_to_worker ? 1 : 0);
  }
  if (patch.visible_to_client !== undefined) {
    sets.push("visible_to_client = ?");
    params.push(patch.visible_to_client ? 1 : 0);
  }
  if (!sets.length) return row;
  sets.push("updated_at = ?");
  params.push(Math.max(Date.now(), row.updated_at));
  const updated = await db
    .prepare(
      `UPDATE attachments SET ${sets.join(", ")} WHERE id = ? AND account_id = ? AND kind = ? RETURNING *`,
    )
    .bind(...params, id, p.accountId, kind)
    .first<AttachmentRow>();
  if (!updated) throw notFound();
  return updated;
}

// ------------------------------------------------------------------------------------------
// Delete
// ------------------------------------------------------------------------------------------

/**
 * Delete rows and their objects. D1 first, in one batch with the events; each event is
 * written only if its row still exists at that point of the batch, so a concurrent delete
 * of the same row reports it once. Then R2: the object and both possible thumbnail keys (a
 * thumbnail made while the row was being deleted is covered too; the queue handler also
 * removes a thumbnail whose row is gone). If R2 fails, the keys go to the files queue.
 */
async function removeAttachments(
  env: Env,
  accountId: string,
  kind: AttachmentKind,
  rows: AttachmentRow[],
  ctx: Ctx,
) {
  if (!rows.length) return;
  const db = env.DB;
  const taskIds = [...new Set(rows.map((r) => r.task_id).filter((x): x is string => !!x))];
  const { results: tasks } = await db
    .prepare("SELECT * FROM tasks WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))")
    .bind(accountId, JSON.stringify(taskIds))
    .all<TaskRow>();
  const taskById = new Map(tasks.map((t) => [t.id, t]));
  const now = Date.now();
  const type = eventType(kind, "deleted");
  const statements: D1PreparedStatement[] = bulkEventStatements(
    db,
    accountId,
    rows.map((r) => ({
      type,
      objectId: r.id,
      data: eventData(ctx.baseUrl, r, taskById.get(r.task_id ?? "")),
    })),
    { now, onlyIfExistsIn: "attachments" },
  );
  statements.push(
    db
      .prepare(
        "DELETE FROM attachments WHERE account_id = ? AND kind = ? AND id IN (SELECT value FROM json_each(?))",
      )
      .bind(accountId, kind, JSON.stringify(rows.map((r) => r.id))),
  );
  await db.batch(statements);

  // Source uploads too: attachments made before sources were deleted at copy time kept theirs.
  const uploadIds = rows.map((r) => r.file_upload_id).filter((x): x is string => !!x);
  const { results: sources } = uploadIds.length
    ? await db
        .prepare(
          "SELECT key FROM file_uploads WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))",
        )
        .bind(accountId, JSON.stringify(uploadIds))
        .all<{ key: string }>()
    : { results: [] as { key: string }[] };
  const keys = [
    ...rows.flatMap((r) => [r.key, thumbnailKey(kind, r.id, "png"), thumbnailKey(kind, r.id, "jpg")]),
    ...sources.map((s) => s.key),
  ];
  await deleteKeys(env, keys);
}

/** Deletes R2 keys; a failed delete is queued to the files queue and retried there. */
async function deleteKeys(env: Env, keys: string[]) {
  // R2's delete takes at most 1000 keys per call.
  for (let i = 0; i < keys.length; i += 1000) {
    const chunk = keys.slice(i, i + 1000);
    try {
      await env.FILES.delete(chunk);
    } catch (err) {
      console.error(JSON.stringify({ level: "error", msg: "R2 delete failed, queued", error: String(err) }));
      await enqueueFiles(env.FILES_QUEUE, { type: "delete", keys: chunk });
    }
  }
}

export async function deleteAttachment(env: Env, p: Principal, kind: AttachmentKind, id: string, ctx: Ctx) {
  const row = await getAttachment(env.DB, p, kind, id);
  if (!row) throw notFound();
  if (!canModify(p, row)) throw permissionDenied();
  await removeAttachments(env, p.accountId, kind, [row], ctx);
}

/**
 * `POST /<kind>s/batch_delete/` `{"ids": [...]}`: all or nothing. Every id must name an
 * attachment of this kind that the caller sees and may delete; otherwise 400 with the
 * offending positions (`{"ids": {"<index>": ["..."]}}`) and nothing is deleted.
 */
export async function batchDeleteAttachments(
  env: Env,
  p: Principal,
  kind: AttachmentKind,
  ids: string[],
  ctx: Ctx,
): Promise<number> {
  const errors: FieldErrors = {};
  const parsed = ids.map((value, i) => {
    const id = parseHyperlink(value, COLLECTION_OF[kind]);
    if (!id) errors[String(i)] = [MSG.noMatch];
    return id;
  });
  if (Object.keys(errors).length) throw new ValidationError({ ids: errors });
  const unique = [...new Set(parsed as string[])];
  const v = visibility(p, kind);
  const { results } = await env.DB.prepare(
    `SELECT * FROM attachments WHERE ${v.sql.join(" AND ")} AND id IN (SELECT value FROM json_each(?))`,
  )
    .bind(...v.params, JSON.stringify(unique))
    .all<AttachmentRow>();
  const byId = new Map(results.map((r) => [r.id, r]));
  parsed.forEach((id, i) => {
    const row = byId.get(id as string);
    if (!row) errors[String(i)] = [MSG.notExist];
    else if (!canModify(p, row)) errors[String(i)] = [MSG.mayNotDelete];
  });
  if (Object.keys(errors).length) throw new ValidationError({ ids: errors });
  await removeAttachments(env, p.accountId, kind, results, ctx);
  return results.length;
}
