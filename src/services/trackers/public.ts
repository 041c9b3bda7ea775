import { findByPublicKey } from "../../db/shards";
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
import type { MapPlace, PublicTask, PublicTracker } from "../../render/tracker";
import { etas as taskEtas } from "../eta";
import type { Point } from "../routing";
import { addressOf, parseJson, type TaskRow } from "../tasks/types";
import type { TrackerRow } from "./index";

type EtaResult = { eta: number } | { reason: EtaReason };

/** ETA of one task (contract §17); see `etas`. */
export async function eta(env: Env, task: TaskRow, now: number): Promise<EtaResult> {
  return (await etas(env, [task], now)).get(task.id)!;
}

/**
 * The tracking page's ETAs (contract §17): the task API's (services/eta, contract §28), with a
 * late task's ETA given as `outside_window` (the recipient is told the worker is running late).
 */
export async function etas(env: Env, tasks: TaskRow[], now: number): Promise<Map<string, EtaResult>> {
  const out = new Map<string, EtaResult>();
  for (const [id, e] of await taskEtas(env, tasks, now)) {
    out.set(id, "reason" in e ? e : e.late ? { reason: "outside_window" } : { eta: e.eta });
  }
  return out;
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

/** What the task's map link may point at: only what the allowlist shows on the page. */
function mapPlace(task: TaskRow, needs: (f: PublicTaskField) => boolean): MapPlace | null {
  const address = addressOf(task);
  const point = address.location?.coordinates as Point | undefined;
  if (needs("address.location") && point) return { point };
  if (needs("address.formatted_address") && address.formatted_address)
    return { query: address.formatted_address };
  return null;
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

/**
 * The tracker behind a public token and the tasks it follows, for its live stream; 404 as the
 * page is for an expired, deleted or unknown one.
 */
export async function trackerToFollow(base: Env, token: string, now = Date.now()) {
  const found = await trackerOf(base, token);
  const tracker = found?.value;
  if (!found || !tracker || tracker.expires_at <= now) throw notFound();
  const env = found.env;
  let taskIds = parseJson<string[]>(tracker.task_ids, []);
  if (tracker.order_id) {
    const { results } = await env.DB.prepare("SELECT id FROM tasks WHERE account_id = ? AND order_id = ?")
      .bind(tracker.account_id, tracker.order_id)
      .all<{ id: string }>();
    taskIds = results.map((t) => t.id);
  }
  return { id: tracker.id, account_id: tracker.account_id, taskIds };
}

export async function publicTracker(
  base: Env,
  token: string,
  acceptLanguage: string | undefined,
  now = Date.now(),
): Promise<PublicTracker> {
  const found = await trackerOf(base, token);
  const tracker = found?.value;
  // Expired or deleted: the same 404 as a token that never was.
  if (!found || !tracker || tracker.expires_at <= now) throw notFound();
  const env = found.env;
  const db = env.DB;
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
      .prepare("SELECT language, timezone, map_provider, google_maps_region FROM accounts WHERE id = ?")
      .bind(tracker.account_id),
  ]);
  const tasks = tasksRes.results as TaskRow[];
  const account = accountRes.results[0] as {
    language: Locale;
    timezone: string;
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
  const computed = needs("eta") ? await etas(env, tasks, now) : new Map<string, EtaResult>();
  for (const task of tasks) {
    const e = computed.get(task.id) ?? { reason: "not_assigned" as const };
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
      place: mapPlace(task, needs),
    });
  }
  return {
    language,
    timeZone: account.timezone,
    mapProvider: account.map_provider,
    mapRegion: account.google_maps_region,
    tasks: out,
  };
}

/**
 * The tracker behind a public token, in the database of its account (contract §24): the
 * directory's lookup names the account.
 */
const trackerOf = (env: Env, token: string) =>
  findByPublicKey(env, "tracker", token, (scoped) =>
    scoped.DB.prepare("SELECT * FROM trackers WHERE token = ?").bind(token).first<TrackerRow>(),
  );
