import { uuidBytes, uuidText } from "../../db/uuid-bytes";
import { matrixFromEnv, type Point } from "../routing";
import { parseJson, type TaskRow } from "../tasks/types";

/**
 * ETAs of assigned, unfinished tasks (contract §17, §28): from the assignee's latest position
 * (contract §28; else its newest command that carried a location, else the task's route's start
 * address) at now, through the assignee's unfinished tasks before the task in `position` order,
 * with the travel model of §16 (services/routing), waiting for each window to open and adding
 * each visit's duration. A task is late when its ETA is after its `complete_before`.
 *
 * The task API (`eta`, `is_late` on every read), the tracking page and the lateness check
 * (services/positions/lateness.ts) all use this one computation. Four reads in one D1 batch
 * (`etaStatements`, which a GET of one task adds to its first batch), whatever the number of
 * workers; one travel computation per worker and start.
 */

export type Eta = { eta: number; late: boolean } | { reason: "finished" | "not_assigned" | "no_location" };

/** Stops of a worker an ETA drives through at most: a task further down is reached after all of them. */
export const MAX_ETA_STOPS = 200;
/**
 * Unfinished tasks of one worker an ETA reads at most. A worker holding more (an import, a
 * test) gets no ETA: ordering them all on every read would cost every reader of the board.
 */
export const CHAIN_READ_CAP = 1000;
export const OPEN_STATES = ["assigned", "accepted", "transit", "active"] as const;
const FINISHED = ["completed", "failed", "cancelled"];

/** What of a task an ETA reads. */
export type EtaTask = Pick<
  TaskRow,
  | "id"
  | "account_id"
  | "state"
  | "assignee_id"
  | "route_id"
  | "address"
  | "duration_seconds"
  | "complete_after"
  | "complete_before"
>;
/** A stop of a worker's chain: its location taken out of the address's JSON by SQLite (no parse per row). */
type Stop = Pick<TaskRow, "id" | "duration_seconds" | "complete_after"> & {
  assignee_id: string;
  lon: number | null;
  lat: number | null;
};

const OPEN_SQL = OPEN_STATES.map((s) => `'${s}'`).join(",");

export const pointOfAddress = (json: string | null): Point | null => {
  const c = parseJson<{ location?: { coordinates?: [number, number] } | null } | null>(json, null)?.location
    ?.coordinates;
  return c ? [c[0], c[1]] : null;
};

const pointOfStop = (s: Stop): Point | null =>
  typeof s.lon === "number" && typeof s.lat === "number" && Number.isFinite(s.lon) && Number.isFinite(s.lat)
    ? [s.lon, s.lat]
    : null;

/** The location of a worker's newest command that carried one (task_commands_user_location_idx). */
export const lastLocationSql = (worker: string, account = "?") => `SELECT location FROM task_commands
  WHERE user_id = ${uuidBytes(worker)} AND location IS NOT NULL AND account_id = ${uuidBytes(account)} ORDER BY time DESC LIMIT 1`;

/**
 * The four reads an ETA needs, for the workers a subquery names (`workers`: SQL yielding
 * assignee ids, with its parameters) and the routes another names, so they can join the
 * batch that reads the tasks themselves (a GET of one task keeps its one round trip):
 * - each worker's first MAX_ETA_STOPS unfinished tasks in `position` order (contract §16);
 * - each worker's latest position (`worker_positions`, written by the account's stream object);
 * - each worker's newest command that carried a location (task_commands_user_location_idx);
 * - the routes' start addresses.
 */
export type EtaScope = {
  workers: { sql: string; params: unknown[] };
  routes: { sql: string; params: unknown[] };
  /**
   * One task's ETA needs only the stops before it: given, the chain is read up to that task in
   * SQL (`position` order, at most MAX_ETA_STOPS rows) instead of the worker's whole list.
   */
  before?: { id: string };
};

/**
 * Rows of `t` before the task `x` in the order of domain/route-order (`position`, those without
 * one last, then creation, then id). SQLite compares text with memcmp, as JavaScript's `<` does
 * for the ASCII ids.
 */
const BEFORE_SQL = `CASE WHEN x.p IS NULL
    THEN t.position IS NOT NULL OR t.created_at < x.c OR (t.created_at = x.c AND t.id < x.i)
    ELSE t.position < x.p OR (t.position = x.p AND (t.created_at < x.c OR (t.created_at = x.c AND t.id < x.i)))
  END`;

export function etaStatements(db: D1Database, accountId: string, scope: EtaScope): D1PreparedStatement[] {
  const w = scope.workers;
  if (scope.before)
    return [
      db
        .prepare(
          // One task's ETA in one statement (`etasFrom` reads it as the four): its assignee,
          // their open tasks counted up to the cap (the index alone), the stops before the task
          // in order as one compact JSON list of [null, lon, lat, duration_seconds,
          // complete_after] (a D1 answer's bytes and values cost the Worker more than the query
          // costs SQLite: 200 rows of columns are 4 times the bytes, and each statement of a
          // batch its own answer), the worker's position, their newest command's location, and
          // the task's route's start.
          `SELECT x.n AS open_count, x.a AS worker,
             (SELECT json_group_array(json_array(NULL, lon, lat, duration_seconds, complete_after)) FROM (
                SELECT json_extract(t.address, '$.location.coordinates[0]') AS lon,
                  json_extract(t.address, '$.location.coordinates[1]') AS lat, t.duration_seconds, t.complete_after
                FROM tasks t WHERE t.account_id = s_account AND t.assignee_id = x.a AND t.state IN (${OPEN_SQL})
                  AND ${BEFORE_SQL}
                ORDER BY t.position IS NULL, t.position, t.created_at, t.id LIMIT ${MAX_ETA_STOPS})) AS stops,
             (SELECT json_array(lon, lat) FROM worker_positions
                WHERE account_id = ${uuidBytes("x.s_account")} AND user_id = ${uuidBytes("x.a")}) AS fix,
             (${lastLocationSql("x.a", "x.s_account")}) AS location,
             x.r AS route_id,
             (SELECT start_address FROM routes WHERE account_id = x.s_account AND id = x.r) AS start_address
           FROM (SELECT s.account_id AS s_account, s.assignee_id AS a, s.position AS p, s.created_at AS c, s.id AS i,
                   s.route_id AS r,
                   (SELECT count(*) FROM (SELECT 1 FROM tasks WHERE account_id = s.account_id
                      AND assignee_id = s.assignee_id AND state IN (${OPEN_SQL}) LIMIT ${CHAIN_READ_CAP})) AS n
                 FROM tasks s WHERE s.id = ? AND s.account_id = ? AND s.assignee_id IS NOT NULL
                   AND s.state IN (${OPEN_SQL})) x`,
        )
        .bind(scope.before.id, accountId),
    ];
  const chain = db
    .prepare(
      // Each worker's unfinished tasks, at most CHAIN_READ_CAP of them through the assignee's
      // index (no sort over a list that may be huge), counted, and the first MAX_ETA_STOPS of
      // them in `position` order as one compact list of [id, lon, lat, duration_seconds,
      // complete_after] per worker (as above: bytes, not rows, are what a read costs).
      `SELECT x.a AS worker,
             (SELECT count(*) FROM (SELECT 1 FROM tasks WHERE account_id = ?
                AND assignee_id = x.a AND state IN (${OPEN_SQL}) LIMIT ${CHAIN_READ_CAP})) AS open_count,
             (SELECT json_group_array(json_array(id, lon, lat, duration_seconds, complete_after)) FROM (
                SELECT t.id, json_extract(t.address, '$.location.coordinates[0]') AS lon,
                  json_extract(t.address, '$.location.coordinates[1]') AS lat, t.duration_seconds, t.complete_after
                FROM tasks t WHERE t.rowid IN (SELECT rowid FROM tasks
                  WHERE account_id = ? AND assignee_id = x.a AND state IN (${OPEN_SQL}) LIMIT ${CHAIN_READ_CAP})
                ORDER BY t.position IS NULL, t.position, t.created_at, t.id LIMIT ${MAX_ETA_STOPS})) AS stops
           FROM (SELECT DISTINCT assignee_id AS a FROM (${w.sql})) x`,
    )
    .bind(accountId, accountId, ...w.params);
  return [
    chain,
    db
      .prepare(
        `SELECT ${uuidText("user_id")} AS user_id, lon, lat FROM worker_positions
         WHERE account_id = ${uuidBytes()} AND user_id IN (SELECT ${uuidBytes("x.a")} FROM (SELECT DISTINCT assignee_id AS a FROM (${w.sql})) x)`,
      )
      .bind(accountId, ...w.params),
    db
      .prepare(
        `SELECT x.a AS user_id, (${lastLocationSql("x.a")}) AS location
         FROM (SELECT DISTINCT assignee_id AS a FROM (${w.sql})) x`,
      )
      .bind(accountId, ...w.params),
    db
      .prepare(`SELECT id, start_address FROM routes WHERE account_id = ? AND id IN (${scope.routes.sql})`)
      .bind(accountId, ...scope.routes.params),
  ];
}

/** The scope of some tasks given by their rows (ids bound as one JSON list each). */
export function scopeOfTasks(tasks: readonly EtaTask[]): EtaScope {
  const workers = [...new Set(tasks.map((t) => t.assignee_id).filter((x): x is string => !!x))];
  const routes = [...new Set(tasks.map((t) => t.route_id).filter((x): x is string => !!x))];
  return {
    workers: { sql: "SELECT value AS assignee_id FROM json_each(?)", params: [JSON.stringify(workers)] },
    routes: { sql: "SELECT value FROM json_each(?)", params: [JSON.stringify(routes)] },
  };
}

/** The scope of one task by its id (a GET reads it in the same batch as the task). */
export function scopeOfTask(accountId: string, id: string): EtaScope {
  return {
    workers: {
      sql: `SELECT assignee_id FROM tasks WHERE id = ? AND account_id = ? AND state IN (${OPEN_SQL})`,
      params: [id, accountId],
    },
    routes: { sql: "SELECT route_id FROM tasks WHERE id = ? AND account_id = ?", params: [id, accountId] },
    before: { id },
  };
}

/** The scope of a page's rows, by the page's own statement (read in the same batch as the page). */
export function scopeOfPage(page: { sql: string; params: unknown[] }): EtaScope {
  return {
    workers: {
      sql: `SELECT assignee_id FROM (${page.sql}) WHERE assignee_id IS NOT NULL AND state IN (${OPEN_SQL})`,
      params: page.params,
    },
    routes: { sql: `SELECT route_id FROM (${page.sql})`, params: page.params },
  };
}

/** Whether any of these tasks can have an ETA (else no read is needed). */
export const needsEta = (tasks: readonly EtaTask[]) =>
  tasks.some((t) => t.assignee_id && (OPEN_STATES as readonly string[]).includes(t.state));

/** ETAs of tasks (see the module's comment), reading what they need in one batch. */
export async function etas(env: Env, tasks: readonly EtaTask[], now: number): Promise<Map<string, Eta>> {
  if (!needsEta(tasks)) return etasFrom(env, tasks, null, now);
  const results = await env.DB.batch(etaStatements(env.DB, tasks[0].account_id, scopeOfTasks(tasks)));
  return etasFrom(env, tasks, results, now);
}

/** One task's ETA statement (`before`) read as the four reads of a list's. */
function asFour(one: D1Result): D1Result[] {
  type Row = {
    worker: string;
    open_count: number;
    stops: string | null;
    fix: string | null;
    location: string | null;
    route_id: string | null;
    start_address: string | null;
  };
  const rows = one.results as Row[];
  const result = (results: unknown[]) => ({ ...one, results }) as D1Result;
  return [
    result(rows.map(({ worker, open_count, stops }) => ({ worker, open_count, stops }))),
    result(
      rows.flatMap((r) => {
        const fix = parseJson<[number, number] | null>(r.fix, null);
        return fix ? [{ user_id: r.worker, lon: fix[0], lat: fix[1] }] : [];
      }),
    ),
    result(rows.map((r) => ({ user_id: r.worker, location: r.location }))),
    result(rows.flatMap((r) => (r.route_id ? [{ id: r.route_id, start_address: r.start_address }] : []))),
  ];
}

/** ETAs of tasks from the results of `etaStatements` (null: none is needed). */
export async function etasFrom(
  env: Env,
  tasks: readonly EtaTask[],
  inputs: D1Result[] | null,
  now: number,
): Promise<Map<string, Eta>> {
  const out = new Map<string, Eta>();
  const byWorker = new Map<string, EtaTask[]>();
  for (const task of tasks) {
    if (FINISHED.includes(task.state)) out.set(task.id, { reason: "finished" });
    else if (!task.assignee_id || !(OPEN_STATES as readonly string[]).includes(task.state))
      out.set(task.id, { reason: "not_assigned" });
    else byWorker.get(task.assignee_id)?.push(task) ?? byWorker.set(task.assignee_id, [task]);
  }
  if (!byWorker.size || !inputs) return out;
  const [chainsRes, positionsRes, lastRes, routesRes] = inputs.length === 1 ? asFour(inputs[0]) : inputs;
  type Chain = { worker: string; open_count: number; stops: string | null };
  const chains = new Map<string, Stop[]>();
  const tooMany = new Set<string>();
  // Each worker's stops come in order, at most MAX_ETA_STOPS; a chain read up to one task
  // (`before`) has no ids (the task itself is never among them).
  for (const c of chainsRes.results as Chain[]) {
    if (c.open_count >= CHAIN_READ_CAP) tooMany.add(c.worker);
    const list = parseJson<[string | null, number | null, number | null, number | null, number | null][]>(
      c.stops,
      [],
    );
    chains.set(
      c.worker,
      list.map(([id, lon, lat, duration_seconds, complete_after], k) => ({
        id: id ?? `before:${k}`,
        assignee_id: c.worker,
        lon,
        lat,
        duration_seconds,
        complete_after,
      })),
    );
  }
  const fixes = new Map(
    (positionsRes.results as { user_id: string; lon: number; lat: number }[]).map((r) => [
      r.user_id,
      [r.lon, r.lat] as Point,
    ]),
  );
  const commandPoints = new Map<string, Point>();
  for (const r of lastRes.results as { user_id: string; location: string | null }[]) {
    const c = parseJson<{ coordinates?: [number, number] } | null>(r.location, null)?.coordinates;
    if (c) commandPoints.set(r.user_id, [c[0], c[1]]);
  }
  const routeStart = new Map(
    (routesRes.results as { id: string; start_address: string | null }[]).map((r) => [
      r.id,
      pointOfAddress(r.start_address),
    ]),
  );
  for (const [worker, mine] of byWorker) {
    if (tooMany.has(worker)) {
      for (const t of mine) out.set(t.id, { reason: "no_location" });
      continue;
    }
    const stops = chains.get(worker) ?? [];
    const known: Point | null = fixes.get(worker) ?? commandPoints.get(worker) ?? null;
    // Tasks sharing a start share one chain of stops: one travel computation for all of them.
    const byStart = new Map<string, { start: Point | null; tasks: EtaTask[] }>();
    for (const task of mine) {
      const start = known ?? routeStart.get(task.route_id ?? "") ?? null;
      const key = start ? start.join(",") : "";
      byStart.get(key)?.tasks.push(task) ?? byStart.set(key, { start, tasks: [task] });
    }
    const index = new Map(stops.map((s, j) => [s.id, j]));
    // Stops' points parsed only as far as a chain needs them (a GET of the worker's third stop
    // reads three addresses, not the whole list).
    const parsed: (Point | null)[] = [];
    const pointsTo = (n: number) => {
      for (let k = parsed.length; k < n; k++) parsed.push(pointOfStop(stops[k]));
      return parsed.slice(0, n);
    };
    for (const { start, tasks: chainTasks } of byStart.values()) {
      if (!start) {
        for (const t of chainTasks) out.set(t.id, { reason: "no_location" });
        continue;
      }
      // The chain runs to the last of these tasks in the worker's order.
      const end = Math.max(-1, ...chainTasks.map((t) => index.get(t.id) ?? -1)) + 1;
      const arrivals = await arrivalTimes(env, start, stops.slice(0, end), pointsTo(end), now);
      for (const t of chainTasks) {
        const j = index.get(t.id);
        // A task beyond the worker's first MAX_ETA_STOPS open tasks comes after all of them.
        const arrival =
          j !== undefined
            ? arrivals[j]
            : (
                await arrivalTimes(
                  env,
                  start,
                  [...stops, t],
                  [...pointsTo(stops.length), pointOfAddress(t.address)],
                  now,
                )
              )[stops.length];
        if (arrival === null) out.set(t.id, { reason: "no_location" });
        else {
          const ms = Math.round(arrival * 1000);
          out.set(t.id, { eta: ms, late: t.complete_before !== null && ms > t.complete_before });
        }
      }
    }
  }
  return out;
}

/**
 * Leg times of a worker's chain of stops, kept a minute per isolate: a tracking page reloads
 * itself every 30 s, a dispatcher's board lists the same workers again, and a route's
 * recipients watch the same worker, so one computation serves them all (the legs depend on
 * the points only, not on the time of the view). Plain numbers only: nothing tied to one
 * request (a promise, a stream) is kept across requests.
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
  chain: Pick<Stop, "duration_seconds" | "complete_after">[],
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
