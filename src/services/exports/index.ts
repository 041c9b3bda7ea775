/**
 * Exports (contract §21): `POST /task_exports/` and `/contact_address_exports/` check the
 * columns and filters, store the job `queued` and hand it to the fd-exports consumer, which
 * writes the file (./run.ts). The creator's view applies: the same filters, validated the same
 * way as `GET /tasks/`, run again by the consumer with the request's time zone.
 */
import { type FieldErrors, notFound, ValidationError } from "../../http/errors";
import { paginateByCreation } from "../../http/pagination";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { parseHyperlink } from "../../http/urls";
import { uuidv7 } from "../../lib/ids";
import { settleSeconds } from "../../lib/settle";
import type { ExportMessage } from "../../queues/exports/message";
import { signLink } from "../../s3/signed-links";
import { TaskListQuery, type TaskListQueryInput } from "../../schemas/tasks";
import type { Principal } from "../auth/principal";
import { leaseUntil } from "../jobs/lease";
import { MSG } from "../tasks/input";
import { planTaskList } from "../tasks/list";
import { parseJson } from "../tasks/types";
import { defaultFields, type ExportKind, type MetafieldKeys, unknownFields } from "./fields";

export type ExportFormat = "csv" | "jsonl";

export type ExportRow = {
  id: string;
  account_id: string;
  kind: ExportKind;
  format: ExportFormat;
  fields: string;
  filters: string;
  time_zone: string | null;
  state: "queued" | "running" | "completed" | "failed";
  row_count: number;
  file_key: string | null;
  error_message: string;
  step: number;
  cursor: string | null;
  upload_id: string | null;
  parts: string;
  carry_bytes: number;
  created_by: string | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  lease_expires_at: number | null;
  lease_attempts: number;
  base_url: string | null;
  file_expires_at: number | null;
};

export type ExportInput = {
  account?: string | null;
  fields?: string[];
  filters?: Record<string, unknown>;
  format?: ExportFormat;
};

/** The collection each kind's exports are listed under (their URLs). */
export const EXPORT_COLLECTION = {
  tasks: "task_exports",
  contact_addresses: "contact_address_exports",
} as const;

/** The task list's parameters that make no sense in a file: paging and sideloading. */
const NOT_FILTERS = ["cursor", "page_size", "expand"];
/** The contact address list's filters (GET /contact_addresses/). */
const CONTACT_ADDRESS_FILTERS = ["external_id"];

/** Days a finished export's file is kept (`EXPORT_FILE_TTL_DAYS`, contract §21: 7). */
export function exportFileTtlMs(env: Env) {
  const n = Number((env as unknown as Record<string, string | undefined>).EXPORT_FILE_TTL_DAYS);
  return (Number.isFinite(n) && n > 0 ? n : 7) * 86_400_000;
}

/**
 * The export's `file`: a short-lived signed link (s3/signed-links.ts) while the file is kept,
 * null before completion and after the file expired. A fresh link comes with every read.
 */
export async function exportFileLink(env: Env, baseUrl: string, row: ExportRow, now = Date.now()) {
  if (row.state !== "completed" || !row.file_key) return null;
  if (row.file_expires_at !== null && row.file_expires_at <= now) return null;
  return (await signLink(env, baseUrl, row.file_key, row.file_expires_at, now)).url;
}

/** The Export as answered (with its `file` link signed now). */
export async function serializeExport(env: Env, r: RenderCtx, row: ExportRow) {
  const file = await exportFileLink(env, r.baseUrl, row);
  return {
    id: row.id,
    url: link(r, EXPORT_COLLECTION[row.kind], row.id),
    account: link(r, "accounts", row.account_id),
    format: row.format,
    fields: parseJson<string[]>(row.fields, []),
    filters: parseJson<Record<string, string>>(row.filters, {}),
    state: row.state,
    row_count: row.row_count,
    file,
    file_expires_at: ts(r, row.state === "completed" ? row.file_expires_at : null),
    error_message: row.error_message,
    created_by: link(r, "users", row.created_by),
    created_at: ts(r, row.created_at),
    updated_at: ts(r, row.updated_at),
    completed_at: ts(r, row.completed_at),
  };
}

/** Metafield keys the columns of a kind may name (contract §12 targets). */
export async function metafieldKeys(
  db: D1Database,
  accountId: string,
  kind: ExportKind,
): Promise<MetafieldKeys> {
  const { results } = await db
    .prepare(
      "SELECT key, applies_to FROM metafields WHERE account_id = ? AND applies_to IN (?, 'orders') ORDER BY created_at, id",
    )
    .bind(accountId, kind)
    .all<{ key: string; applies_to: string }>();
  return {
    own: results.filter((m) => m.applies_to === kind).map((m) => m.key),
    order: kind === "tasks" ? results.filter((m) => m.applies_to === "orders").map((m) => m.key) : [],
  };
}

/**
 * Query parameters arrive as text; a JSON body may send numbers and booleans for them, and the
 * metafield filters as the object a client's `metafields` deepObject parameter is
 * (`{"metafields": {"door_code": "4711"}}`), kept as `metafields__door_code`.
 */
function filterText(errors: FieldErrors, filters: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const bad: FieldErrors = {};
  const scalar = (v: unknown) =>
    typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : null;
  for (const [k, v] of Object.entries(filters)) {
    if (k === "metafields" && v !== null && typeof v === "object" && !Array.isArray(v)) {
      for (const [key, value] of Object.entries(v)) {
        const text = scalar(value);
        if (text === null) bad[`metafields[${key}]`] = ["Must be a string, number or boolean."];
        else out[`metafields__${key}`] = text;
      }
      continue;
    }
    const text = scalar(v);
    if (text !== null) out[k] = text;
    else bad[k] = ["Must be a string, number or boolean."];
  }
  if (Object.keys(bad).length) errors.filters = bad;
  return out;
}

/** The filters as the consumer will run them; throws the 400 naming every bad one. */
export function checkFilters(
  kind: ExportKind,
  filters: Record<string, string>,
  p: Principal,
  zone: string | null,
  now: number,
  settle: number,
) {
  const unknown = Object.keys(filters).filter((k) =>
    kind === "contact_addresses" ? !CONTACT_ADDRESS_FILTERS.includes(k) : NOT_FILTERS.includes(k),
  );
  const parsed = kind === "tasks" ? TaskListQuery.safeParse(filters) : null;
  if (parsed && !parsed.success) {
    for (const issue of parsed.error.issues) unknown.push(String(issue.path[0]));
  }
  if (unknown.length) {
    throw new ValidationError({ filters: Object.fromEntries(unknown.map((k) => [k, ["Unknown filter."]])) });
  }
  if (!parsed?.success) return null;
  try {
    // `updated_at_delay_latest` leaves out what was updated within the settle delay before the
    // export was made (`now` is its creation time, in every step), as the list would have then.
    return planTaskList(parsed.data as TaskListQueryInput, {
      principal: p,
      zone,
      settleSeconds: settle,
      now,
    });
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError({ filters: err.body as FieldErrors });
    throw err;
  }
}

export async function createExport(
  env: Env,
  p: Principal,
  kind: ExportKind,
  input: ExportInput,
  ctx: { zone: string | null; baseUrl: string },
): Promise<ExportRow> {
  const errors: FieldErrors = {};
  const accountId = parseHyperlink(input.account, "accounts");
  if (input.account === undefined || input.account === null) errors.account = [MSG.required];
  else if (!accountId) errors.account = [MSG.noMatch];
  else if (accountId !== p.accountId) errors.account = [MSG.notExist];
  const keys = await metafieldKeys(env.DB, p.accountId, kind);
  const fields = input.fields ?? defaultFields(kind, keys);
  if (input.fields && input.fields.length === 0) errors.fields = ["This list may not be empty."];
  const unknown = unknownFields(kind, fields, keys);
  if (unknown.length) errors.fields = [`Unknown fields: ${unknown.join(", ")}.`];
  if (new Set(fields).size !== fields.length) errors.fields = ["Each field may be listed once."];
  const filters = filterText(errors, input.filters ?? {});
  const now = Date.now();
  // One 400 names every bad name, in `fields` and `filters` alike (contract §21).
  try {
    if (!errors.filters) checkFilters(kind, filters, p, ctx.zone, now, settleSeconds(env));
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    Object.assign(errors, err.body as FieldErrors);
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);

  const row: ExportRow = {
    id: uuidv7(now),
    account_id: p.accountId,
    kind,
    format: input.format ?? "csv",
    fields: JSON.stringify(fields),
    filters: JSON.stringify(filters),
    time_zone: ctx.zone,
    state: "queued",
    row_count: 0,
    file_key: null,
    error_message: "",
    step: 0,
    cursor: null,
    upload_id: null,
    parts: "[]",
    carry_bytes: 0,
    created_by: p.userId,
    created_at: now,
    updated_at: now,
    completed_at: null,
    lease_expires_at: leaseUntil(env, now),
    lease_attempts: 0,
    base_url: ctx.baseUrl,
    file_expires_at: null,
  };
  const keysOf = Object.keys(row) as (keyof ExportRow)[];
  await env.DB.prepare(
    `INSERT INTO data_exports (${keysOf.join(", ")}) VALUES (${keysOf.map(() => "?").join(", ")})`,
  )
    .bind(...keysOf.map((k) => row[k]))
    .run();
  const message: ExportMessage = { exportId: row.id, accountId: p.accountId, baseUrl: ctx.baseUrl, step: 0 };
  await env.EXPORTS_QUEUE.send(message);
  return row;
}

export async function getExport(db: D1Database, p: Principal, kind: ExportKind, id: string) {
  const row = await db
    .prepare("SELECT * FROM data_exports WHERE id = ? AND account_id = ? AND kind = ?")
    .bind(id, p.accountId, kind)
    .first<ExportRow>();
  if (!row) throw notFound();
  return row;
}

export function listExports(
  db: D1Database,
  p: Principal,
  kind: ExportKind,
  q: { cursor?: string; page_size?: number },
  url: string,
) {
  return paginateByCreation<ExportRow>({
    db,
    select: "SELECT * FROM data_exports",
    where: ["account_id = ?", "kind = ?"],
    params: [p.accountId, kind],
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
    desc: true,
  });
}
