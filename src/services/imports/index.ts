/**
 * Imports (contract §21): `POST /imports/` checks the file upload and reads the file's header
 * at once (unknown columns are a 400 before anything is applied), stores the job `queued` and
 * hands it to the fd-imports consumer: first the whole file is staged (./stage.ts: UTF-8 and
 * the row limit checked before any row is applied), then rows are applied in chunks through
 * the API's own services (./apply.ts).
 */

import { accountRow, accountRowsNewestFirst } from "../../db/account-rows";
import { CsvReader, CsvSyntaxError, isBlankRecord } from "../../formats/csv";
import { type FieldErrors, ValidationError } from "../../http/errors";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { parseHyperlink } from "../../http/urls";
import { uuidv7 } from "../../lib/ids";
import type { ImportMessage } from "../../queues/imports/message";
import type { Principal } from "../auth/principal";
import { metafieldKeys } from "../exports";
import { getFileUpload } from "../files/uploads";
import { leaseUntil } from "../jobs/lease";
import { MSG } from "../tasks/input";
import { parseJson } from "../tasks/types";
import { columnsKind, headerProblems, type ImportKind, type RowError } from "./columns";

export type ImportRow = {
  id: string;
  account_id: string;
  kind: ImportKind;
  file_upload_id: string;
  file_key: string;
  dry_run: number;
  columns: string;
  time_zone: string | null;
  state: "queued" | "running" | "completed" | "failed";
  staged: number;
  total_rows: number | null;
  groups: number;
  cursor: number;
  processed_rows: number;
  created: number;
  updated: number;
  failed: number;
  errors: string;
  error_message: string;
  created_by: string | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  lease_expires_at: number | null;
  lease_attempts: number;
  base_url: string | null;
};

export type ImportInput = { kind: ImportKind; file: string; dry_run?: boolean };

/** How much of the file the header may take (it is read at POST time). */
export const HEADER_MAX_BYTES = 64 * 1024;

export function serializeImport(r: RenderCtx, row: ImportRow) {
  return {
    id: row.id,
    url: link(r, "imports", row.id),
    account: link(r, "accounts", row.account_id),
    kind: row.kind,
    file: link(r, "file_uploads", row.file_upload_id),
    dry_run: Boolean(row.dry_run),
    columns: parseJson<string[]>(row.columns, []),
    state: row.state,
    total_rows: row.total_rows,
    processed_rows: row.processed_rows,
    created: row.created,
    updated: row.updated,
    failed: row.failed,
    errors: parseJson<RowError[]>(row.errors, []),
    error_message: row.error_message,
    created_by: link(r, "users", row.created_by),
    created_at: ts(r, row.created_at),
    updated_at: ts(r, row.updated_at),
    completed_at: ts(r, row.completed_at),
  };
}

/**
 * The header row, from the first HEADER_MAX_BYTES of the object (an R2 ranged read), parsed as
 * RFC 4180 (a BOM is dropped). Only the header is judged here: the rest of the file is checked
 * (strict UTF-8, CSV syntax, the row limit) when the consumer stages it, and a problem there
 * fails the import with nothing applied. Throws a 400 on `file` for what cannot be a header.
 */
export async function readHeader(bucket: R2Bucket, key: string): Promise<string[]> {
  const fail = (m: string) => new ValidationError({ file: [m] });
  const head = await bucket.head(key);
  if (!head) throw fail("The file has not been uploaded.");
  // A range of an empty object is not satisfiable (RFC 9110 §14.1.1): say what is wrong instead.
  if (head.size === 0) throw fail("The file is empty: it needs at least a header row.");
  const obj = await bucket.get(key, { range: { offset: 0, length: HEADER_MAX_BYTES } });
  if (!obj) throw fail("The file has not been uploaded.");
  const bytes = new Uint8Array(await obj.arrayBuffer());
  // Not fatal: bytes past the header are not this check's business (nor a character cut by the range).
  const text = new TextDecoder("utf-8", { fatal: false, ignoreBOM: false }).decode(bytes);
  const reader = new CsvReader();
  let header: string[] | undefined;
  try {
    // Character by character, so that the first record comes out before anything after it is read.
    for (let i = 0; i < text.length && !header; i++) header = reader.push(text[i])[0];
    if (!header && bytes.length < HEADER_MAX_BYTES) header = reader.end()[0];
  } catch (err) {
    if (err instanceof CsvSyntaxError) throw fail(`Row ${err.record}: ${err.message}`);
    throw err;
  }
  if (!header || isBlankRecord(header)) {
    throw fail(
      bytes.length >= HEADER_MAX_BYTES
        ? "The header row is longer than 64 KiB."
        : "The file has no header row.",
    );
  }
  if (header.some((h) => h.includes("\uFFFD"))) throw fail("The file is not valid UTF-8 text.");
  return header.map((h) => h.trim());
}

export async function createImport(
  env: Env,
  p: Principal,
  input: ImportInput,
  ctx: { zone: string | null; baseUrl: string },
): Promise<ImportRow> {
  const errors: FieldErrors = {};
  const uploadId = parseHyperlink(input.file, "file_uploads");
  const upload = uploadId ? await getFileUpload(env.DB, p, uploadId) : null;
  if (!uploadId) errors.file = ["Invalid hyperlink - No URL match."];
  else if (!upload) errors.file = [MSG.notExist];
  else if (upload.uploaded_at === null) errors.file = ["The file has not been uploaded."];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const header = await readHeader(env.FILES, upload!.key);
  const keys = await metafieldKeys(env.DB, p.accountId, columnsKind(input.kind));
  const problems = headerProblems(input.kind, header, keys);
  if (problems.length) throw new ValidationError({ file: problems });

  const now = Date.now();
  const row: ImportRow = {
    id: uuidv7(now),
    account_id: p.accountId,
    kind: input.kind,
    file_upload_id: upload!.id,
    file_key: upload!.key,
    dry_run: input.dry_run ? 1 : 0,
    columns: JSON.stringify(header),
    time_zone: ctx.zone,
    state: "queued",
    staged: 0,
    total_rows: null,
    groups: 0,
    cursor: 0,
    processed_rows: 0,
    created: 0,
    updated: 0,
    failed: 0,
    errors: "[]",
    error_message: "",
    created_by: p.userId,
    created_at: now,
    updated_at: now,
    completed_at: null,
    lease_expires_at: leaseUntil(env, now),
    lease_attempts: 0,
    base_url: ctx.baseUrl,
  };
  const cols = Object.keys(row) as (keyof ImportRow)[];
  await env.DB.prepare(
    `INSERT INTO data_imports (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
  )
    .bind(...cols.map((k) => row[k]))
    .run();
  const message: ImportMessage = { importId: row.id, baseUrl: ctx.baseUrl };
  await env.IMPORTS_QUEUE.send(message);
  return row;
}

export async function getImport(db: D1Database, p: Principal, id: string) {
  return accountRow<ImportRow>(db, "data_imports", p.accountId, id);
}

export function listImports(
  db: D1Database,
  p: Principal,
  q: { cursor?: string; page_size?: number },
  url: string,
) {
  return accountRowsNewestFirst<ImportRow>(db, "data_imports", p.accountId, q, url);
}
