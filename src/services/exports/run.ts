import { accountEnv } from "../../db/shards";
/**
 * The fd-exports consumer's work (contract §21): a bounded step at a time, so that an export of
 * any size stays within a Worker invocation's limits and its memory stays flat.
 *
 * A step reads up to EXPORT_PAGES_PER_STEP pages of EXPORT_PAGE_SIZE rows by keyset pagination
 * (the task list's own plan and index ranges), encodes them, and sends every full part of
 * EXPORT_PART_BYTES to an R2 multipart upload (R2 follows S3's UploadPart rules: parts are
 * numbered from 1, every part but the last is at least 5 MiB, and all parts but the last have
 * the same size — so parts are cut at exact byte counts, not at row ends). The bytes past the
 * last full part (less than one part) are kept in R2 under the next step's number.
 *
 * The step then commits its progress — keyset cursor, upload id, part list, row count, carried
 * bytes — in ONE compare-and-set UPDATE on `step`, and queues the next step. What is committed
 * is exactly what the uploaded parts plus the carry hold, so:
 *  - a crash before the commit leaves the previous step's state: the redelivered message redoes
 *    the step (re-uploading the same part numbers, which replaces them) and no row is written
 *    twice;
 *  - two deliveries of one step race to the commit; the loser's commit matches no row, and it
 *    stops there.
 * The last step uploads the rest as the last part and completes the upload (or, for a file
 * smaller than one part, stores it with one `put`).
 */
import { csvRecord } from "../../formats/csv";
import { jsonLine } from "../../formats/jsonl";
import { accountRows } from "../../http/pagination";
import type { RenderCtx } from "../../http/serialize";
import { randomToken } from "../../lib/crypto";
import { settleSeconds } from "../../lib/settle";
import type { ExportMessage } from "../../queues/exports/message";
import { exportFileKey } from "../../s3/keys";
import { MIN_PART_SIZE } from "../../s3/r2-put";
import { JobError, jobPrincipal } from "../auth/job-principal";
import { leaseUntil } from "../jobs/lease";
import { pageStatements } from "../tasks/list";
import { parseJson } from "../tasks/types";
import { type ColumnPlan, cellText, loadRelated, planColumns, rowValues } from "./fields";
import { checkFilters, type ExportRow, exportFileTtlMs } from "./index";

type Cursor = { v: number | null; id: string; back: false };
type Part = { partNumber: number; etag: string };

const setting = (value: string | undefined, fallback: number, min = 1) => {
  const n = Number(value);
  return Number.isInteger(n) && n >= min ? n : fallback;
};

export function exportSettings(env: Env) {
  const vars = env as unknown as Record<string, string | undefined>;
  return {
    pageSize: setting(vars.EXPORT_PAGE_SIZE, 500),
    pagesPerStep: setting(vars.EXPORT_PAGES_PER_STEP, 40),
    // R2 refuses smaller parts (but the last); tests may lower it on a local bucket.
    partBytes: setting(vars.EXPORT_PART_BYTES, MIN_PART_SIZE),
  };
}

const carryKey = (row: ExportRow, step: number) => `exports/${row.id}/carry/${step}`;
const CONTENT_TYPE = { csv: "text/csv; charset=utf-8", jsonl: "application/jsonl; charset=utf-8" };

/** Bytes gathered for the next part: a list of encoded rows, cut at exact part sizes. */
class PartBuffer {
  private chunks: Uint8Array[] = [];
  size = 0;
  push(bytes: Uint8Array) {
    if (!bytes.length) return;
    this.chunks.push(bytes);
    this.size += bytes.length;
  }
  /** The first `n` bytes (n ≤ size), removed from the buffer. */
  take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let off = 0;
    while (off < n) {
      const c = this.chunks[0];
      const need = n - off;
      if (c.length <= need) {
        out.set(c, off);
        off += c.length;
        this.chunks.shift();
      } else {
        out.set(c.subarray(0, need), off);
        this.chunks[0] = c.subarray(need);
        off += need;
      }
    }
    this.size -= n;
    return out;
  }
}

async function loadExport(db: D1Database, id: string) {
  return db.prepare("SELECT * FROM data_exports WHERE id = ?").bind(id).first<ExportRow>();
}

/** One page of rows after `cursor`, in the export's order. */
async function fetchPage(
  db: D1Database,
  row: ExportRow,
  plan: ReturnType<typeof checkFilters>,
  cursor: Cursor | null,
  limit: number,
): Promise<Record<string, unknown>[]> {
  if (row.kind === "contact_addresses") {
    const filters = parseJson<Record<string, string>>(row.filters, {});
    const { where, params } = accountRows(row.account_id, filters.external_id);
    if (cursor) {
      where.push("(created_at, id) > (?, ?)");
      params.push(cursor.v, cursor.id);
    }
    const { results } = await db
      .prepare(`SELECT * FROM contact_addresses WHERE ${where.join(" AND ")} ORDER BY created_at, id LIMIT ?`)
      .bind(...params, limit)
      .all<Record<string, unknown>>();
    return results;
  }
  const rows: Record<string, unknown>[] = [];
  // The task list's statements: one or two index ranges, continuing after the cursor.
  for (const st of pageStatements(plan!, cursor, limit)) {
    const want = limit - rows.length;
    if (want <= 0) break;
    st.params[st.params.length - 1] = want;
    const { results } = await db
      .prepare(st.sql)
      .bind(...st.params)
      .all<Record<string, unknown>>();
    rows.push(...results);
  }
  return rows;
}

function encodeRow(row: ExportRow, cols: ColumnPlan, values: unknown[]): string {
  if (row.format === "jsonl") return jsonLine(Object.fromEntries(cols.names.map((n, i) => [n, values[i]])));
  return csvRecord(values.map(cellText));
}

/** Runs one step; queues the next unless the export is finished (or another delivery won). */
export async function runExportStep(env: Env, msg: ExportMessage): Promise<void> {
  env = await accountEnv(env, msg.accountId);
  const db = env.DB;
  const row = await loadExport(db, msg.exportId);
  if (!row || row.state === "completed" || row.state === "failed") return;
  const { pageSize, pagesPerStep, partBytes } = exportSettings(env);
  const now = Date.now();
  if (row.state === "queued") {
    await db
      .prepare(
        "UPDATE data_exports SET state = 'running', lease_expires_at = ?, updated_at = ? WHERE id = ? AND state = 'queued'",
      )
      .bind(leaseUntil(env, now), now, row.id)
      .run();
  }
  const principal = await jobPrincipal(db, row.account_id, row.created_by);
  const filters = parseJson<Record<string, string>>(row.filters, {});
  const plan = checkFilters(row.kind, filters, principal, row.time_zone, row.created_at, settleSeconds(env));
  const cols = planColumns(row.kind, parseJson<string[]>(row.fields, []));
  const render: RenderCtx = { baseUrl: msg.baseUrl, timeZone: row.time_zone };
  const enc = new TextEncoder();
  const bucket = env.FILES;
  const fileKey = row.file_key ?? exportFileKey(row.id, randomToken(16), row.kind, row.format);

  const buf = new PartBuffer();
  if (row.carry_bytes > 0) {
    const carried = await bucket.get(carryKey(row, row.step));
    if (!carried || carried.size !== row.carry_bytes)
      throw new Error("The carried bytes of the last step are missing.");
    buf.push(new Uint8Array(await carried.arrayBuffer()));
  }
  if (row.step === 0 && row.format === "csv") buf.push(enc.encode(csvRecord(cols.names)));

  const parts = parseJson<Part[]>(row.parts, []);
  let uploadId = row.upload_id;
  let upload: R2MultipartUpload | null = uploadId ? bucket.resumeMultipartUpload(fileKey, uploadId) : null;
  const httpMetadata = {
    contentType: CONTENT_TYPE[row.format],
    contentDisposition: `attachment; filename="${row.kind}-${row.id}.${row.format}"`,
  };
  const sendPart = async (bytes: Uint8Array) => {
    if (!upload) {
      upload = await bucket.createMultipartUpload(fileKey, { httpMetadata });
      uploadId = upload.uploadId;
    }
    const uploaded = await upload.uploadPart(parts.length + 1, bytes);
    parts.push({ partNumber: uploaded.partNumber, etag: uploaded.etag });
  };

  let cursor = parseJson<Cursor | null>(row.cursor, null);
  let written = 0;
  let done = false;
  for (let page = 0; page < pagesPerStep; page++) {
    const rows = await fetchPage(db, row, plan, cursor, pageSize);
    const related = await loadRelated(db, row.account_id, cols, rows);
    for (const r of rows) {
      buf.push(enc.encode(encodeRow(row, cols, rowValues(row.kind, cols, r, related, render))));
      written++;
      while (buf.size >= partBytes) await sendPart(buf.take(partBytes));
    }
    const last = rows[rows.length - 1];
    if (last) {
      const sortKey = row.kind === "tasks" ? plan!.sort : "created_at";
      cursor = { v: (last[sortKey] as number | null) ?? null, id: last.id as string, back: false };
    }
    if (rows.length < pageSize) {
      done = true;
      break;
    }
  }

  const next = row.step + 1;
  // Progress renews the job's lease (services/jobs); a cancelled export (no longer `running`)
  // commits nothing more.
  const cas = (sets: string, values: unknown[]) =>
    db
      .prepare(
        `UPDATE data_exports SET ${sets}, step = ?, lease_expires_at = ?, lease_attempts = 0, updated_at = ?
         WHERE id = ? AND step = ? AND state = 'running'`,
      )
      .bind(...values, next, leaseUntil(env), Date.now(), row.id, row.step)
      .run();

  if (done) {
    if (upload) {
      if (buf.size > 0) await sendPart(buf.take(buf.size));
      await (upload as R2MultipartUpload).complete(parts);
    } else {
      await bucket.put(fileKey, buf.take(buf.size), { httpMetadata });
    }
    const finished = Date.now();
    const res = await cas(
      "state = 'completed', row_count = row_count + ?, file_key = ?, upload_id = ?, parts = ?, cursor = ?, carry_bytes = 0, completed_at = ?, file_expires_at = ?",
      [
        written,
        fileKey,
        uploadId,
        JSON.stringify(parts),
        JSON.stringify(cursor),
        finished,
        finished + exportFileTtlMs(env),
      ],
    );
    if (res.meta.changes) {
      await removeCarries(bucket, row.id);
      return;
    }
    // Another delivery finished first (with this key or its own), or the export was cancelled
    // meanwhile: a file no completed row points at is removed.
    const latest = await loadExport(db, row.id);
    if (latest?.state !== "completed" || latest.file_key !== fileKey) await bucket.delete(fileKey);
    return;
  }
  const carry = buf.take(buf.size);
  if (carry.length) await bucket.put(carryKey(row, next), carry);
  const res = await cas(
    "row_count = row_count + ?, file_key = ?, upload_id = ?, parts = ?, cursor = ?, carry_bytes = ?",
    [written, fileKey, uploadId, JSON.stringify(parts), JSON.stringify(cursor), carry.length],
  );
  if (!res.meta.changes) return; // another delivery committed this step first
  const message: ExportMessage = { ...msg, step: next };
  await env.EXPORTS_QUEUE.send(message);
}

async function removeCarries(bucket: R2Bucket, id: string) {
  const listed = await bucket.list({ prefix: `exports/${id}/carry/` });
  if (listed.objects.length) await bucket.delete(listed.objects.map((o) => o.key));
}

/** Marks an export failed (its upload aborted), from the consumer's last attempt. */
export async function failExport(env: Env, msg: ExportMessage, reason: string) {
  env = await accountEnv(env, msg.accountId);
  const row = await loadExport(env.DB, msg.exportId);
  if (!row || row.state === "completed" || row.state === "failed") return;
  if (row.upload_id && row.file_key) {
    try {
      await env.FILES.resumeMultipartUpload(row.file_key, row.upload_id).abort();
    } catch {
      // Already gone: nothing is billed for it.
    }
  }
  await removeCarries(env.FILES, row.id);
  await env.DB.prepare(
    "UPDATE data_exports SET state = 'failed', error_message = ?, updated_at = ? WHERE id = ? AND state IN ('queued', 'running')",
  )
    .bind(reason.slice(0, 1000), Date.now(), row.id)
    .run();
}

export { JobError };
