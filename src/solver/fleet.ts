/**
 * Fleet minimisation, after SISR's (Christiaens & Vanden Berghe, Transportation Science 54(2),
 * 2020): a route is taken out and its stops left unassigned; ruins and recreates then try to
 * place them with one route fewer than the last fleet that served every job (a vehicle a ruin
 * empties may be used again within that cap, `Recreate.maxRoutes`). Each job counts how often a
 * recreate left it out (its absences); a result is kept when it leaves fewer jobs out, or jobs
 * whose absences sum lower (the hard ones are placed first, the easy ones are left for later).
 * Whenever every job is in, that solution is the smallest fleet so far, and the next route comes
 * out.
 */
import { type Model, NONE, VISIT } from "./model";
import type { Random } from "./random";
import { DEFAULT_SPLIT, ruin } from "./ruin";
import { type Recreate, recreate } from "./search";
import type { State } from "./state";

/**
 * Whether the phase applies: standalone visits only (no pairs, no pinned or fixed stops), not
 * with `balance` (its routes' lengths matter more than their number), and a fleet of 2 or more.
 */
export function fleetApplies(m: Model): boolean {
  if (m.balance || m.V < 2) return false;
  for (let j = 0; j < m.J; j++) if (m.kind[j] !== VISIT || m.only[j] !== NONE) return false;
  for (let v = 0; v < m.V; v++) if (m.fixedCount[v]) return false;
  return true;
}

/** The number of routes with a stop. */
export function routesUsed(s: State): number {
  let n = 0;
  for (const r of s.routes) if (r.seq.length) n++;
  return n;
}

/**
 * The phase's search on `s` (changed in place), each job's absences in `absences`. `more()` says
 * whether to go on (read before each iteration; the caller's budget). Returns the smallest-fleet
 * solution with every job assigned that it saw (a snapshot; `s` itself if it never had every job
 * in and no route could be taken out), the iterations made and the one that found that fleet.
 * `g` is the search's recreate: its cap on the routes (`maxRoutes`) is left set for the caller
 * to lift.
 */
export function minimiseFleet(
  m: Model,
  s: State,
  rnd: Random,
  g: Recreate,
  cBar: number,
  lMax: number,
  more: () => boolean,
  absences: Int32Array = new Int32Array(m.J),
  around = 0.5,
  warp = false,
  split = DEFAULT_SPLIT,
): { best: State | null; iterations: number; lastFleet: number } {
  let best: State | null = null;
  let iterations = 0;
  // The iteration that found the last (smallest) fleet (a figure for the caller's stats).
  let lastFleet = 0;
  const sumAbsences = (jobs: number[]) => {
    let x = 0;
    for (const j of jobs) x += absences[j];
    return x;
  };
  // Every job in: keep it, take a route out, and aim at one route fewer (a ruin that empties a
  // route frees its vehicle for the recreate, within the target). Until one route is left.
  // With penalised time windows (`warp`, warp.ts; `Model.warpWeight` set by the caller), a removed
  // route's jobs go in wherever the load fits, windows broken at a cost, and a result is kept when
  // it leaves fewer jobs out, or as many and no more time warp (a descent on the warp, drifting on
  // its plateaus); a fleet counts once every job is in and no window is broken.
  const settle = () => {
    while (!s.unassigned.length && (!warp || totalWarp(s) === 0)) {
      best = s.snapshot(m);
      lastFleet = iterations;
      const used = routesUsed(s);
      if (used < 2) return false;
      g.maxRoutes = used - 1;
      removeEasiestRoute(m, s, absences);
    }
    return true;
  };
  if (!settle()) return { best, iterations, lastFleet };
  let warpBefore = warp ? totalWarp(s) : 0;
  while (more()) {
    iterations++;
    const again = s.begin();
    // Ruined around a job left out (the routes near it make room), else anywhere.
    // With time warp: around a job on a route that breaks its windows, likewise.
    const at = again.length
      ? rnd.next() < around
        ? again[rnd.int(again.length)]
        : -1
      : warp && rnd.next() < around
        ? lateJob(s, rnd)
        : -1;
    const { removed } = ruin(m, s, rnd, cBar, lMax, at, split);
    recreate(m, s, [...removed, ...again], g);
    const out = s.unassigned;
    for (const j of out) absences[j]++;
    // Hard windows: a removal that broke one (travel times off the triangle inequality) is undone.
    let better = out.length < again.length && (warp || s.changedFeasible());
    const now = warp ? totalWarp(s) : 0;
    if (!better && out.length === again.length) {
      if (!warp) better = s.changedFeasible() && sumAbsences(out) < sumAbsences(again);
      else
        better =
          now < warpBefore || (now === warpBefore && (now > 0 || sumAbsences(out) < sumAbsences(again)));
    }
    if (better) {
      if (!settle()) break;
      warpBefore = warp ? totalWarp(s) : 0;
    } else s.undo();
  }
  return { best, iterations, lastFleet };
}

/** A random job on a random route that breaks a window or its shift (-1: none). */
function lateJob(s: State, rnd: Random): number {
  let count = 0;
  for (const r of s.routes) if (!r.feasible) count++;
  if (!count) return -1;
  let k = rnd.int(count);
  for (const r of s.routes) if (!r.feasible && k-- === 0) return r.seq[rnd.int(r.seq.length)];
  return -1;
}

/** The routes' time warp summed (0 exactly when every route keeps its windows and shift). */
function totalWarp(s: State): number {
  let w = 0;
  for (const r of s.routes) if (!r.feasible) w += r.warp > 0 ? r.warp : Number.MIN_VALUE;
  return w;
}

/**
 * Takes out the route whose stops have the fewest absences summed (the easiest to place
 * elsewhere; ties: the shortest), its stops left unassigned. Begins a move of its own (a new
 * state of the search).
 */
function removeEasiestRoute(m: Model, s: State, absences: Int32Array): void {
  let pick = -1;
  let pickSum = 0;
  for (let r = 0; r < s.routes.length; r++) {
    const seq = s.routes[r].seq;
    if (!seq.length) continue;
    let sum = 0;
    for (const j of seq) sum += absences[j];
    if (pick < 0 || sum < pickSum || (sum === pickSum && seq.length < s.routes[pick].seq.length)) {
      pick = r;
      pickSum = sum;
    }
  }
  s.begin();
  const route = s.writable(pick);
  for (const j of route.seq) {
    s.place(j, -1);
    s.unassigned.push(j);
  }
  route.seq = [];
  route.update(m);
}
