/**
 * What auto-assign reads of the day (services/auto-assign): the account's shift, the on-duty
 * workers, today's routes with their unfinished stops (the fresh positions come from the account's
 * stream object, which runs every insertion). Each read answers one
 * compact JSON value: in the Workers runtime a D1 answer costs in proportion to its bytes and
 * values, more than the query costs SQLite.
 */
import type { Model } from "../../solver/model";
import { positionFreshMs } from "../positions/fresh";
import { type AccountShift, dayIn } from "../route-optimizations/build";
import type { Point } from "../routing";
import { parseJson, type TaskRow } from "../tasks/types";

/**
 * What the insertion reads of a task: no whole rows (a day of 50 routes is 2,000 of them, and
 * their JSON columns cost more to read than the insertion costs to run); the location and the
 * demand are taken out of their JSON by SQLite.
 */
export type StopRow = Pick<
  TaskRow,
  | "id"
  | "state"
  | "route_id"
  | "position"
  | "created_at"
  | "version"
  | "order_id"
  | "category"
  | "duration_seconds"
  | "complete_after"
  | "complete_before"
  | "assignee_id"
  | "updated_at"
> & { lon: number | null; lat: number | null; demand: unknown };
/** A StopRow's fields in the order of STOP_ARRAY's list. */
const STOP_FIELDS = [
  "id",
  "state",
  "route_id",
  "position",
  "created_at",
  "version",
  "order_id",
  "category",
  "duration_seconds",
  "complete_after",
  "complete_before",
  "assignee_id",
  "lon",
  "lat",
  "demand",
  "updated_at",
] as const;
/**
 * A task as one JSON list of STOP_FIELDS (the demand is JSON itself: a number or a list). Rows
 * come back from D1 as one list per read, not one object per row: a D1 answer costs the Worker
 * in proportion to its bytes and values, more than the query costs SQLite (services/eta reads its
 * chain the same way).
 */
const STOP_ARRAY = `json_array(t.id, t.state, t.route_id, t.position, t.created_at, t.version, t.order_id, t.category,
  t.duration_seconds, t.complete_after, t.complete_before, t.assignee_id,
  json_extract(t.address, '$.location.coordinates[0]'), json_extract(t.address, '$.location.coordinates[1]'),
  json_extract(t.metafields, '$.demand'), t.updated_at)`;
const stopsOf = (json: unknown): StopRow[] =>
  parseJson<unknown[][]>(typeof json === "string" ? json : "[]", []).map(
    (a) => Object.fromEntries(STOP_FIELDS.map((f, i) => [f, a[i] ?? null])) as StopRow,
  );

export const pt = (t: { lon: number | null; lat: number | null } | undefined): Point | null =>
  t &&
  typeof t.lon === "number" &&
  typeof t.lat === "number" &&
  Number.isFinite(t.lon) &&
  Number.isFinite(t.lat)
    ? [t.lon, t.lat]
    : null;

export const OPEN = ["assigned", "accepted", "transit", "active"];

export type Worker = { user_id: string; name: string; vehicle_capacity: string };
/** Of today's route, what the insertion reads: its id and where it starts and ends. */
export type LaneRoute = { id: string; start: Point | null; end: Point | null };
/** A route as the insertion sees it: today's, of an on-duty worker (or one to make for them). */
export type Lane = {
  route: LaneRoute | null;
  worker: Worker;
  /** Its unfinished tasks in route order. */
  stops: StopRow[];
  start: Point | null;
  /** How many stops stay first: the task being done, then the one driven to. */
  fixed: number;
  /** The highest position on the route (finished stops too): a stop added at the end goes after it. */
  lastPosition: number | null;
};

/**
 * A lane compiled once for every single stop placed into it until it changes (contract §29's
 * insertions come one at a time, and a day's other routes stay as they were): its instance has
 * one more stop, a slot, whose service, window, demand and legs to and from every point of the
 * chain are written in place for each task (lanes.ts `slotIn`). Compiling 50 routes per insertion was
 * most of an insertion's own CPU (bench/README.md, section 19).
 */
export type KeptLane = {
  /** What the instance was built from: the route's fingerprint, its ends, the vehicle, the account's settings. */
  sig: string;
  m: Model;
  seq: number[];
  order: string[];
  fixed: number;
  slot: number;
};

/**
 * The stops of today's routes as last read, kept by the account's stream object between
 * insertions with each route's fingerprint (its tasks' count, sum of versions and latest change:
 * every write of a task moves its version). A route whose fingerprint moved is read again; the
 * others are not (a day of 50 routes of 40 stops is 2,000 rows, read once, not per insertion).
 */
export type DayCache = {
  day: string;
  zone: string;
  routes: Map<string, { key: string; rows: StopRow[] }>;
  /** Each lane compiled, by route (or worker, without a route). */
  lanes: Map<string, KeptLane>;
};
export const newDayCache = (): DayCache => ({ day: "", zone: "", routes: new Map(), lanes: new Map() });

/** A route's fingerprint as the day's read computes it in SQL: count, sum of versions, latest change. */
const fingerprintOf = (rows: StopRow[]) =>
  `${rows.length}:${rows.reduce((a, t) => a + t.version, 0)}:${Math.max(...rows.map((t) => t.updated_at))}`;

/** The read's order of a route's tasks: by position (none last), then creation, then id. */
const byPosition = (a: StopRow, b: StopRow) =>
  (a.position === null ? 1 : 0) - (b.position === null ? 1 : 0) ||
  (a.position ?? 0) - (b.position ?? 0) ||
  a.created_at - b.created_at ||
  (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * A task this call wrote onto `routeId` (its version and last change as the write left them),
 * put into the kept read of that route with the fingerprint it now has: the next call's
 * fingerprint finds it unchanged unless someone else wrote meanwhile, and reads nothing again.
 */
export function keepWritten(cache: DayCache, routeId: string, row: StopRow): void {
  const rows = (cache.routes.get(routeId)?.rows ?? []).filter((t) => t.id !== row.id);
  const at = rows.findIndex((t) => byPosition(row, t) < 0);
  rows.splice(at < 0 ? rows.length : at, 0, row);
  cache.routes.set(routeId, { key: fingerprintOf(rows), rows });
}

/**
 * The latest positions of some users (the account's stream object's, durable-objects/account-stream
 * positions.ts), `time` in epoch milliseconds.
 */
export type LatestPositions = (
  users: readonly string[],
) => Map<string, { lon: number; lat: number; time: number }>;

/** A JSON list read in one D1 value (see STOP_ARRAY: bytes and values, not the query, are the cost). */
const listOf = <T>(res: D1Result, column: string): T[] =>
  parseJson<T[]>(((res.results[0] ?? {}) as Record<string, string | null>)[column] ?? "[]", []);
const point = (lon: unknown, lat: unknown) => pt({ lon: lon as number | null, lat: lat as number | null });

/**
 * The day's reads in one batch: the account's shift, the on-duty workers, the tasks asked for,
 * today's routes of those workers with each route's fingerprint; the workers' fresh positions
 * from `latest`.
 * "Today" is in the account's zone, which the batch itself reads: the day of the zone last seen
 * (else UTC's) is assumed, and read again in a second batch only when the zone says otherwise.
 */
export async function readDay(
  env: Env,
  accountId: string,
  taskIds: string[],
  now: number,
  cache: DayCache,
  latest: LatestPositions,
) {
  const db = env.DB;
  const onDuty = `SELECT user_id FROM account_roles WHERE account_id = ? AND on_duty = 1 AND is_active = 1 AND state = 'active'`;
  // Today's routes of the on-duty workers, in creation order, each as [id, assignee, start lon,
  // start lat, end lon, end lat, fingerprint].
  const ofDay = (day: string) =>
    db
      .prepare(
        `SELECT json_group_array(json_array(r.id, r.assignee_id,
           json_extract(r.start_address, '$.location.coordinates[0]'), json_extract(r.start_address, '$.location.coordinates[1]'),
           json_extract(r.end_address, '$.location.coordinates[0]'), json_extract(r.end_address, '$.location.coordinates[1]'),
           (SELECT count(*) || ':' || sum(version) || ':' || max(updated_at) FROM tasks
              WHERE account_id = r.account_id AND route_id = r.id))) AS routes
         FROM (SELECT * FROM routes WHERE account_id = ? AND date = ? AND state != 'archived'
           AND assignee_id IN (${onDuty}) ORDER BY created_at, id) r`,
      )
      .bind(accountId, day, accountId);
  const guess = dayIn(now, cache.zone || "UTC");
  const [accountRes, workersRes, askedRes, guessRes] = await db.batch([
    db
      .prepare(
        "SELECT timezone, optimize_earliest_start, optimize_latest_end, optimize_visit_duration_margin FROM accounts WHERE id = ?",
      )
      .bind(accountId),
    db
      .prepare(
        `SELECT json_group_array(json_array(user_id, name, vehicle_capacity)) AS workers FROM (
           SELECT r.user_id, u.name, r.vehicle_capacity FROM account_roles r JOIN users u ON u.id = r.user_id
           WHERE r.account_id = ? AND r.on_duty = 1 AND r.is_active = 1 AND r.state = 'active' ORDER BY u.name, r.user_id)`,
      )
      .bind(accountId),
    db
      .prepare(
        `SELECT json_group_array(${STOP_ARRAY}) AS stops FROM tasks t
         WHERE t.account_id = ? AND t.id IN (SELECT value FROM json_each(?))`,
      )
      .bind(accountId, JSON.stringify(taskIds)),
    ofDay(guess),
  ]);
  const account = accountRes.results[0] as AccountShift;
  const workers = listOf<[string, string, string]>(workersRes, "workers").map(
    ([user_id, name, vehicle_capacity]): Worker => ({ user_id, name, vehicle_capacity }),
  );
  const asked = stopsOf((askedRes.results[0] as { stops?: string } | undefined)?.stops);
  cache.zone = account.timezone;
  const today = dayIn(now, account.timezone);
  const dayRes = today === guess ? guessRes : await ofDay(today).all();
  const routes = listOf<[string, string, unknown, unknown, unknown, unknown, string | null]>(
    dayRes,
    "routes",
  );
  if (cache.day !== today) {
    cache.day = today;
    cache.routes.clear();
    cache.lanes.clear();
  }
  // A route without tasks has no fingerprint and nothing to read.
  const keys = new Map(routes.flatMap((r) => (r[6] === null ? [] : [[r[0], r[6]] as const])));
  const stale = [...keys].filter(([id, key]) => cache.routes.get(id)?.key !== key).map(([id]) => id);
  for (const id of cache.routes.keys()) if (!keys.has(id)) cache.routes.delete(id);
  if (stale.length) {
    const read = await db
      .prepare(
        `SELECT json_group_array(${STOP_ARRAY}) AS stops FROM (SELECT * FROM tasks
           WHERE account_id = ? AND route_id IN (SELECT value FROM json_each(?))
           ORDER BY position IS NULL, position, created_at, id) t`,
      )
      .bind(accountId, JSON.stringify(stale))
      .first<{ stops: string }>();
    const fresh = new Map<string, StopRow[]>(stale.map((id) => [id, []]));
    for (const t of stopsOf(read?.stops)) fresh.get(t.route_id!)?.push(t);
    for (const [id, rows] of fresh) cache.routes.set(id, { key: keys.get(id)!, rows });
  }
  // Where each worker is: the account's stream object holds the latest positions (it runs every
  // insertion, so a position sent a moment ago counts before its copy reaches D1).
  const since = now - positionFreshMs(env);
  const fixes = new Map<string, Point>();
  for (const [user, f] of latest(workers.map((w) => w.user_id)))
    if (f.time >= since) fixes.set(user, [f.lon, f.lat]);
  const lanes: Lane[] = [];
  for (const worker of workers) {
    const mine = routes.filter((r) => r[1] === worker.user_id);
    // A worker on duty with no route today gets one when a task goes to them (contract §29).
    for (const r of mine.length ? mine : [null]) {
      const route: LaneRoute | null = r && { id: r[0], start: point(r[2], r[3]), end: point(r[4], r[5]) };
      const all = route ? (cache.routes.get(route.id)?.rows ?? []) : [];
      const stops = all.filter((t) => OPEN.includes(t.state));
      // Where the worker last was: a completed or failed stop (a cancelled one was not visited).
      const done = all.filter((t) => t.state === "completed" || t.state === "failed");
      // active first, then transit, then the rest in route order (contract §29's from-now rule).
      stops.sort((a, b) => rank(a) - rank(b));
      const fixed = stops.filter((t) => t.state === "active" || t.state === "transit").length;
      const start = fixes.get(worker.user_id) ?? pt(done.at(-1)) ?? route?.start ?? null;
      const positions = all.map((t) => t.position).filter((x): x is number => x !== null);
      lanes.push({
        route,
        worker,
        stops,
        start,
        fixed,
        lastPosition: positions.length ? Math.max(...positions) : null,
      });
    }
  }
  return { account, today, lanes, asked, cache };
}

const rank = (t: StopRow) => (t.state === "active" ? 0 : t.state === "transit" ? 1 : 2);
