/**
 * Auto-assign (contract §29): a task goes to the on-duty worker's route of today where inserting
 * it adds the least travel time while every task of that route still fits (windows, capacity,
 * shift, pick-up before drop-off), at that place, by an `assign` command the system issues
 * (`user` null, `notes` `auto_assign`) that also writes `route` and `position`. When nothing fits
 * the task stays unassigned and `task.auto_assign_failed` says why (§16's reasons).
 *
 * The insertion itself is the solver's (src/solver/insert.ts); this reads the day, builds one
 * small instance per route, and writes the outcome. It runs inside the account's stream object
 * (durable-objects/account-stream), one call at a time per account, so two tasks arriving
 * together never both take the last room of one route: the second is placed against the route
 * as the first left it.
 */
import { accountEnv } from "../../db/shards";
import { uuidBytes, uuidText } from "../../db/uuid-bytes";
import { taskWriter } from "../../durable-objects/task/client";
import { reverse } from "../../http/urls";
import { uuidv7 } from "../../lib/ids";
import { cheapestInsertion, type InsertionRoute } from "../../solver/insert";
import type { Job, Shipment, UnassignedReason } from "../../solver/types";
import { bulkEventStatements } from "../events/outbox";
import { positionFreshMs } from "../positions/fresh";
import {
  type AccountShift,
  clockOn,
  dayIn,
  demandValue,
  seconds,
  windowOf,
} from "../route-optimizations/build";
import { insertRoute, type RouteRow } from "../routes";
import { matrixFromEnv, type Point } from "../routing";
import type { Actor } from "../task-commands/types";
import { parseJson, type TaskRow } from "../tasks/types";

/**
 * What the insertion reads of a task: no whole rows (a day of 50 routes is 2,000 of them, and
 * their JSON columns cost more to read than the insertion costs to run); the location and the
 * demand are taken out of their JSON by SQLite.
 */
type StopRow = Pick<
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
  json_extract(t.metafields, '$.demand'))`;
const stopsOf = (json: unknown): StopRow[] =>
  parseJson<unknown[][]>(typeof json === "string" ? json : "[]", []).map(
    (a) => Object.fromEntries(STOP_FIELDS.map((f, i) => [f, a[i] ?? null])) as StopRow,
  );

const pt = (t: { lon: number | null; lat: number | null } | undefined): Point | null =>
  t &&
  typeof t.lon === "number" &&
  typeof t.lat === "number" &&
  Number.isFinite(t.lon) &&
  Number.isFinite(t.lat)
    ? [t.lon, t.lat]
    : null;

// A string is read as JSON, as it was when rows were read one by one (json_extract gives a list as its text).
const demandOf = (t: StopRow) =>
  demandValue(typeof t.demand === "string" ? parseJson<unknown>(t.demand, null) : t.demand);

export type AutoAssignResult = {
  taskId: string;
  assigneeId: string | null;
  routeId: string | null;
  position: number | null;
  reason: UnassignedReason | null;
};

const OPEN = ["assigned", "accepted", "transit", "active"];

type Worker = { user_id: string; name: string; vehicle_capacity: string };
/** Of today's route, what the insertion reads: its id and where it starts and ends. */
type LaneRoute = { id: string; start: Point | null; end: Point | null };
/** A route as the insertion sees it: today's, of an on-duty worker (or one to make for them). */
type Lane = {
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
 * The stops of today's routes as last read, kept by the account's stream object between
 * insertions with each route's fingerprint (its tasks' count, sum of versions and latest change:
 * every write of a task moves its version). A route whose fingerprint moved is read again; the
 * others are not (a day of 50 routes of 40 stops is 2,000 rows, read once, not per insertion).
 */
export type DayCache = { day: string; zone: string; routes: Map<string, { key: string; rows: StopRow[] }> };
export const newDayCache = (): DayCache => ({ day: "", zone: "", routes: new Map() });

/** A JSON list read in one D1 value (see STOP_ARRAY: bytes and values, not the query, are the cost). */
const listOf = <T>(res: D1Result, column: string): T[] =>
  parseJson<T[]>(((res.results[0] ?? {}) as Record<string, string | null>)[column] ?? "[]", []);
const point = (lon: unknown, lat: unknown) => pt({ lon: lon as number | null, lat: lat as number | null });

/**
 * The day's reads in one batch: the account's shift, the on-duty workers, the tasks asked for,
 * today's routes of those workers with each route's fingerprint, and the fresh positions.
 * "Today" is in the account's zone, which the batch itself reads: the day of the zone last seen
 * (else UTC's) is assumed, and read again in a second batch only when the zone says otherwise.
 */
async function readDay(
  env: Env,
  accountId: string,
  taskIds: string[],
  now: number,
  cache: DayCache = newDayCache(),
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
  const [accountRes, workersRes, askedRes, positionsRes, guessRes] = await db.batch([
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
    db
      .prepare(
        `SELECT json_group_array(json_array(${uuidText("user_id")}, lon, lat)) AS positions FROM worker_positions
         WHERE account_id = ${uuidBytes()} AND time >= ?`,
      )
      .bind(accountId, now - positionFreshMs(env)),
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
  const fixes = new Map(
    listOf<[string, number, number]>(positionsRes, "positions").map(([user, lon, lat]) => [
      user,
      [lon, lat] as Point,
    ]),
  );
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
  return { account, today, lanes, asked };
}

/** The account's shift today, epoch seconds. */
type Shift = { start: number; end: number };

const rank = (t: StopRow) => (t.state === "active" ? 0 : t.state === "transit" ? 1 : 2);

/** The solver's instance of one lane with the candidate tasks; its travel table is that lane's points only. */
/**
 * The travel an insertion reads, asked for once per call (contract §16's travel model): each
 * lane's consecutive legs (start, stops, end: one `legs` call over all lanes), and each waiting
 * task to and from every point (`star`). Nothing else of an n × n table is ever read: a stop
 * goes between two neighbours, so only legs that exist and legs to or from a new stop count.
 */
type Chain = {
  points: Point[];
  start: boolean;
  end: boolean;
  stops: StopRow[];
  offset: number;
  legs: number[];
};
type Travel = {
  chains: Map<Lane, Chain>;
  /** The located candidates, in order; their points follow the chains' in `star`'s list. */
  candidates: StopRow[];
  candidateOffset: number;
  /** Per candidate id: seconds to and from every chain point and candidate, in that order. */
  stars: Map<string, { to: number[]; from: number[] }>;
};

/** A lane as a chain of points: its start, its located stops in order, its end. */
function chainOf(lane: Lane): Omit<Chain, "offset" | "legs"> {
  const stops = lane.stops.filter((t) => pt(t));
  const end = lane.route?.end ?? null;
  const points = [...(lane.start ? [lane.start] : []), ...stops.map((t) => pt(t)!), ...(end ? [end] : [])];
  return { points, start: !!lane.start, end: !!end, stops };
}

async function travelOf(env: Env, lanes: Lane[], waiting: StopRow[]): Promise<Travel> {
  const provider = matrixFromEnv(env);
  const chains = new Map<Lane, Chain>();
  const flat: Point[] = [];
  for (const lane of lanes) {
    const c = chainOf(lane);
    chains.set(lane, { ...c, offset: flat.length, legs: [] });
    flat.push(...c.points);
  }
  // One legs call over every chain end to end (the legs between two chains are not read).
  const legs = flat.length > 1 ? await provider.legs(flat) : [];
  for (const c of chains.values()) c.legs = legs.slice(c.offset, c.offset + Math.max(0, c.points.length - 1));
  const candidates = waiting.filter((t) => pt(t));
  const points = [...flat, ...candidates.map((t) => pt(t)!)];
  const stars = new Map<string, { to: number[]; from: number[] }>();
  for (const t of candidates) stars.set(t.id, await provider.star(pt(t)!, points));
  return { chains, candidates, candidateOffset: flat.length, stars };
}

/**
 * The solver's instance of one lane with the candidate tasks, its travel read from `travel`: a
 * location per point of the chain, then one per candidate (no two stops merged: two at one
 * place are two locations with no travel between them).
 */
function laneInstance(lane: Lane, travel: Travel, account: AccountShift, shift: Shift): InsertionRoute {
  const chain = travel.chains.get(lane)!;
  const candidates = travel.candidates;
  const n = chain.points.length;
  const L = n + candidates.length;
  // Seconds, Infinity where never read; the objective is time, so one matrix serves as both.
  const durations = new Float32Array(L * L).fill(Number.POSITIVE_INFINITY);
  for (let i = 0; i < L; i++) durations[i * L + i] = 0;
  chain.legs.forEach((seconds, i) => {
    durations[i * L + i + 1] = seconds;
  });
  candidates.forEach((t, j) => {
    const star = travel.stars.get(t.id)!;
    const u = n + j;
    for (let k = 0; k < n; k++) {
      durations[u * L + k] = star.to[chain.offset + k];
      durations[k * L + u] = star.from[chain.offset + k];
    }
    for (let k = 0; k < candidates.length; k++) {
      if (k === j) continue;
      durations[u * L + n + k] = star.to[travel.candidateOffset + k];
      durations[(n + k) * L + u] = star.from[travel.candidateOffset + k];
    }
  });
  const located = chain.stops;
  const locationOf = new Map<string, number>([
    ...located.map((t, k) => [t.id, k + (chain.start ? 1 : 0)] as const),
    ...candidates.map((t, j) => [t.id, n + j] as const),
  ]);
  const start = chain.start ? 0 : undefined;
  const end = chain.end ? n - 1 : undefined;
  const margin = seconds(account.optimize_visit_duration_margin || "00:00:00");
  const job = (t: StopRow): Job => ({
    id: t.id,
    location: locationOf.get(t.id)!,
    service: (t.duration_seconds ?? 0) + margin,
    timeWindow: windowOf(t),
    demand: demandOf(t),
  });
  // An order's pick-up and drop-off both here (on the route or new): a shipment.
  // A candidate already on this lane (placed by an earlier task of the call) is one of its stops.
  const all = [...located, ...candidates.filter((t) => !located.includes(t))];
  const byOrder = new Map<string, StopRow[]>();
  for (const t of all) {
    if (!t.order_id) continue;
    const group = byOrder.get(t.order_id);
    if (group) group.push(t);
    else byOrder.set(t.order_id, [t]);
  }
  const shipments: Shipment[] = [];
  const paired = new Set<string>();
  for (const group of byOrder.values()) {
    const up = group.filter((t) => t.category === "pick_up");
    const down = group.filter((t) => t.category === "drop_off");
    if (up.length === 1 && down.length === 1) {
      const demand = demandOf(down[0]).length ? demandOf(down[0]) : demandOf(up[0]);
      shipments.push({
        pickup: { ...job(up[0]), demand: [] },
        delivery: { ...job(down[0]), demand: [] },
        demand,
      });
      paired.add(up[0].id).add(down[0].id);
    }
  }
  return {
    instance: {
      locations: L,
      distances: durations,
      durations,
      vehicles: [
        {
          id: lane.route?.id ?? lane.worker.user_id,
          start,
          end,
          shiftStart: shift.start,
          shiftEnd: shift.end,
          capacity: parseJson<number[]>(lane.worker.vehicle_capacity ?? "[]", []),
        },
      ],
      jobs: all.filter((t) => !paired.has(t.id)).map(job),
      shipments,
      objective: "duration",
    },
    order: located.map((t) => t.id),
    fixed: located.filter((t) => t.state === "active" || t.state === "transit").length,
  };
}

/** The route order's numbers around index `at` of the located stops: a position between them. */
function positionAt(lane: Lane, order: string[], at: number): number {
  const pos = (id: string | undefined) => lane.stops.find((t) => t.id === id)?.position ?? null;
  const before = at > 0 ? pos(order[at - 1]) : null;
  const after = at < order.length ? pos(order[at]) : null;
  if (before !== null && after !== null) return (before + after) / 2;
  if (after !== null) return before === null && at === 0 ? after - 1 : after;
  if (before !== null) return Math.max(before, lane.lastPosition ?? before) + 1;
  return (lane.lastPosition ?? 0) + 1;
}

const SYSTEM: Omit<Actor, "accountId"> = {
  userId: null,
  role: "system",
  allowWorkerReordering: true,
  transitActiveLimit: null,
  failedReasons: [],
};

/**
 * Inserts `taskIds` in the order given (contract §29), each against the routes as the ones
 * before it left them. A task that is not unassigned is reported as it stands (a repeated call
 * changes nothing); one that fits nowhere keeps its state and, with `announce`, gets its
 * `task.auto_assign_failed` event.
 */
export async function autoAssign(
  env: Env,
  accountId: string,
  taskIds: string[],
  baseUrl: string,
  opts: { now?: number; announce?: boolean; cache?: DayCache; strict?: boolean } = {},
): Promise<AutoAssignResult[] | { missing: number[] }> {
  const now = opts.now ?? Date.now();
  env = await accountEnv(env, accountId);
  const { account, today, lanes, asked: rows } = await readDay(env, accountId, taskIds, now, opts.cache);
  const byId = new Map(rows.map((t) => [t.id, t]));
  // Asked for by a list (`strict`): a task that is not the account's places nothing (400).
  if (opts.strict && taskIds.some((id) => !byId.has(id)))
    return { missing: taskIds.flatMap((id, i) => (byId.has(id) ? [] : [i])) };
  const waiting = taskIds.map((id) => byId.get(id)).filter((t): t is StopRow => t?.state === "unassigned");
  // One shift for every lane (the account's), in epoch seconds: from now, since nothing is
  // planned in the past (contract §29). Read once per call, not per lane: a zone's offset costs
  // an `Intl` formatting.
  const shift: Shift = {
    start: Math.max(now / 1000, clockOn(today, account.optimize_earliest_start, account.timezone)),
    end: clockOn(today, account.optimize_latest_end, account.timezone),
  };
  const instances = new Map<Lane, InsertionRoute>();
  let travel: Promise<Travel> | null = null;
  const instanceOf = async (lane: Lane) => {
    let inst = instances.get(lane);
    if (!inst) {
      travel ??= travelOf(env, lanes, waiting);
      inst = laneInstance(lane, await travel, account, shift);
      instances.set(lane, inst);
    }
    return inst;
  };
  const out: AutoAssignResult[] = [];
  const failed: { id: string; reason: UnassignedReason }[] = [];
  const done = new Map<string, AutoAssignResult>();
  for (const id of taskIds) {
    const task = byId.get(id);
    const already = done.get(id);
    if (already) {
      out.push(already);
      continue;
    }
    if (task?.state !== "unassigned") {
      out.push({
        taskId: id,
        assigneeId: task?.assignee_id ?? null,
        routeId: task?.route_id ?? null,
        position: task?.position ?? null,
        reason: null,
      });
      continue;
    }
    const placed = await place(task);
    for (const r of placed) {
      done.set(r.taskId, r);
      if (r.reason) failed.push({ id: r.taskId, reason: r.reason });
    }
    out.push(placed.find((r) => r.taskId === id)!);
  }
  if (opts.announce && failed.length)
    await env.DB.batch(
      bulkEventStatements(
        env.DB,
        accountId,
        failed.map((f) => ({
          type: "task.auto_assign_failed" as const,
          objectId: f.id,
          data: { task: reverse(baseUrl, "tasks", f.id), reason: f.reason },
        })),
        { now, onlyIfExistsIn: "tasks" },
      ),
    );
  return out;

  /** One task (with its order's other half when both wait): its placement, written. */
  async function place(task: StopRow): Promise<AutoAssignResult[]> {
    const none = (reason: UnassignedReason): AutoAssignResult => ({
      taskId: task.id,
      assigneeId: null,
      routeId: null,
      position: null,
      reason,
    });
    if (!pt(task)) return [none("unreachable")];
    // The order's other half on a route already: only that route may take it.
    const partnerLane = task.order_id
      ? lanes.find((l) => l.stops.some((s) => s.order_id === task.order_id && s.id !== task.id))
      : undefined;
    const partnerOpenElsewhere =
      !partnerLane && task.order_id
        ? rows.some((t) => t.order_id === task.order_id && t.id !== task.id && OPEN.includes(t.state))
        : false;
    if (partnerOpenElsewhere) return [none("shift")];
    const candidates = partnerLane ? [partnerLane] : lanes;
    const built = await Promise.all(candidates.map(instanceOf));
    const best = cheapestInsertion(built, task.id);
    if ("reason" in best) return [none(best.reason)];
    const lane = candidates[best.route];
    const inst = built[best.route];
    const partner =
      best.pickupPosition !== undefined
        ? waiting.find((t) => t.order_id === task.order_id && t.id !== task.id && t.state === "unassigned")
        : undefined;
    const route = lane.route ?? (await newRoute(lane));
    const placements: [StopRow, number][] = [];
    if (partner && best.pickupPosition !== undefined) {
      // The pick-up at its place, then the drop-off at its place in the order as it then is.
      const [up, down] = task.category === "pick_up" ? [task, partner] : [partner, task];
      const p = best.pickupPosition;
      placements.push([up, p], [down, best.position]);
    } else placements.push([task, best.position]);
    const results: AutoAssignResult[] = [];
    for (const [t, at] of placements) {
      const position = positionAt(lane, inst.order, at);
      const ok = await assign(t, lane.worker.user_id, route.id, position);
      if (ok) {
        // The lane as it now is: the next task is placed against it.
        inst.order.splice(at, 0, t.id);
        const row = {
          ...t,
          state: "assigned" as const,
          assignee_id: lane.worker.user_id,
          route_id: route.id,
          position,
        };
        lane.stops.splice(lane.stops.length, 0, row);
        lane.stops.sort((a, b) => inst.order.indexOf(a.id) - inst.order.indexOf(b.id));
        t.state = "assigned";
      }
      results.push(
        ok
          ? { taskId: t.id, assigneeId: lane.worker.user_id, routeId: route.id, position, reason: null }
          : { taskId: t.id, assigneeId: null, routeId: null, position: null, reason: null },
      );
    }
    return results;
  }

  async function newRoute(lane: Lane): Promise<LaneRoute> {
    const row: RouteRow = {
      id: uuidv7(now),
      account_id: accountId,
      name: `${lane.worker.name} ${today}`,
      assignee_id: lane.worker.user_id,
      date: today,
      state: "active",
      objective: "duration",
      start_address: null,
      end_address: null,
      metafields: "{}",
      distance_m: null,
      duration_s: null,
      created_at: now,
      updated_at: now,
    };
    await insertRoute(env.DB, row);
    lane.route = { id: row.id, start: null, end: null };
    return lane.route;
  }

  /** The system's `assign` with the route and position (contract §29); false when the task moved meanwhile. */
  async function assign(t: StopRow, worker: string, routeId: string, position: number): Promise<boolean> {
    const r = await taskWriter(env, t.id).applyOne({
      actor: { ...SYSTEM, accountId },
      taskId: t.id,
      command: {
        id: uuidv7(now),
        // One per task and version: a retried insertion applies nothing twice (contract §6).
        externalId: `system:auto_assign:${t.id}:${t.version}`,
        taskId: t.id,
        action: "assign",
        time: now,
        assigneeId: worker,
        taskData: { route: reverse(baseUrl, "routes", routeId), position },
        routeId,
        notes: "auto_assign",
        location: null,
        places: true,
      },
      baseUrl,
    });
    return !r.error && r.outcome?.row.state === "accepted";
  }
}
