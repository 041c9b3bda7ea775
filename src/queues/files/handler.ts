import { messageEnv } from "../../db/shards";
import { thumbnailKey } from "../../s3/keys";
import { THUMBNAIL_TYPES } from "../../services/files/mimetype";
import { makeThumbnail, THUMBNAIL_MAX_SOURCE_BYTES } from "../../services/files/thumbnails";
import type { AttachmentRow } from "../../services/files/types";
import type { FilesMessage } from "./message";

const log = (level: "info" | "error", msg: string, extra: Record<string, unknown>) =>
  console[level === "error" ? "error" : "log"](JSON.stringify({ level, queue: "files", msg, ...extra }));

/**
 * Make and store one attachment's thumbnail. Idempotent: a row that is gone, already has a
 * thumbnail, or is not a decodable image is acknowledged without work. The row is updated
 * only while it exists and has none (`thumbnail_key IS NULL`); when the row was deleted
 * meanwhile, the thumbnail just written is removed again.
 */
export async function processThumbnail(env: Env, attachmentId: string): Promise<void> {
  // The message names the attachment, not its account: its row is where the account lives.
  env = await messageEnv(env, (db) =>
    db.prepare("SELECT 1 FROM attachments WHERE id = ?").bind(attachmentId).first(),
  );
  const row = await env.DB.prepare("SELECT * FROM attachments WHERE id = ?")
    .bind(attachmentId)
    .first<AttachmentRow>();
  if (!row || row.thumbnail_key || !row.mimetype || !THUMBNAIL_TYPES.has(row.mimetype)) return;
  const object = await env.FILES.get(row.key);
  if (!object) return;
  if (object.size > THUMBNAIL_MAX_SOURCE_BYTES) {
    log("info", "no thumbnail: file too large", { attachmentId, size: object.size });
    object.body.cancel().catch(() => {});
    return;
  }
  const bytes = new Uint8Array(await object.arrayBuffer());
  const outcome = await makeThumbnail(bytes, row.mimetype);
  if (!outcome.ok) {
    log("info", "no thumbnail", { attachmentId, reason: outcome.reason });
    return;
  }
  const key = thumbnailKey(row.kind, row.id, outcome.thumbnail.ext);
  await env.FILES.put(key, outcome.thumbnail.bytes, {
    httpMetadata: { contentType: outcome.thumbnail.contentType },
  });
  const updated = await env.DB.prepare(
    "UPDATE attachments SET thumbnail_key = ?, updated_at = max(updated_at, ?) WHERE id = ? AND thumbnail_key IS NULL",
  )
    .bind(key, Date.now(), row.id)
    .run();
  if (updated.meta.changes === 0) {
    const still = await env.DB.prepare("SELECT thumbnail_key FROM attachments WHERE id = ?")
      .bind(row.id)
      .first<{ thumbnail_key: string | null }>();
    if (!still || still.thumbnail_key !== key) await env.FILES.delete(key);
  }
}

/** The fd-files consumer: acks what is done, retries the rest with exponential back-off. */
export async function handleFilesBatch(batch: MessageBatch<FilesMessage>, env: Env): Promise<void> {
  // One at a time: a thumbnail holds a decoded image in memory; two at once could not fit.
  for (const m of batch.messages) {
    try {
      if (m.body.type === "thumbnail") await processThumbnail(env, m.body.attachmentId);
      else if (m.body.type === "delete") await env.FILES.delete(m.body.keys);
      m.ack();
    } catch (err) {
      log("error", "files message failed", { body: m.body, attempts: m.attempts, error: String(err) });
      m.retry({ delaySeconds: Math.min(300, 2 ** m.attempts) });
    }
  }
}
