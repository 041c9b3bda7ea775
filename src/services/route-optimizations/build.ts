/**
 * The solver's instance from routes and tasks (contract §16): each route is a vehicle (its
 * assignee's shift on the route's date in the account's time zone, its start/end addresses, the
 * assignee's `vehicle_capacity`); each task a visit of `duration` + the account's margin within
 * `complete_after`/`complete_before` (unless ignored), with its metafield `demand`. An order's
 * single pick-up and single drop-off travel together, pick-up first. Re-planning from now
 * (contract §29, from-now.ts): each route starts where its worker is, at the later of now and its
 * shift's start, with its stops under way fixed first; with `reassign: false` each assigned task
 * is pinned to a route of its assignee. Pure: rows in, instance out.
 */

import { dayIn } from "../../domain/time-zones";
import { parseTimestamp } from "../../http/timezones";
import type { Instance, Job, Shipment, Vehicle } from "../../solver/types";
import type { RouteRow } from "../routes";
import type { Grid, Point } from "../routing";
import { parseJson, type TaskRow } from "../tasks/types";
import { pointOf } from "./from-now";

export type AccountShift = {
  timezone: string;
  optimize_earliest_start: string;
  optimize_latest_end: string;
  optimize_visit_duration_margin: string;
};
export type Assignee = { vehicle_capacity: string };

/** Seconds of a clock text `HH:MM:SS` (a shift's start, a visit margin). */
export const seconds = (hms: string) => {
  const [h, m, s] = hms.split(":").map(Number);
  return h * 3600 + m * 60 + (s || 0);
};

/** Epoch seconds of `HH:MM:SS` on `date` in `zone`. */
function at(date: string, hms: string, zone: string): number {
  const ms =
    parseTimestamp(`${date}T${hms}`, zone === "UTC" ? null : zone) ?? parseTimestamp(`${date}T${hms}Z`, null);
  return (ms ?? 0) / 1000;
}

/** Epoch seconds of a shift's clock time on a day (auto-assign's shifts too). */
export const clockOn = at;

/** The day of `ms` in `zone`, `YYYY-MM-DD` (domain/time-zones). */
export { dayIn };

export function demandOf(task: TaskRow): number[] {
  return demandValue(parseJson<Record<string, unknown>>(task.metafields, {}).demand);
}

/**
 * An order's pick-up and drop-off as the solver's shipment (contract §16): the load is the
 * drop-off's demand, else the pick-up's, carried from one to the other.
 */
export function shipmentOf(up: Job, down: Job, upDemand: number[], downDemand: number[]): Shipment {
  return {
    pickup: { ...up, demand: [] },
    delivery: { ...down, demand: [] },
    demand: downDemand.length ? downDemand : upDemand,
  };
}

/** A metafield `demand`'s value (contract §16): an integer, or a list of up to 3; else none. */
export function demandValue(d: unknown): number[] {
  if (typeof d === "number" && Number.isFinite(d)) return [Math.max(0, d)];
  if (Array.isArray(d))
    return d.map((x) => (typeof x === "number" && Number.isFinite(x) ? Math.max(0, x) : 0)).slice(0, 3);
  return [];
}

/** A task's window in the solver's seconds; undefined: any time in the shift. */
export function windowOf(
  t: Pick<TaskRow, "complete_after" | "complete_before">,
): [number, number] | undefined {
  if (t.complete_after === null && t.complete_before === null) return undefined;
  return [
    t.complete_after === null ? Number.NEGATIVE_INFINITY : t.complete_after / 1000,
    t.complete_before === null ? Number.POSITIVE_INFINITY : t.complete_before / 1000,
  ];
}

/**
 * The solver's options for the API's optimizations, beside the seed and the budget: no fleet
 * phase. The API's budget is iterations (`ROUTE_OPTIMIZATION_ITERATIONS`), and an iteration of
 * the fleet phase places a route's worth of stops again, several times an annealing iteration's
 * work: its default 0.2 of the iterations took bench section 8's solve (1,000 stops, 50 routes)
 * from 7.2 to 13.9 s in the queue's consumer, for no shorter plan (bench/VRP.md, "Session 4").
 */
export const SOLVE_OPTIONS = { fleetMinimisation: 0 } as const;

/** The solver's seed for an optimization: from its id (FNV-1a), so a re-run solves alike. */
export const seedOf = (id: string) => {
  let h = 2166136261;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  return h >>> 0;
};

export type Built = {
  instance: Instance;
  points: Point[];
  /** Tasks left out before solving (no location): reason `unreachable`. */
  noLocation: TaskRow[];
  /** Tasks left out with `reassign: false` (no given route keeps their assignee): reason `shift`. */
  noRoute: TaskRow[];
};

/** Re-planning from now (contract §29): the time (epoch ms), each route's start place, its stops under way. */
export type FromNow = { now: number; starts: Map<string, Point>; fixed: Map<string, string[]> };

/** Points of the routes' depots and the tasks (and where routes start from now), deduplicated; what the matrix is asked for. */
export function collectPoints(
  routes: { start_address: string | null; end_address: string | null }[],
  tasks: { address: string | null }[],
  starts: Iterable<Point> = [],
): { points: Point[]; index: Map<string, number> } {
  const points: Point[] = [];
  const index = new Map<string, number>();
  const add = (p: Point | null) => {
    if (!p) return;
    const key = `${p[0]},${p[1]}`;
    if (!index.has(key)) {
      index.set(key, points.length);
      points.push(p);
    }
  };
  for (const r of routes) {
    add(pointOf(r.start_address));
    add(pointOf(r.end_address));
  }
  for (const t of tasks) add(pointOf(t.address));
  for (const p of starts) add(p);
  return { points, index };
}

export function buildInstance(args: {
  routes: RouteRow[];
  tasks: TaskRow[];
  account: AccountShift;
  assignees: Map<string, Assignee>;
  matrix: Grid;
  points: { points: Point[]; index: Map<string, number> };
  ignoreTimeWindows: boolean;
  objective: Instance["objective"];
  today: string;
  fromNow?: FromNow | null;
  /** With `reassign: false`: the route each assigned task is pinned to (null: none keeps its assignee). */
  pins?: Map<string, string | null> | null;
}): Built {
  const { routes, tasks, account, assignees, matrix, points, fromNow } = args;
  const locAt = (p: Point | null | undefined) => (p ? points.index.get(`${p[0]},${p[1]}`) : undefined);
  const locOf = (json: string | null) => locAt(pointOf(json));
  const margin = seconds(account.optimize_visit_duration_margin || "00:00:00");
  const vehicles: Vehicle[] = routes.map((r) => {
    const date = r.date ?? args.today;
    const capacity = r.assignee_id
      ? parseJson<number[]>(assignees.get(r.assignee_id)?.vehicle_capacity ?? "[]", [])
      : [];
    const shiftStart = at(date, account.optimize_earliest_start, account.timezone);
    return {
      id: r.id,
      start: locAt(fromNow?.starts.get(r.id)) ?? locOf(r.start_address),
      end: locOf(r.end_address),
      // From now: no arrival is planned before now.
      shiftStart: fromNow ? Math.max(fromNow.now / 1000, shiftStart) : shiftStart,
      shiftEnd: at(date, account.optimize_latest_end, account.timezone),
      capacity,
    };
  });
  const noLocation: TaskRow[] = [];
  const noRoute: TaskRow[] = [];
  const located = tasks.filter((t) => {
    if (locOf(t.address) === undefined) noLocation.push(t);
    else if (args.pins?.get(t.id) === null) noRoute.push(t);
    else return true;
    return false;
  });
  const ids = new Set(located.map((t) => t.id));
  // The stops under way stay first on their route; a task without a location is not among them.
  const fixedOn = new Map<string, string>();
  for (const v of vehicles) {
    const fixed = (fromNow?.fixed.get(v.id) ?? []).filter((id) => ids.has(id));
    if (fixed.length) v.fixed = fixed;
    for (const id of fixed) fixedOn.set(id, v.id);
  }
  const job = (t: TaskRow): Job => ({
    id: t.id,
    location: locOf(t.address)!,
    service: (t.duration_seconds ?? 0) + margin,
    timeWindow: args.ignoreTimeWindows ? undefined : windowOf(t),
    demand: demandOf(t),
    vehicle: fixedOn.get(t.id) ?? args.pins?.get(t.id) ?? undefined,
  });
  // An order with exactly one pick-up and one drop-off here: a shipment (same route, pick-up first).
  const byOrder = new Map<string, TaskRow[]>();
  for (const t of located) if (t.order_id) byOrder.set(t.order_id, [...(byOrder.get(t.order_id) ?? []), t]);
  const shipments: Shipment[] = [];
  const paired = new Set<string>();
  const pinnedTo = new Map<string, string>();
  for (const group of byOrder.values()) {
    const ups = group.filter((t) => t.category === "pick_up");
    const downs = group.filter((t) => t.category === "drop_off");
    if (ups.length !== 1 || downs.length !== 1) continue;
    // A pick-up under way rides first on its route: its drop-off is pinned there, after it.
    const under = fixedOn.get(ups[0].id);
    if (under) {
      if (!fixedOn.has(downs[0].id)) pinnedTo.set(downs[0].id, under);
      continue;
    }
    if (fixedOn.has(downs[0].id)) continue;
    if (job(ups[0]).vehicle === job(downs[0]).vehicle) {
      shipments.push(shipmentOf(job(ups[0]), job(downs[0]), demandOf(ups[0]), demandOf(downs[0])));
      paired.add(ups[0].id).add(downs[0].id);
    }
  }
  return {
    instance: {
      // The grid's 32-bit rows, as they are: the solver reads them without a copy.
      locations: matrix.size,
      distances: matrix.distances,
      durations: matrix.durations,
      vehicles,
      jobs: located
        .filter((t) => !paired.has(t.id))
        .map((t) => {
          const j = job(t);
          return pinnedTo.has(t.id) ? { ...j, vehicle: pinnedTo.get(t.id) } : j;
        }),
      shipments,
      objective: args.objective,
    },
    points: points.points,
    noLocation,
    noRoute,
  };
}

/**
 * Memory (contract §16, §22): a Worker has 128 MB. One optimization holds its two travel
 * matrices (32-bit floats: 8 bytes per pair of locations), per stop its task row, job and
 * bounded neighbour list, and the runtime, code and the search's short-lived copies around
 * them. Measured (bench/VRP.md, "Memory"): a 2,000-stop city instance takes 38 MB of heap with
 * its matrices (31 MB of it) and peaks at 51 MB while 20,000 iterations solve it; the estimate
 * below says 78 MB for it, and refuses what it puts above the limit.
 */
export const WORKER_MEMORY_MB = 128;
const RESERVED_BYTES = 32 * 2 ** 20;
const BYTES_PER_STOP = 8 * 1024;

/** Bytes one optimization of `stops` visits over `locations` distinct points is expected to take. */
export function optimizationBytes(locations: number, stops: number): number {
  return RESERVED_BYTES + 8 * locations * locations + BYTES_PER_STOP * stops;
}

/** The most distinct locations that fit in `memoryMb` with `stops` visits. */
export function maxLocations(memoryMb: number, stops: number): number {
  const room = memoryMb * 2 ** 20 - RESERVED_BYTES - BYTES_PER_STOP * stops;
  return room > 0 ? Math.floor(Math.sqrt(room / 8)) : 0;
}

/** The memory one optimization may take: OPTIMIZATION_MEMORY_MB, at most the Worker's. */
export function memoryLimitMb(env: { OPTIMIZATION_MEMORY_MB?: string }): number {
  const n = Number(env.OPTIMIZATION_MEMORY_MB);
  return Number.isFinite(n) && n > 0 ? Math.min(n, WORKER_MEMORY_MB) : WORKER_MEMORY_MB;
}

export const tooBigMessage = (locations: number, stops: number, memoryMb: number) =>
  `Too many locations for one optimization: ${locations} distinct locations with ${stops} visits would not fit in the Worker's ${memoryMb} MB of memory (at most ${maxLocations(memoryMb, stops)} locations with ${stops} visits).`;
