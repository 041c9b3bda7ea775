/**
 * Trackers (contract §17): a public, unguessable URL showing some tasks (a list, or an order's)
 * reduced to an allowlist of fields. The token is 128 random bits; only the tracker's tasks and
 * only their allowlisted fields are ever read for the public page.
 */

import { accountRow } from "../../db/account-rows";
import { registerPublicKey } from "../../db/shards";
import {
  badPlaceholders,
  DEFAULT_PUBLIC_TASK_FIELDS,
  PUBLIC_TASK_FIELDS,
  type PublicTaskField,
} from "../../domain/tracker";
import { type FieldErrors, ValidationError } from "../../http/errors";
import { paginateByCreation } from "../../http/pagination";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { PUBLIC_PREFIX, parseHyperlink } from "../../http/urls";
import { randomToken } from "../../lib/crypto";
import { uuidv7 } from "../../lib/ids";
import type { Principal } from "../auth/principal";
import { parseJson } from "../tasks/types";

export const MAX_TRACKER_TASKS = 500;
const DAY = 24 * 3600 * 1000;

export type TrackerRow = {
  id: string;
  account_id: string;
  token: string;
  task_ids: string;
  order_id: string | null;
  public_task_fields: string;
  task_popup_template: string | null;
  expires_at: number;
  created_by: string | null;
  created_at: number;
  updated_at: number;
};

export type TrackerWrite = {
  tasks?: string[];
  order?: string | null;
  public_task_fields?: string[];
  expires_at?: number | null;
  task_popup_template?: string | null;
};

export const publicUrl = (baseUrl: string, token: string) => `${baseUrl}${PUBLIC_PREFIX}/${token}/`;

export function serializeTracker(r: RenderCtx, t: TrackerRow) {
  return {
    id: t.id,
    url: link(r, "trackers", t.id),
    account: link(r, "accounts", t.account_id),
    tasks: parseJson<string[]>(t.task_ids, []).map((id) => link(r, "tasks", id)),
    order: link(r, "orders", t.order_id),
    public_task_fields: parseJson<string[]>(t.public_task_fields, []),
    expires_at: ts(r, t.expires_at),
    task_popup_template: t.task_popup_template ?? "",
    public_url: publicUrl(r.baseUrl, t.token),
    created_by: link(r, "users", t.created_by),
    created_at: ts(r, t.created_at),
    updated_at: ts(r, t.updated_at),
  };
}

export async function getTracker(db: D1Database, p: Principal, id: string) {
  return accountRow<TrackerRow>(db, "trackers", p.accountId, id);
}

export function listTrackers(
  db: D1Database,
  p: Principal,
  q: { cursor?: string; page_size?: number },
  url: string,
) {
  return paginateByCreation<TrackerRow>({
    db,
    select: "SELECT * FROM trackers",
    where: ["account_id = ?"],
    params: [p.accountId],
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

/** The fields, template and tasks of a write, checked (contract §17's 400s). */
async function resolve(db: D1Database, p: Principal, input: TrackerWrite, current: TrackerRow | null) {
  const errors: FieldErrors = {};
  const fields =
    input.public_task_fields ??
    (current ? parseJson<string[]>(current.public_task_fields, []) : DEFAULT_PUBLIC_TASK_FIELDS);
  if (input.public_task_fields !== undefined) {
    if (!fields.length) errors.public_task_fields = ["This list may not be empty."];
    const unknown = fields.filter((f) => !(PUBLIC_TASK_FIELDS as readonly string[]).includes(f));
    if (unknown.length)
      errors.public_task_fields = unknown.map(
        (f) => `"${f}" is not a public task field. Choices: ${PUBLIC_TASK_FIELDS.join(", ")}.`,
      );
  }
  let template = input.task_popup_template;
  if (template === undefined && !current) {
    const account = await db
      .prepare("SELECT tracker_task_popup_template FROM accounts WHERE id = ?")
      .bind(p.accountId)
      .first<{ tracker_task_popup_template: string }>();
    template = account?.tracker_task_popup_template ?? "";
  }
  const effective = template ?? current?.task_popup_template ?? "";
  const bad = badPlaceholders(effective, fields);
  if (bad.length)
    errors.task_popup_template = bad.map(
      (f) => `Unknown placeholder "{{${f}}}": use one of the tracker's public fields.`,
    );
  let taskIds: string[] | undefined;
  let orderId: string | null | undefined;
  // Malformed `tasks` are refused even beside an `order` (which then wins): the syntax the
  // document states holds for whatever is sent (issue 56).
  if (input.tasks?.some((u) => parseHyperlink(u, "tasks") === null))
    errors.tasks = ["Invalid hyperlink - No URL match."];
  if (input.order !== undefined && input.order !== null) {
    orderId = parseHyperlink(input.order, "orders");
    const found = orderId
      ? await db
          .prepare("SELECT id FROM orders WHERE id = ? AND account_id = ?")
          .bind(orderId, p.accountId)
          .first()
      : null;
    if (!found)
      errors.order = [
        orderId ? "Invalid hyperlink - Object does not exist." : "Invalid hyperlink - No URL match.",
      ];
    taskIds = [];
  } else if (input.tasks !== undefined) {
    orderId = null;
    const ids = [...new Set(input.tasks.map((u) => parseHyperlink(u, "tasks")))];
    if (ids.includes(null)) errors.tasks = ["Invalid hyperlink - No URL match."];
    else if (ids.length > MAX_TRACKER_TASKS) errors.tasks = [`Too many tasks: at most ${MAX_TRACKER_TASKS}.`];
    else {
      const { results } = await db
        .prepare("SELECT id FROM tasks WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))")
        .bind(p.accountId, JSON.stringify(ids))
        .all<{ id: string }>();
      if (results.length !== ids.length) errors.tasks = ["Invalid hyperlink - Object does not exist."];
    }
    taskIds = ids as string[];
  }
  if (!current && !input.tasks?.length && !input.order) errors.tasks = ["Give `tasks` or `order`."];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return { fields: fields as PublicTaskField[], template, taskIds, orderId };
}

/** `expires_at` by default: 30 days after the latest `complete_before` of its tasks, else after now. */
async function defaultExpiry(
  db: D1Database,
  p: Principal,
  taskIds: string[],
  orderId: string | null,
  now: number,
) {
  const r = await db
    .prepare(
      "SELECT MAX(complete_before) AS latest FROM tasks WHERE account_id = ? AND (id IN (SELECT value FROM json_each(?)) OR (? IS NOT NULL AND order_id = ?))",
    )
    .bind(p.accountId, JSON.stringify(taskIds), orderId, orderId)
    .first<{ latest: number | null }>();
  return (r?.latest ?? now) + 30 * DAY;
}

/**
 * A live tracker's token that shows the task (its own or its order's), in SQL: the guard of
 * `createTracker`'s `unlessTaskTracked` and the lookup of notifications (contract §18).
 */
export const LIVE_TRACKER_OF_TASK = `SELECT token FROM trackers WHERE account_id = ? AND expires_at > ?
  AND ((order_id IS NOT NULL AND order_id = ?) OR EXISTS (SELECT 1 FROM json_each(trackers.task_ids) WHERE value = ?))
  ORDER BY created_at DESC LIMIT 1`;

/**
 * Creates a tracker. With `unlessTaskTracked`, only when no live tracker shows that task yet,
 * decided by the INSERT itself (two racing callers make one); null when one already did.
 */
export async function createTracker(env: Env, p: Principal, input: TrackerWrite): Promise<TrackerRow>;
export async function createTracker(
  env: Env,
  p: Principal,
  input: TrackerWrite,
  opts: { unlessTaskTracked: { id: string; orderId: string | null } },
): Promise<TrackerRow | null>;
export async function createTracker(
  env: Env,
  p: Principal,
  input: TrackerWrite,
  opts: { unlessTaskTracked?: { id: string; orderId: string | null } } = {},
): Promise<TrackerRow | null> {
  const db = env.DB;
  const { fields, template, taskIds, orderId } = await resolve(db, p, input, null);
  const now = Date.now();
  const row: TrackerRow = {
    id: uuidv7(now),
    account_id: p.accountId,
    token: randomToken(16),
    task_ids: JSON.stringify(taskIds ?? []),
    order_id: orderId ?? null,
    public_task_fields: JSON.stringify(fields),
    task_popup_template: template ?? "",
    expires_at: input.expires_at ?? (await defaultExpiry(db, p, taskIds ?? [], orderId ?? null, now)),
    created_by: p.userId,
    created_at: now,
    updated_at: now,
  };
  const keys = Object.keys(row) as (keyof TrackerRow)[];
  const guard = opts.unlessTaskTracked;
  const inserted = await db
    .prepare(
      `INSERT INTO trackers (${keys.join(", ")}) SELECT ${keys.map(() => "?").join(", ")}` +
        (guard ? ` WHERE NOT EXISTS (${LIVE_TRACKER_OF_TASK})` : ""),
    )
    .bind(...keys.map((k) => row[k]), ...(guard ? [p.accountId, now, guard.orderId, guard.id] : []))
    .run();
  if (!inserted.meta.changes) return null;
  // The token's lookup in the directory (contract §24), once the tracker exists.
  await registerPublicKey(env, "tracker", row.token, p.accountId);
  return row;
}

export async function updateTracker(db: D1Database, p: Principal, id: string, input: TrackerWrite) {
  const current = await getTracker(db, p, id);
  const { fields, template, taskIds, orderId } = await resolve(db, p, input, current);
  const now = Date.now();
  await db
    .prepare(
      "UPDATE trackers SET public_task_fields = ?, task_popup_template = COALESCE(?, task_popup_template), task_ids = COALESCE(?, task_ids), order_id = CASE WHEN ? THEN ? ELSE order_id END, expires_at = COALESCE(?, expires_at), updated_at = ? WHERE id = ? AND account_id = ?",
    )
    .bind(
      JSON.stringify(fields),
      template ?? null,
      taskIds ? JSON.stringify(taskIds) : null,
      orderId !== undefined ? 1 : 0,
      orderId ?? null,
      input.expires_at ?? null,
      now,
      id,
      p.accountId,
    )
    .run();
  return getTracker(db, p, id);
}

export async function deleteTracker(db: D1Database, p: Principal, id: string) {
  await getTracker(db, p, id);
  await db.prepare("DELETE FROM trackers WHERE id = ? AND account_id = ?").bind(id, p.accountId).run();
}
