import { perDatabase } from "../../db/shards";
/**
 * An export's life after its creation: cancelled, deleted with its file (contract §21), and its
 * file deleted by the cron once `EXPORT_FILE_TTL_DAYS` have passed.
 */
import { nonFieldError } from "../../http/errors";
import type { Principal } from "../auth/principal";
import { CANCELLED } from "../jobs/lease";
import type { ExportKind } from "./fields";
import { getExport } from "./index";
import { failExport } from "./run";

/**
 * `POST /<exports>/{id}/cancel/`: a queued or running export stops at its next step (its partial
 * file is removed) and reads `failed` with `error_message` "Cancelled."; a finished one is 400.
 */
export async function cancelExport(env: Env, p: Principal, kind: ExportKind, id: string) {
  const row = await getExport(env.DB, p, kind, id);
  if (row.state !== "queued" && row.state !== "running")
    throw nonFieldError(`This export is already ${row.state}.`);
  await failExport(
    env,
    { exportId: row.id, accountId: row.account_id, baseUrl: "", step: row.step },
    CANCELLED,
  );
  return getExport(env.DB, p, kind, id);
}

/** `DELETE`: the export and its file (contract §21); one still running is cancelled first. */
export async function deleteExport(env: Env, p: Principal, kind: ExportKind, id: string) {
  const row = await getExport(env.DB, p, kind, id);
  if (row.state === "queued" || row.state === "running")
    await failExport(
      env,
      { exportId: row.id, accountId: row.account_id, baseUrl: "", step: row.step },
      CANCELLED,
    );
  const fresh = await getExport(env.DB, p, kind, id);
  if (fresh.file_key) await env.FILES.delete(fresh.file_key);
  await env.DB.prepare("DELETE FROM data_exports WHERE id = ? AND account_id = ?")
    .bind(id, p.accountId)
    .run();
}

/** The cron: files past `file_expires_at` are deleted from R2 (the row stays, `file` null). */
export const sweepExpiredExportFiles = perDatabase(async function sweepExpiredExportFiles(
  env: Env,
  now = Date.now(),
  limit = 100,
) {
  const { results } = await env.DB.prepare(
    "SELECT id, file_key FROM data_exports WHERE file_key IS NOT NULL AND file_expires_at <= ? ORDER BY file_expires_at LIMIT ?",
  )
    .bind(now, limit)
    .all<{ id: string; file_key: string }>();
  if (!results.length) return 0;
  await env.FILES.delete(results.map((r) => r.file_key));
  await env.DB.batch(
    results.map((r) =>
      env.DB.prepare(
        "UPDATE data_exports SET file_key = NULL, updated_at = ? WHERE id = ? AND file_key = ?",
      ).bind(now, r.id, r.file_key),
    ),
  );
  return results.length;
});
