/**
 * Proof of delivery (contract §19): what was done at a completed or failed task, for the
 * recipient and the dispatcher: the task, its contact and address, when and where it was
 * finished, its documents' images and signatures (with signer names), its history, its
 * order's reference and its description, each shown or not by the `pod_show_*` options (the
 * account's, overridden by the request's).
 */

import { uuidBytes, uuidText } from "../../db/uuid-bytes";
import { LOCALES, type Locale } from "../../domain/locales";
import { negotiateLanguage } from "../../domain/tracker";
import { WORKER_ATTACHMENT_SQL } from "../../domain/worker-view";
import { fieldError, nonFieldError } from "../../http/errors";
import { parseHyperlink } from "../../http/urls";
import type { PodData, PodImage } from "../../render/pod";
import { fileUrl } from "../../s3/keys";
import { isDispatcher, type Principal } from "../auth/principal";
import { imageInfo } from "../files/image-info";
import { THUMBNAIL_MAX_PIXELS } from "../files/thumbnails";
import { getTask } from "../tasks";
import { addressOf, contactOf, parseJson } from "../tasks/types";

export const POD_OPTIONS = [
  "pod_show_images",
  "pod_show_signatures",
  "pod_show_task_events",
  "pod_show_task_event_creators",
  "pod_show_reference",
  "pod_show_description",
] as const;
export type PodOption = (typeof POD_OPTIONS)[number];
export type PodOptions = Record<PodOption, boolean>;

/**
 * The language of a POD: the request's Accept-Language when it names one of the 12 locales, else
 * `fallback` (an e-mail's template language), else the account's `language`.
 */
export type PodLanguage = { acceptLanguage?: string | null; fallback?: Locale };

/** The task's proof-of-delivery data, or 400 when the task is not finished. */
export async function podData(
  env: Env,
  p: Principal,
  taskId: string,
  overrides: Partial<PodOptions>,
  baseUrl: string,
  language: PodLanguage = {},
): Promise<PodData> {
  const task = await getTask(env.DB, p, taskId);
  if (task.state !== "completed" && task.state !== "failed") {
    throw nonFieldError(
      `A proof of delivery is for a completed or failed task; this one is "${task.state}".`,
    );
  }
  const db = env.DB;
  const [account, order, files, commands] = await db.batch([
    db
      .prepare(`SELECT timezone, language, ${POD_OPTIONS.join(", ")} FROM accounts WHERE id = ?`)
      .bind(p.accountId),
    db
      .prepare("SELECT reference FROM orders WHERE id = ? AND account_id = ?")
      .bind(task.order_id ?? "", p.accountId),
    db
      .prepare(
        `SELECT kind, key, thumbnail_key, file_name, mimetype, description, signer_name FROM attachments WHERE account_id = ? AND task_id = ? AND (? OR ${WORKER_ATTACHMENT_SQL}) ORDER BY created_at, id`,
      )
      // A worker's proof of delivery shows what the worker may see of the task, nothing else.
      .bind(p.accountId, task.id, isDispatcher(p) ? 1 : 0),
    db
      .prepare(
        `SELECT c.action, c.time, c.location, c.notes, u.name AS user_name
         FROM task_commands c LEFT JOIN users u ON u.id = ${uuidText("c.user_id")}
         WHERE c.account_id = ${uuidBytes()} AND c.task_id = ${uuidBytes()} AND c.state = 'accepted' ORDER BY c.time, c.id`,
      )
      .bind(p.accountId, task.id),
  ]);
  const acc = account.results[0] as Record<string, unknown> & { timezone: string; language: Locale };
  const options = Object.fromEntries(
    POD_OPTIONS.map((o) => [o, overrides[o] ?? Boolean(acc[o])]),
  ) as PodOptions;
  type FileRow = {
    kind: string;
    key: string;
    thumbnail_key: string | null;
    file_name: string;
    mimetype: string | null;
    description: string;
    signer_name: string | null;
  };
  const rows = files.results as FileRow[];
  // Thumbnails where there are (a 200 px image is what a page needs); the original otherwise.
  const image = (f: FileRow): PodImage => {
    const key = f.thumbnail_key ?? f.key;
    return {
      url: fileUrl(baseUrl, key),
      key,
      fileName: f.file_name,
      mimetype: f.thumbnail_key ? null : f.mimetype,
      description: f.description,
    };
  };
  const history = commands.results as {
    action: string;
    time: number;
    location: string | null;
    notes: string;
    user_name: string | null;
  }[];
  const finishing = task.state === "completed" ? "complete" : "fail";
  const finish = [...history].reverse().find((c) => c.action === finishing);
  const point =
    parseJson<{ coordinates?: [number, number] } | null>(finish?.location, null)?.coordinates ?? null;
  const address = addressOf(task);
  const contact = contactOf(task);
  return {
    language: negotiateLanguage(language.acceptLanguage, LOCALES, language.fallback ?? acc.language ?? "en"),
    timeZone: acc.timezone || "UTC",
    task: {
      id: task.id,
      state: task.state,
      category: task.category,
      address: address.formatted_address || address.raw_address,
      contactName: contact.name,
      phones: contact.phones,
    },
    finished: { at: finish?.time ?? task.updated_at, location: point, notes: finish?.notes ?? "" },
    description: options.pod_show_description ? task.description : null,
    reference: options.pod_show_reference
      ? ((order.results[0] as { reference?: string } | undefined)?.reference ?? "")
      : null,
    images: options.pod_show_images
      ? rows
          .filter((f) => f.kind === "document" && (f.thumbnail_key || f.mimetype?.startsWith("image/")))
          .map(image)
      : null,
    signatures: options.pod_show_signatures
      ? rows.filter((f) => f.kind === "signature").map((f) => ({ ...image(f), signer: f.signer_name }))
      : null,
    events: options.pod_show_task_events
      ? history.map((c) => ({
          at: c.time,
          action: c.action,
          by: options.pod_show_task_event_creators ? c.user_name : null,
        }))
      : null,
  };
}

/**
 * What a POD PDF may decode, decided from the file's size and its header alone, before any
 * pixel is read (a 62 KB PNG can declare 8000 × 8000 pixels: 256 MB decoded, more than a
 * Worker's 128 MB). Thumbnails (200 px) are what a POD embeds; an original (an image whose
 * thumbnail was skipped) only within these budgets, else it is named instead of drawn:
 * - PNG is decoded and re-encoded by the PDF writer: at most POD_PNG_MAX_PIXELS (2048 × 2048);
 * - JPEG is embedded as it is (its DCT data copied, nothing decoded): at most
 *   THUMBNAIL_MAX_PIXELS, the thumbnailer's own budget (4096 × 3072);
 * - any file: at most POD_IMAGE_MAX_BYTES.
 */
export const POD_PNG_MAX_PIXELS = 2048 * 2048;
export const POD_IMAGE_MAX_BYTES = 10 * 1024 * 1024;

/** The bytes of a POD image from R2, or null when it is missing or past the budgets above. */
export function podImageLoader(files: R2Bucket) {
  return async (key: string): Promise<Uint8Array | null> => {
    const object = await files.get(key);
    if (!object) return null;
    if (object.size > POD_IMAGE_MAX_BYTES) {
      await object.body.cancel();
      return null;
    }
    const bytes = new Uint8Array(await object.arrayBuffer());
    const type = bytes[0] === 0x89 && bytes[1] === 0x50 ? "image/png" : "image/jpeg";
    const info = imageInfo(bytes, type);
    if (!info) return null;
    const budget = type === "image/png" ? POD_PNG_MAX_PIXELS : THUMBNAIL_MAX_PIXELS;
    return info.width * info.height <= budget ? bytes : null;
  };
}

/**
 * The POD options a notification template sets (its non-null ones), for `?template=`
 * (contract §19); the rest stay the account's. Another account's template, or none: 400.
 */
export async function templatePodOptions(db: D1Database, p: Principal, template: string) {
  const id = parseHyperlink(template, "notification_templates");
  if (!id) throw fieldError("template", "Invalid hyperlink - No URL match.");
  const row = id
    ? await db
        .prepare(
          `SELECT ${POD_OPTIONS.join(", ")} FROM notification_templates WHERE id = ? AND account_id = ?`,
        )
        .bind(id, p.accountId)
        .first<Record<PodOption, number | null>>()
    : null;
  if (!row) throw fieldError("template", "Notification template does not exist.");
  const out: Partial<PodOptions> = {};
  for (const o of POD_OPTIONS) if (row[o] !== null) out[o] = Boolean(row[o]);
  return out;
}
