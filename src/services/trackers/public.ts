/**
 * The public side of a tracker (contract §17): its tasks reduced to the allowlist, each with
 * `eta` or, when none can be given, `predicted_delivery_error` in the reader's language. Only
 * the tracker's own tasks and the fields below are read; nothing of the account or of other
 * tasks reaches the answer (the worker's other stops only feed the ETA's arithmetic).
 */
import { type EtaReason, PREDICTED_DELIVERY_ERRORS } from "../../domain/eta-messages";
import { LOCALES, type Locale } from "../../domain/locales";
import { negotiateLanguage, type PublicTaskField, renderTemplate } from "../../domain/tracker";
import { notFound } from "../../http/errors";
import type { PublicTask, PublicTracker } from "../../render/tracker";
import { matrixFromEnv, type Point } from "../routing";
import { addressOf, parseJson, type TaskRow } from "../tasks/types";
import type { TrackerRow } from "./index";

const OPEN = ["assigned", "accepted", "transit", "active"];
const FINISHED = ["completed", "failed", "cancelled"];

const pointOfAddress = (json: string | null): Point | null => {
  const c = parseJson<{ location?: { coordinates?: [number, number] } | null } | null>(json, null)?.location
    ?.coordinates;
  return c ? [c[0], c[1]] : null;
};

/**
 * ETA of an assigned task (contract §17): from the worker's last command location (or its
 * route's start) through its open tasks before this one in `position` order, with the travel
 * model of §16; never before the task's `complete_after`.
 */
export async function eta(
  env: Env,
  task: TaskRow,
  now: number,
): Promise<{ eta: number } | { reason: EtaReason }> {
  if (FINISHED.includes(task.state)) return { reason: "finished" };
  if (!task.assignee_id || !OPEN.includes(task.state)) return { reason: "not_assigned" };
  const db = env.DB;
  const [list, last, route] = await db.batch([
    db
      .prepare(
        `SELECT id, address, duration_seconds, complete_after FROM tasks WHERE account_id = ? AND assignee_id = ? AND state IN ('assigned','accepted','transit','active')
         ORDER BY position IS NULL, position, created_at, id LIMIT 200`,
      )
      .bind(task.account_id, task.assignee_id),
    db
      .prepare(
        "SELECT location FROM task_commands WHERE account_id = ? AND user_id = ? AND location IS NOT NULL ORDER BY time DESC LIMIT 1",
      )
      .bind(task.account_id, task.assignee_id),
    db
      .prepare("SELECT start_address FROM routes WHERE id = ? AND account_id = ?")
      .bind(task.route_id ?? "", task.account_id),
  ]);
  const stops = list.results as Pick<TaskRow, "id" | "address" | "duration_seconds" | "complete_after">[];
  const upTo = stops.findIndex((s) => s.id === task.id);
  const before = stops.slice(0, upTo < 0 ? stops.length : upTo + 1);
  if (upTo < 0) before.push(task);
  const lastPoint = parseJson<{ coordinates?: [number, number] } | null>(
    (last.results[0] as { location?: string } | undefined)?.location,
    null,
  )?.coordinates;
  const start: Point | null = lastPoint
    ? [lastPoint[0], lastPoint[1]]
    : pointOfAddress((route.results[0] as { start_address?: string } | undefined)?.start_address ?? null);
  const points = before.map((s) => pointOfAddress(s.address));
  if (!start || points.some((p) => !p)) return { reason: "no_location" };
  const { durations } = await matrixFromEnv(env).table([start, ...(points as Point[])]);
  let t = now / 1000;
  for (let i = 0; i < before.length; i++) {
    t += durations[i][i + 1];
    if (!Number.isFinite(t)) return { reason: "no_location" };
    const after = before[i].complete_after;
    if (after !== null && after / 1000 > t) t = after / 1000;
    if (i < before.length - 1) t += before[i].duration_seconds ?? 0;
  }
  if (task.complete_before !== null && t * 1000 > task.complete_before) return { reason: "outside_window" };
  return { eta: Math.round(t * 1000) };
}

export function publicField(
  task: TaskRow,
  name: PublicTaskField,
  extra: { assigneeName: string | null; reference: string | null; eta: number | null },
): unknown {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  const address = addressOf(task);
  switch (name) {
    case "state":
      return task.state;
    case "category":
      return task.category;
    case "description":
      return task.description;
    case "reference":
      return extra.reference;
    case "address.formatted_address":
      return address.formatted_address;
    case "address.raw_address":
      return address.raw_address;
    case "address.location":
      return address.location;
    case "complete_after":
      return iso(task.complete_after);
    case "complete_before":
      return iso(task.complete_before);
    case "scheduled_time":
      return iso(task.scheduled_time);
    case "eta":
      return iso(extra.eta);
    case "assignee.name":
      return extra.assigneeName;
    case "contact.name":
      return parseJson<{ name?: string }>(task.contact, {}).name ?? "";
  }
}

/** Nests dotted names (`address.formatted_address` → `{address: {formatted_address}}`). */
function nest(flat: Record<string, unknown>): PublicTask {
  const out: PublicTask = {};
  for (const [k, v] of Object.entries(flat)) {
    const [head, tail] = k.split(".");
    if (tail) out[head] = { ...((out[head] as object) ?? {}), [tail]: v };
    else out[head] = v;
  }
  return out;
}

export async function publicTracker(
  env: Env,
  token: string,
  acceptLanguage: string | undefined,
  now = Date.now(),
): Promise<PublicTracker> {
  const db = env.DB;
  const tracker = await db.prepare("SELECT * FROM trackers WHERE token = ?").bind(token).first<TrackerRow>();
  // Expired or deleted: the same 404 as a token that never was.
  if (!tracker || tracker.expires_at <= now) throw notFound();
  const [tasksRes, accountRes] = await db.batch([
    tracker.order_id
      ? db
          .prepare(
            "SELECT * FROM tasks WHERE account_id = ? AND order_id = ? ORDER BY order_index, created_at",
          )
          .bind(tracker.account_id, tracker.order_id)
      : db
          .prepare(
            "SELECT * FROM tasks WHERE account_id = ? AND id IN (SELECT value FROM json_each(?)) ORDER BY created_at, id",
          )
          .bind(tracker.account_id, tracker.task_ids),
    db
      .prepare("SELECT language, map_provider, google_maps_region FROM accounts WHERE id = ?")
      .bind(tracker.account_id),
  ]);
  const tasks = tasksRes.results as TaskRow[];
  const account = accountRes.results[0] as {
    language: Locale;
    map_provider: string;
    google_maps_region: string | null;
  };
  const language = negotiateLanguage(acceptLanguage, LOCALES, account.language);
  const fields = parseJson<PublicTaskField[]>(tracker.public_task_fields, []);
  const needs = (f: PublicTaskField) => fields.includes(f);
  const names = new Map<string, string>();
  const assignees = [...new Set(tasks.map((t) => t.assignee_id).filter((x): x is string => !!x))];
  if (needs("assignee.name") && assignees.length) {
    const { results } = await db
      .prepare("SELECT id, name FROM users WHERE id IN (SELECT value FROM json_each(?))")
      .bind(JSON.stringify(assignees))
      .all<{ id: string; name: string }>();
    for (const u of results) names.set(u.id, u.name);
  }
  const references = new Map<string, string>();
  if (needs("reference")) {
    const orders = [...new Set(tasks.map((t) => t.order_id).filter((x): x is string => !!x))];
    const { results } = await db
      .prepare(
        "SELECT id, reference FROM orders WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))",
      )
      .bind(tracker.account_id, JSON.stringify(orders))
      .all<{ id: string; reference: string }>();
    for (const o of results) references.set(o.id, o.reference);
  }
  const out: PublicTracker["tasks"] = [];
  for (const task of tasks) {
    const e = await eta(env, task, now);
    const extra = {
      assigneeName: task.assignee_id ? (names.get(task.assignee_id) ?? null) : null,
      reference: task.order_id ? (references.get(task.order_id) ?? "") : "",
      eta: "eta" in e ? e.eta : null,
    };
    const flat: Record<string, unknown> = {};
    for (const f of fields) flat[f] = publicField(task, f, extra);
    const fieldsOut = nest(flat);
    if (needs("eta"))
      fieldsOut.predicted_delivery_error =
        "reason" in e ? PREDICTED_DELIVERY_ERRORS[language][e.reason] : null;
    out.push({
      fields: fieldsOut,
      popup: renderTemplate(tracker.task_popup_template ?? "", flat, fields),
      location:
        needs("address.location") || needs("address.formatted_address")
          ? ((addressOf(task).location?.coordinates as Point | undefined) ?? null)
          : null,
    });
  }
  return { language, mapProvider: account.map_provider, mapRegion: account.google_maps_region, tasks: out };
}
