import { findByPublicKey } from "../../db/shards";
import { uuidBytes } from "../../db/uuid-bytes";
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
import { matrixFromEnv, type Point } from "../routing";
import { addressOf, parseJson, type TaskRow } from "../tasks/types";
import type { TrackerRow } from "./index";

const OPEN = ["assigned", "accepted", "transit", "active"];
/**
 * Stops of a worker an ETA drives through at most: one anonymous page view reads and computes
 * this many, whatever the worker's list holds. A task further down is reached after all of them.
 */
export const MAX_ETA_STOPS = 200;
const FINISHED = ["completed", "failed", "cancelled"];

const pointOfAddress = (json: string | null): Point | null => {
  const c = parseJson<{ location?: { coordinates?: [number, number] } | null } | null>(json, null)?.location
    ?.coordinates;
  return c ? [c[0], c[1]] : null;
};

type EtaResult = { eta: number } | { reason: EtaReason };
type Stop = Pick<TaskRow, "id" | "address" | "duration_seconds" | "complete_after">;

/** ETA of one task (contract §17); see `etas`. */
export async function eta(env: Env, task: TaskRow, now: number): Promise<EtaResult> {
  return (await etas(env, [task], now)).get(task.id)!;
}

/**
 * ETAs of a tracker's tasks (contract §17): from the worker's last command location (or the
 * task's route's start) through the worker's open tasks before it in `position` order, with
 * the travel model of §16; never before a stop's `complete_after`. One D1 batch and one
 * travel matrix per worker and start, however many of the worker's tasks the tracker shows
 * (a 500-task tracker costs a query per worker, not per task).
 */
/** The location of a worker's newest command that carried one (task_commands_user_location_idx). */
export const LAST_LOCATION_SQL = `SELECT location FROM task_commands
  WHERE user_id = ${uuidBytes()} AND location IS NOT NULL AND account_id = ${uuidBytes()} ORDER BY time DESC LIMIT 1`;

const lastLocation = (db: D1Database, accountId: string, userId: string) =>
  db.prepare(LAST_LOCATION_SQL).bind(userId, accountId);

export async function etas(env: Env, tasks: TaskRow[], now: number): Promise<Map<string, EtaResult>> {
  const out = new Map<string, EtaResult>();
  const byWorker = new Map<string, TaskRow[]>();
  for (const task of tasks) {
    if (FINISHED.includes(task.state)) out.set(task.id, { reason: "finished" });
    else if (!task.assignee_id || !OPEN.includes(task.state)) out.set(task.id, { reason: "not_assigned" });
    else byWorker.get(task.assignee_id)?.push(task) ?? byWorker.set(task.assignee_id, [task]);
  }
  const db = env.DB;
  for (const [worker, mine] of byWorker) {
    const accountId = mine[0].account_id;
    const routeIds = [...new Set(mine.map((t) => t.route_id).filter((x): x is string => !!x))];
    const [list, last, routes] = await db.batch([
      db
        .prepare(
          `SELECT id, address, duration_seconds, complete_after FROM tasks WHERE account_id = ? AND assignee_id = ? AND state IN ('assigned','accepted','transit','active')
           ORDER BY position IS NULL, position, created_at, id LIMIT ${MAX_ETA_STOPS}`,
        )
        .bind(accountId, worker),
      lastLocation(db, accountId, worker),
      db
        .prepare(
          "SELECT id, start_address FROM routes WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))",
        )
        .bind(accountId, JSON.stringify(routeIds)),
    ]);
    const stops = list.results as Stop[];
    const lastPoint = parseJson<{ coordinates?: [number, number] } | null>(
      (last.results[0] as { location?: string } | undefined)?.location,
      null,
    )?.coordinates;
    const routeStart = new Map(
      (routes.results as { id: string; start_address: string | null }[]).map((r) => [
        r.id,
        pointOfAddress(r.start_address),
      ]),
    );
    // Tasks sharing a start share one chain of stops: one matrix for all of them.
    const chains = new Map<string, { start: Point | null; tasks: TaskRow[] }>();
    for (const task of mine) {
      const start: Point | null = lastPoint
        ? [lastPoint[0], lastPoint[1]]
        : (routeStart.get(task.route_id ?? "") ?? null);
      const key = start ? start.join(",") : "";
      chains.get(key)?.tasks.push(task) ?? chains.set(key, { start, tasks: [task] });
    }
    const index = new Map(stops.map((s, i) => [s.id, i]));
    const stopPoints = stops.map((s) => pointOfAddress(s.address));
    for (const { start, tasks: chainTasks } of chains.values()) {
      if (!start) {
        for (const t of chainTasks) out.set(t.id, { reason: "no_location" });
        continue;
      }
      // The chain runs to the last of these tasks in the worker's order.
      const end = Math.max(-1, ...chainTasks.map((t) => index.get(t.id) ?? -1)) + 1;
      const arrivals = await arrivalTimes(env, start, stops.slice(0, end), stopPoints.slice(0, end), now);
      for (const t of chainTasks) {
        const i = index.get(t.id);
        // A task beyond the worker's first MAX_ETA_STOPS open tasks comes after all of them.
        const arrival =
          i !== undefined
            ? arrivals[i]
            : (
                await arrivalTimes(env, start, [...stops, t], [...stopPoints, pointOfAddress(t.address)], now)
              )[stops.length];
        if (arrival === null) out.set(t.id, { reason: "no_location" });
        else if (t.complete_before !== null && arrival * 1000 > t.complete_before)
          out.set(t.id, { reason: "outside_window" });
        else out.set(t.id, { eta: Math.round(arrival * 1000) });
      }
    }
  }
  return out;
}

/**
 * Leg times of a worker's chain of stops, kept a minute per isolate: a tracking page reloads
 * itself every 30 s, and a route's recipients watch the same worker, so one computation serves
 * them all (the legs depend on the points only, not on the time of the view). Plain numbers
 * only: nothing tied to one request (a promise, a stream) is kept across requests.
 */
const LEG_CACHE_MS = 60_000;
const LEG_CACHE_ENTRIES = 500;
const legCache = new Map<string, { at: number; legs: number[] }>();

async function cachedLegs(env: Env, points: Point[], now: number): Promise<number[]> {
  const provider = matrixFromEnv(env);
  const key = `${provider.name}|${points.map((p) => `${p[0]},${p[1]}`).join(";")}`;
  const hit = legCache.get(key);
  if (hit && now - hit.at < LEG_CACHE_MS) return hit.legs;
  const legs = await provider.legs(points);
  if (legCache.size >= LEG_CACHE_ENTRIES) legCache.delete(legCache.keys().next().value!);
  legCache.set(key, { at: now, legs });
  return legs;
}

/**
 * Arrival times (epoch seconds) at each stop driven in order from `start` at `now`: travel,
 * then waiting for `complete_after`, then the stop's `duration` before leaving. Null from the
 * first stop without a location or a road to it. The travel is the chain's n legs (not an
 * n × n table), at most MAX_ETA_STOPS + 1 of them.
 */
async function arrivalTimes(
  env: Env,
  start: Point,
  chain: Stop[],
  points: (Point | null)[],
  now: number,
): Promise<(number | null)[]> {
  const known = points.findIndex((p) => !p);
  const reachable = known < 0 ? chain.length : known;
  const out: (number | null)[] = new Array(chain.length).fill(null);
  if (reachable === 0) return out;
  const legs = await cachedLegs(env, [start, ...(points.slice(0, reachable) as Point[])], now);
  let t = now / 1000;
  for (let i = 0; i < reachable; i++) {
    if (i > 0) t += chain[i - 1].duration_seconds ?? 0;
    t += legs[i];
    if (!Number.isFinite(t)) break;
    const after = chain[i].complete_after;
    if (after !== null && after / 1000 > t) t = after / 1000;
    out[i] = t;
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
