/**
 * The VRP solver (contract §16): capacitated VRP with time windows, shifts, start/end depots,
 * multi-dimensional capacities, service times and pick-up/drop-off pairs. Instance in, solution
 * out: no I/O, no clock; the same instance, seed and iteration budget give the same solution.
 */
import { fleetApplies, minimiseFleet, routesUsed } from "./fleet";
import { compile, leg, type Model, NONE } from "./model";
import { Random } from "./random";
import { Route } from "./route";
import { DEFAULT_SPLIT, removeRoute, ruin } from "./ruin";
import { DEFAULT_BLINK, DEFAULT_RECREATE_ORDERS, Recreate, recreate } from "./search";
import { penalty, State, totalCost } from "./state";
import { tailMove, tailsApply } from "./tails";
import type { Instance, RouteSolution, Solution, SolveOptions, UnassignedReason } from "./types";

export type * from "./types";

export const DEFAULT_ITERATIONS = 20_000;
/**
 * Annealing temperatures in Solomon's units. SISR (§6) uses 100 and 1 with budgets of millions
 * of iterations; with the tens of thousands a Worker affords, a cooler schedule (30 → 0.5)
 * converges further (measured on the Solomon set's five hardest instances: mean gap 3.4 % → 2.2 %).
 */
export const DEFAULT_TEMPERATURES: [number, number] = [30, 0.5];
/** Granular recreate: a job is tried first in the routes of its nearest neighbours, this many. */
export const DEFAULT_NEIGHBOURHOOD = 30;
/**
 * Where the fleet phase runs (short routes, standalone visits), the search after the
 * construction tries a job in the routes of this share of the jobs nearest it, when that is more
 * than DEFAULT_NEIGHBOURHOOD: at 1,000 customers in routes of about ten, 30 neighbours name a
 * handful of routes, and a stop then goes to a worse place or opens a vehicle where a route a
 * little farther would take it. 0.08 (80 neighbours at 1,000 customers; the default 30 up to 375)
 * on Gehring & Homberger's C1 and R1 training instances at 120 s of CPU: mean gap to the
 * distance-only best 2.22 → 1.89 % over four seeds, shorter in 13 of 16 runs (bench/VRP.md,
 * "Session 8: a wider neighbourhood where routes are short"). 80 at 100 customers (Solomon:
 * nearly every job) was worse (mean gap 0.37 %), and 50 or 80 on long routes (r2_10_2) too.
 */
export const SHORT_ROUTE_NEIGHBOURHOOD_SHARE = 0.08;
/** The share of iterations that remove a whole route and may not open a vehicle (fleet minimisation). */
export const DEFAULT_ROUTE_REMOVAL = 0;
/**
 * 2-opt* tail exchanges: each ruin and recreate is preceded by tail exchanges drawn with this
 * probability each (one on average at 0.5). Measured on Gehring & Homberger's 1,000-customer
 * training instances (30 s of CPU, one seed; shares 0, 0.1, 0.3, 0.5, 0.7 of the steps): 0.5 gave
 * −0.4 % (r1_10_2), −1.6 % (r2_10_2), −1.7 % (rc2_10_2), −1.3 % (rc2_10_3) against none.
 */
export const DEFAULT_TAIL_EXCHANGE = 0.5;
/**
 * Fleet minimisation (SISR's, `fleet.ts`): the share of the budget (iterations, or the clock's
 * fraction) spent first on finding a small fleet; the annealing then starts from the smallest
 * fleet found with every job in. 0: none. Standalone visits only (not with pairs, pinned or
 * fixed stops, or `balance`), and only where routes are short (DEFAULT_FLEET_MAX_STOPS).
 * Measured at 30 s of CPU, seed 1: c1_10_3 −1.13 % (96 routes instead of 98; the phase reached
 * 90), rc1_10_2 −0.14 %; bench/VRP.md "Session 4".
 */
export const DEFAULT_FLEET_MINIMISATION = 0.2;
/**
 * The fleet phase runs only where the construction's routes are short, this many jobs a route on
 * average at most: capping the fleet helped at 30 s where routes hold about ten customers
 * (c1_10_2, r1_10_2) and hurt where they hold 35–50 (r2_10_2 +3.6 %, rc2_10_3 +0.7 % with two or
 * three routes more than the distance-best's fleet).
 */
export const DEFAULT_FLEET_MAX_STOPS = 20;
/**
 * Penalised time windows in the fleet phase (warp.ts; `timeWarp`, 0: off): the phase's recreate
 * may break windows at this weight per unit of time warp (in cost per unit of time; it only ranks
 * positions: what the phase keeps is decided on the warp itself). Measured on Gehring &
 * Homberger's 1,000-customer training instances where the phase runs (C1, R1, RC1), 30 s of CPU,
 * seeds 1–3: better on 12 of 18 instance-seed pairs, C1 by 0.6–1.9 % in 5 of 6, R1 and RC1 within
 * noise, mean −0.40 %; 120 s, seed 1:
 * c1_10_2 −0.30 %, c1_10_3 −1.19 %, r1_10_2 −0.64 %, r1_10_3 −0.03 %; bench/VRP.md "Session 7".
 * The same penalty in the annealing was worse (slower scans where routes are long; a whole
 * solution of a hundred routes is rarely feasible) and is not kept.
 */
export const DEFAULT_TIME_WARP = 1;
export const DEFAULT_WARP_FLEET_WEIGHT = 10;
/** A `progress` callback (a clock) is read once every this many iterations. */
export const PROGRESS_EVERY = 100;

/**
 * Solves `instance`. The budget is in iterations, not seconds: a deployed Worker's clock does
 * not advance during pure computation, and a budget in iterations makes the result
 * reproducible. `onProgress` (optional) is called every 1,000 iterations with the best cost.
 * With `options.progress` (a benchmark's clock: the fraction of its time spent, read every
 * PROGRESS_EVERY iterations), the run stops when it reaches 1 and the annealing follows it.
 */
export function solve(
  instance: Instance,
  options: SolveOptions = {},
  onProgress?: (iteration: number, bestCost: number) => void,
): Solution {
  // Renumbered in place: no copy of the matrices at any size. The instance's matrices are back in
  // their order when this returns or throws (a progress callback may throw).
  const m = compile(instance, { relabel: options.relabel === false ? false : "in-place" });
  try {
    return search(m, options, onProgress);
  } finally {
    m.restore();
  }
}

function search(
  m: Model,
  options: SolveOptions,
  onProgress?: (iteration: number, bestCost: number) => void,
): Solution {
  const rnd = new Random(options.seed ?? 1);
  const clock = options.progress;
  const iterations = Math.max(
    0,
    Math.floor(options.iterations ?? (clock ? Number.POSITIVE_INFINITY : DEFAULT_ITERATIONS)),
  );
  const near = options.neighbourhood ?? DEFAULT_NEIGHBOURHOOD;
  const routeRemoval = options.routeRemoval ?? DEFAULT_ROUTE_REMOVAL;
  const cBar = options.averageRemoved ?? 10;
  const lMax = options.maxStringLength ?? 10;
  const split = options.splitRate ?? DEFAULT_SPLIT;
  const unassignedPenalty = penalty(m);
  const tails = tailsApply(m) ? (options.tailExchange ?? DEFAULT_TAIL_EXCHANGE) : 0;
  const fleetShare = fleetApplies(m)
    ? Math.min(1, Math.max(0, options.fleetMinimisation ?? DEFAULT_FLEET_MINIMISATION))
    : 0;

  const fleetWarp = tailsApply(m) && m.timeNonNegative && (options.timeWarp ?? DEFAULT_TIME_WARP) !== 0;

  // Initial construction: every job by cheapest insertion, the ones far from the depot first.
  const constructed = new State(m);
  // Fixed prefixes first (stops under way): the routes start with them and keep them.
  for (const r of constructed.routes) {
    r.seq = Array.from(m.prefix[r.v]);
    for (const j of r.seq) constructed.routeOf[j] = r.v;
    r.update(m);
  }
  const order = Array.from({ length: m.J }, (_, j) => j);
  const start0 = m.vStart[0];
  if (start0 !== NONE)
    order.sort((a, b) => m.dist[start0 * m.L + m.loc[b]] - m.dist[start0 * m.L + m.loc[a]] || a - b);
  recreate(m, constructed, order, new Recreate(m, null, near));
  constructed.cost = totalCost(m, constructed, unassignedPenalty);
  const initialCost = constructed.cost;
  let best = constructed.snapshot(m);

  // §5's schedule, its temperatures in Solomon's units scaled to the instance's legs.
  const scale = legScale(m);
  const [startT, finalT] = options.temperatures ?? DEFAULT_TEMPERATURES;
  const t0 = startT * scale;
  const tf = finalT * scale;
  const shortRoutes =
    m.J / Math.max(1, routesUsed(constructed)) <= (options.fleetMaxStops ?? DEFAULT_FLEET_MAX_STOPS);
  const searchNear = searchNeighbourhood(m.J, options, fleetShare > 0 && shortRoutes);
  const g = new Recreate(m, rnd, searchNear);
  g.blink = options.blinkRate ?? DEFAULT_BLINK;
  g.orders = options.recreateOrders ?? DEFAULT_RECREATE_ORDERS;
  let spent = 0;
  let it = 0;
  let current = constructed;
  // The annealing's progress runs from 0 to 1 over what the fleet minimisation leaves.
  let from = 0;
  let fleetStats: NonNullable<Solution["stats"]["fleet"]> | undefined;
  if (fleetShare > 0 && shortRoutes) {
    const phaseIterations = clock ? Number.POSITIVE_INFINITY : Math.floor(iterations * fleetShare);
    const more = () => {
      if (it >= phaseIterations) return false;
      if (clock && it % PROGRESS_EVERY === 0) spent = clock();
      if (spent >= fleetShare) return false;
      it++;
      return true;
    };
    if (fleetWarp) {
      m.warp = true;
      m.warpWeight = (options.timeWarpFleetWeight ?? DEFAULT_WARP_FLEET_WEIGHT) * costPerTime(m);
      // The construction's routes get their segments (recomputed whole: the same times).
      for (const r of current.routes) r.update(m);
    }
    const fleet = minimiseFleet(
      m,
      current.snapshot(m),
      rnd,
      g,
      cBar,
      lMax,
      more,
      undefined,
      undefined,
      fleetWarp,
      split,
    );
    // The annealing is main's, windows hard: the phase's routes (none late) cost their distance.
    if (fleetWarp) {
      m.warp = false;
      m.warpWeight = 0;
      // Without their segments: a copy would copy them for nothing.
      for (const r of (fleet.best ?? current).routes) {
        r.cost = r.seq.length ? r.dist : 0;
        r.seg = new Float64Array(0);
      }
    }
    g.maxRoutes = Number.POSITIVE_INFINITY;
    fleetStats = {
      routes: fleet.best ? routesUsed(fleet.best) : null,
      iterations: fleet.iterations,
      // The routes' cost: their distance (or duration) here, the warp's weight taken off above.
      distance: fleet.best ? fleet.best.routes.reduce((d, r) => d + r.cost, 0) : null,
      lastFleet: fleet.lastFleet,
    };
    if (fleet.best) {
      current = fleet.best;
      current.cost = totalCost(m, current, unassignedPenalty);
      if (current.cost < best.cost) best = current.snapshot(m);
    }
    from = clock ? fleetShare : it;
  }
  const progress = () => (clock ? (spent - from) / (1 - from) : (it - from) / Math.max(1, iterations - from));
  for (; it < iterations; it++) {
    if (clock && it % PROGRESS_EVERY === 0) {
      spent = clock();
      if (spent >= 1) break;
    }
    // Before each ruin and recreate, tail exchanges, each drawn with probability `tails` (as many
    // as the draws allow: on average tails ÷ (1 − tails)); one only ever shortens the routes, so
    // no annealing. They do not count as iterations: a budget keeps its ruins and recreates.
    while (tails > 0 && rnd.next() < tails) {
      const unassigned = current.begin();
      current.unassigned.push(...unassigned);
      if (tailMove(m, current, rnd, searchNear)) {
        current.cost += current.routesDelta();
        if (current.cost < best.cost) {
          current.cost = totalCost(m, current, unassignedPenalty);
          best = current.snapshot(m);
        }
      }
    }
    const temperature = t0 * (tf / t0) ** progress();
    // One move on the current solution, in place: undone if the annealing rejects it.
    const again = current.begin();
    const dropped: number[] = [];
    g.open = !(routeRemoval > 0 && rnd.next() < routeRemoval);
    if (!g.open) removeRoute(m, current, rnd, dropped);
    const { removed } = ruin(m, current, rnd, cBar, lMax, -1, split);
    recreate(m, current, [...dropped, ...removed, ...again], g);
    const before = current.cost;
    const cost = m.balance
      ? totalCost(m, current, unassignedPenalty)
      : before + current.routesDelta() + (current.unassigned.length - again.length) * unassignedPenalty;
    if (current.changedFeasible() && cost < before - temperature * Math.log(rnd.next() || Number.MIN_VALUE)) {
      current.cost = cost;
      if (cost < best.cost) {
        // Summed deltas drift: the best is costed afresh.
        current.cost = totalCost(m, current, unassignedPenalty);
        best = current.snapshot(m);
      }
    } else current.undo();
    if (onProgress && (it + 1) % 1000 === 0) onProgress(it + 1, best.cost);
  }
  return output(m, best, {
    iterations: it,
    initialCost,
    cost: best.cost,
    ...(fleetStats ? { fleet: fleetStats } : {}),
  });
}

/**
 * The neighbourhood of the search after the construction: `options.neighbourhood` if given;
 * where the fleet phase runs, SHORT_ROUTE_NEIGHBOURHOOD_SHARE of the jobs when that is more than
 * DEFAULT_NEIGHBOURHOOD; else DEFAULT_NEIGHBOURHOOD.
 */
export function searchNeighbourhood(jobs: number, options: SolveOptions, fleetPhase: boolean): number {
  if (options.neighbourhood !== undefined) return options.neighbourhood;
  if (!fleetPhase) return DEFAULT_NEIGHBOURHOOD;
  const share = options.shortRouteNeighbourhood ?? SHORT_ROUTE_NEIGHBOURHOOD_SHARE;
  return Math.max(DEFAULT_NEIGHBOURHOOD, Math.round(jobs * share));
}

/** Cost per unit of time on the legs to each job's ten nearest neighbours (1 where cost is time). */
function costPerTime(m: Model): number {
  let c = 0;
  let t = 0;
  for (let j = 0; j < m.J; j++) {
    const near = m.neighbours[j];
    for (let k = 0; k < Math.min(10, near.length); k++) {
      const a = m.loc[j] * m.L + m.loc[near[k]];
      if (Number.isFinite(m.cost[a]) && Number.isFinite(m.time[a])) {
        c += m.cost[a];
        t += m.time[a];
      }
    }
  }
  return t > 0 && c > 0 ? c / t : 1;
}

/** The mean leg to a job's nearest neighbours over 10 (Solomon instances come out near 1). */
function legScale(m: Model): number {
  let sum = 0;
  let count = 0;
  for (let j = 0; j < m.J; j++) {
    const near = m.neighbours[j];
    for (let k = 0; k < Math.min(10, near.length); k++) {
      const c = m.cost[m.loc[j] * m.L + m.loc[near[k]]];
      if (Number.isFinite(c)) {
        sum += c;
        count++;
      }
    }
  }
  return count ? Math.max(sum / count / 10, 1e-6) : 1;
}

/**
 * Given routes timed as the solver times its own (`Solution.routes`, in the order given): each
 * `{vehicle, jobs}` driven in that order from the vehicle's start and start time, waiting for
 * windows to open, whether or not every window and the shift are kept. What a plan costs as it
 * stands, to compare with a solution through the same travel model. Unknown ids are an error.
 */
export function evaluate(instance: Instance, routes: { vehicle: string; jobs: string[] }[]): RouteSolution[] {
  const m = compile(instance, { neighbours: false });
  const jobs = new Map(m.ids.map((id, j) => [id, j]));
  const vehicles = new Map(m.vIds.map((id, v) => [id, v]));
  return routes.map(({ vehicle, jobs: ids }) => {
    const v = vehicles.get(vehicle);
    if (v === undefined) throw new Error(`Unknown vehicle ${vehicle}.`);
    const r = new Route(v);
    r.seq = ids.map((id) => {
      const j = jobs.get(id);
      if (j === undefined) throw new Error(`Unknown job ${id}.`);
      return j;
    });
    r.update(m);
    return routeSolution(m, r);
  });
}

/** One route's stops, times and figures (an empty route: none, 0). */
function routeSolution(m: Model, r: Route): RouteSolution {
  const v = r.v;
  if (!r.seq.length) return { vehicle: m.vIds[v], stops: [], distance: 0, duration: 0 };
  // Leave as late as the first stop allows: no waiting at it (its start stays the earliest).
  const first = r.seq[0];
  const leave = Math.max(m.vShiftA[v], r.es[0] - leg(m, m.time, m.vStart[v], m.loc[first]));
  let prev = m.vStart[v];
  let t = leave;
  let dist = 0;
  const stops = r.seq.map((j) => {
    const l = m.loc[j];
    const legDistance = leg(m, m.dist, prev, l);
    const legDuration = leg(m, m.time, prev, l);
    const arrival = t + legDuration;
    const start = Math.max(arrival, m.twA[j]);
    const departure = start + m.svc[j];
    dist += legDistance;
    t = departure;
    prev = l;
    return { job: m.ids[j], arrival, start, departure, distance: legDistance, duration: legDuration };
  });
  dist += leg(m, m.dist, prev, m.vEnd[v]);
  const end = t + leg(m, m.time, prev, m.vEnd[v]);
  return { vehicle: m.vIds[v], stops, distance: dist, duration: end - leave };
}

function output(m: Model, s: State, stats: Solution["stats"]): Solution {
  const routes: RouteSolution[] = [];
  let distance = 0;
  let duration = 0;
  for (const r of s.routes) {
    if (!r.seq.length) continue;
    const solved = routeSolution(m, r);
    routes.push(solved);
    distance += solved.distance;
    duration += solved.duration;
  }
  const unassigned = s.unassigned
    .slice()
    .sort((a, b) => a - b)
    .map((j) => ({ job: m.ids[j], reason: reasonFor(m, j) }));
  return { routes, unassigned, distance, duration, stats };
}

/**
 * Why a job is left out, the first that holds (contract §16): no path; a demand above every
 * vehicle's capacity; alone on any vehicle it cannot start in its window; else the shifts.
 * "Any vehicle" is the one it is pinned to, if any; "alone" is after the vehicle's fixed prefix.
 */
export function reasonFor(m: Model, j: number): UnassignedReason {
  const jobs = m.partner[j] === NONE ? [j] : [Math.min(j, m.partner[j]), Math.max(j, m.partner[j])];
  const candidates = m.only[j] === NONE ? Array.from({ length: m.V }, (_, v) => v) : [m.only[j]];
  const reachable = candidates.filter((v) =>
    jobs.every((x) => {
      const l = m.loc[x];
      return (
        l !== NONE &&
        Number.isFinite(leg(m, m.time, afterPrefix(m, v).at, l)) &&
        Number.isFinite(leg(m, m.time, l, m.vEnd[v]))
      );
    }),
  );
  if (!reachable.length) return "unreachable";
  const fits = (v: number) =>
    Array.from({ length: m.D }, (_, d) => m.dem[jobs[0] * m.D + d]).every(
      (x, d) => Math.abs(x) <= m.vCap[v * m.D + d] + 1e-9,
    );
  const fitting = reachable.filter(fits);
  if (!fitting.length) return "capacity";
  // Alone on a vehicle (after its fixed stops): can each job start inside its window?
  if (!fitting.some((v) => startsInWindow(m, v, jobs))) return "time_window";
  return "shift";
}

/** Where and when vehicle `v` is after its fixed prefix (its start, at its start time, when none). */
function afterPrefix(m: Model, v: number): { at: number; t: number } {
  let t = m.vShiftA[v];
  let at = m.vStart[v];
  for (const j of m.prefix[v]) {
    t = Math.max(t + leg(m, m.time, at, m.loc[j]), m.twA[j]) + m.svc[j];
    at = m.loc[j];
  }
  return { at, t };
}

/** Alone on vehicle `v` after its fixed prefix, each job (a pair: pick-up first) starts in its window. */
function startsInWindow(m: Model, v: number, jobs: number[]): boolean {
  let { t, at: prev } = afterPrefix(m, v);
  for (const j of jobs) {
    const start = Math.max(t + leg(m, m.time, prev, m.loc[j]), m.twA[j]);
    if (start > m.twB[j]) return false;
    t = start + m.svc[j];
    prev = m.loc[j];
  }
  return true;
}
