/**
 * The search: SISR, "Slack Induction by String Removals" (Christiaens & Vanden Berghe,
 * Transportation Science 54(2), 2020). Each iteration ruins a solution by removing strings of
 * consecutive stops from a few routes near a random seed stop (§4.1: string and split-string
 * removals), recreates it by greedy insertion with blinks (§4.2: each position skipped with a
 * small probability, jobs ordered randomly, by demand, far first or close first), and accepts
 * the result by simulated annealing with an exponentially falling temperature (§5).
 */
import { leg, type Model, NONE, PICKUP, VISIT } from "./model";
import type { Random } from "./random";
import type { Route } from "./route";
import type { State } from "./state";
import { warpWith } from "./warp";

/** SISR's blink rate (§6): 0.01 (`SolveOptions.blinkRate`). */
export const DEFAULT_BLINK = 0.01;

/**
 * §4.2's orders of reinsertion and their weights: random (4), larger demand first (4), farther
 * from the depot first (2), closer first (1) (`SolveOptions.recreateOrders`).
 */
export const DEFAULT_RECREATE_ORDERS: readonly [number, number, number, number] = [4, 4, 2, 1];

/** One of the orders drawn with `weights` (random, demand, far, close): one draw, then the sort. */
function sortForInsertion(m: Model, jobs: number[], rnd: Random, weights: readonly number[]): number[] {
  const [random, demand, far, close] = weights;
  const x = rnd.next() * (random + demand + far + close);
  const out = jobs.slice();
  if (x < random) {
    for (let i = out.length - 1; i > 0; i--) {
      const k = rnd.int(i + 1);
      [out[i], out[k]] = [out[k], out[i]];
    }
  } else if (x < random + demand) out.sort((a, b) => m.size[b] - m.size[a] || a - b);
  else if (x < random + demand + far) out.sort((a, b) => m.depotDistance[b] - m.depotDistance[a] || a - b);
  else out.sort((a, b) => m.depotDistance[a] - m.depotDistance[b] || a - b);
  return out;
}

/**
 * What the recreate needs besides the state: the PRNG (null: no blinks, the construction), how
 * many of a job's nearest neighbours name the routes it is tried in first (granular search; 0:
 * every route), and scratch marks of the routes already tried for the current job.
 */
export class Recreate {
  readonly mark: Int32Array;
  private tick = 0;
  cost = Number.POSITIVE_INFINITY;
  route = -1;
  pos = -1;
  /** A pair's drop-off position (`pos` is its pick-up's). */
  pos2 = -1;
  /** Per position of the route a pair is tried in: the drop-off's cost delta, and its suffix minimum. */
  private qDelta = new Float64Array(64);
  qBest = new Float64Array(64);
  /** Whether an empty vehicle may be opened (not after a route removal). */
  open = true;
  /**
   * At most this many routes with stops: an empty vehicle is opened only below it (fleet
   * minimisation's target; Infinity: no cap). `used` counts them, from `findEmpty` on.
   */
  maxRoutes = Number.POSITIVE_INFINITY;
  used = 0;
  /** Per vehicle class, the index in it of its first empty vehicle (its size: none). */
  readonly firstEmpty: Int32Array;
  /** The probability that a position that would win is skipped (§4.2's blinks). */
  blink = DEFAULT_BLINK;
  /** The weights of the orders of reinsertion: random, larger demand first, far first, close first. */
  orders: readonly number[] = DEFAULT_RECREATE_ORDERS;

  constructor(
    readonly m: Model,
    readonly rnd: Random | null,
    readonly near: number,
  ) {
    this.mark = new Int32Array(m.V);
    this.firstEmpty = new Int32Array(m.classes.length);
  }

  /** Finds each class's first empty vehicle in `s`. */
  findEmpty(s: State): void {
    this.firstEmpty.fill(0);
    if (this.maxRoutes < s.routes.length) {
      this.used = 0;
      for (const r of s.routes) if (r.seq.length) this.used++;
    }
    for (let c = 0; c < this.m.classes.length; c++) this.moveOn(s, c);
  }

  /** Past the vehicles of class `c` that are no longer empty (a recreate only fills routes). */
  moveOn(s: State, c: number): void {
    const members = this.m.classes[c];
    let i = this.firstEmpty[c];
    while (i < members.length && s.routes[members[i]].seq.length) i++;
    this.firstEmpty[c] = i;
  }

  /** The scratch arrays for a pair in a route of `size` − 2 stops (grown, never shrunk). */
  scratch(size: number): Float64Array {
    if (this.qDelta.length < size) {
      this.qDelta = new Float64Array(size * 2);
      this.qBest = new Float64Array(size * 2);
    }
    return this.qDelta;
  }

  /** A new job: no route tried yet, no position found. */
  reset(): number {
    this.cost = Number.POSITIVE_INFINITY;
    this.route = -1;
    this.pos = -1;
    this.pos2 = -1;
    return ++this.tick;
  }
}

/**
 * The cheapest feasible position of visit `u` in `route` (index `r`), if cheaper than the best
 * found so far (`g`): the cost delta is compared before the checks, and a blink is drawn only
 * for a position that would win (skipping a position that would not changes nothing, so the
 * outcome has §4.2's distribution with one draw per winner instead of one per position). The
 * delta reads the leg out of `u` from u's row of the matrix, the leg into it too when the
 * matrix is symmetric (it is then the previous position's leg out), and the replaced leg from
 * the route's cache.
 */
export function scanRoute(m: Model, route: Route, r: number, u: number, g: Recreate): void {
  if (m.warpWeight > 0) {
    scanRouteWarp(m, route, r, u, g);
    return;
  }
  const v = route.v;
  const n = route.seq.length;
  const L = m.L;
  const cost = m.cost;
  const sym = m.symmetric;
  const ul = m.loc[u];
  const row = ul * L;
  const twA = m.twA[u];
  const twB = m.twB[u];
  const svc = m.svc[u];
  const rnd = g.rnd;
  // The latest starts only grow along a route (each is at most the next one's, less the leg and
  // the service): the positions before the first whose next stop can start after u's earliest
  // departure are all too late, so the scan begins there (found by bisection).
  // Nothing goes before the fixed prefix (stops under way).
  const fixed = m.fixedCount[v];
  // The loads' prefix maxima only grow: a load that does not fit at the first position fits at
  // none (the bisections below would find the range empty; a full route is common where routes
  // are short).
  const D = m.D;
  const pm = route.pm;
  for (let d = 0; d < D; d++) if (pm[fixed * D + d] + m.dem[u * D + d] > m.vCap[v * D + d] + 1e-9) return;
  let first = fixed;
  if (m.timeNonNegative && n > fixed && route.ls[fixed] < twA + svc) {
    const need = twA + svc;
    let lo = fixed + 1;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (route.ls[mid] >= need) hi = mid;
      else lo = mid + 1;
    }
    first = lo;
  }
  // The loads' prefix maxima only grow along a route, and so do departures when no travel
  // time is negative: the positions where the load fits and the window has not closed form a
  // range, whose end is found by bisection, so the loop reads a position's times only for a
  // delta that would win.
  const monotone = m.timeNonNegative;
  let last = n;
  if (stopsAt(m, route, u, n, monotone)) {
    let lo = first;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (stopsAt(m, route, u, mid, monotone)) hi = mid;
      else lo = mid + 1;
    }
    last = lo - 1;
  }
  let prevLoc = first === 0 ? m.vStart[v] : m.loc[route.seq[first - 1]];
  // A symmetric matrix's leg into u is read from u's own row, which the scan reads anyway: one
  // cache line fewer to fetch per route (the same number: symmetric means equal entries).
  let into = prevLoc === NONE ? 0 : sym ? cost[row + prevLoc] : cost[prevLoc * L + ul];
  for (let p = first; p <= last; p++) {
    if (p > first) prevLoc = m.loc[route.seq[p - 1]];
    // Departures can fall along a route only with negative travel times: then each position is checked.
    if (!monotone && (p === 0 ? m.vShiftA[v] : route.es[p - 1] + m.svc[route.seq[p - 1]]) > twB) return;
    const nextLoc = p === n ? m.vEnd[v] : m.loc[route.seq[p]];
    const out = nextLoc === NONE ? 0 : cost[row + nextLoc];
    const delta = into + out - route.edge[p];
    into = sym ? out : nextLoc === NONE ? 0 : cost[nextLoc * L + ul];
    if (!(delta < g.cost)) continue;
    const prevDep = p === 0 ? m.vShiftA[v] : route.es[p - 1] + m.svc[route.seq[p - 1]];
    const arr = prevDep + leg(m, m.time, prevLoc, ul);
    const start = Math.max(arr, twA);
    if (start > twB) continue;
    const latestNext = p === n ? m.vShiftB[v] : route.ls[p];
    if (start + svc + leg(m, m.time, ul, nextLoc) > latestNext) continue;
    if (rnd && rnd.next() < g.blink) continue;
    g.cost = delta;
    g.route = r;
    g.pos = p;
  }
}

/**
 * `scanRoute` with penalised time windows (warp.ts): every position where the load fits, at its
 * added distance plus `Model.warpWeight` × its added time warp (from the route's segments, in
 * O(1)). The loads' prefix maxima only grow along a route, so the first position where the load
 * does not fit ends the scan. Blinks as in `scanRoute`. Only where `Model.warp` holds (standalone
 * visits, no fixed stops: the route's segments are kept).
 */
function scanRouteWarp(m: Model, route: Route, r: number, u: number, g: Recreate): void {
  const v = route.v;
  const n = route.seq.length;
  const L = m.L;
  const D = m.D;
  const cost = m.cost;
  const ul = m.loc[u];
  const row = ul * L;
  const sym = m.symmetric;
  const w = m.warpWeight;
  const seg = route.seg;
  const base = route.warp;
  const rnd = g.rnd;
  let prevLoc = m.vStart[v];
  for (let p = 0; p <= n; p++) {
    if (p > 0) prevLoc = m.loc[route.seq[p - 1]];
    let fits = true;
    for (let d = 0; d < D; d++) {
      if (route.pm[p * D + d] + m.dem[u * D + d] > m.vCap[v * D + d] + 1e-9) {
        fits = false;
        break;
      }
    }
    if (!fits) return;
    const nextLoc = p === n ? m.vEnd[v] : m.loc[route.seq[p]];
    const into = prevLoc === NONE ? 0 : sym ? cost[row + prevLoc] : cost[prevLoc * L + ul];
    const out = nextLoc === NONE ? 0 : cost[row + nextLoc];
    let delta = into + out - route.edge[p];
    // The route's warp cannot fall below 0: at best the insertion removes all of it.
    if (!(delta - w * base < g.cost)) continue;
    delta += w * (warpWith(m, seg, p, u, prevLoc, nextLoc) - base);
    if (!(delta < g.cost)) continue;
    if (rnd && rnd.next() < g.blink) continue;
    g.cost = delta;
    g.route = r;
    g.pos = p;
  }
}

/**
 * Whether visit `u` cannot go before position `p` of `route` nor any later position: the load
 * there does not fit, or (`monotone`: no negative travel time) its window has closed before the
 * stop ahead departs.
 */
function stopsAt(m: Model, route: Route, u: number, p: number, monotone: boolean): boolean {
  const D = m.D;
  const v = route.v;
  for (let d = 0; d < D; d++)
    if (route.pm[p * D + d] + m.dem[u * D + d] > m.vCap[v * D + d] + 1e-9) return true;
  if (!monotone) return false;
  return (p === 0 ? m.vShiftA[v] : route.es[p - 1] + m.svc[route.seq[p - 1]]) > m.twB[u];
}

/** The first empty vehicle of each class not yet tried for this job (identical empty vehicles give identical answers). */
function scanEmpty(m: Model, s: State, u: number, g: Recreate, tick: number): void {
  if (!g.open || g.used >= g.maxRoutes) return;
  for (let c = 0; c < m.classes.length; c++) {
    const members = m.classes[c];
    const i = g.firstEmpty[c];
    if (i >= members.length) continue;
    const r = members[i];
    if (g.mark[r] !== tick) {
      g.mark[r] = tick;
      scanRoute(m, s.routes[r], r, u, g);
    }
  }
}

/**
 * Greedy insertion with blinks; what fits nowhere stays unassigned. Granular: a job is tried in
 * the routes of its `near` nearest neighbours and in one empty vehicle of each class, and in
 * every other route only when none of those can take it.
 */
export function recreate(m: Model, s: State, jobs: number[], g: Recreate): void {
  const order = g.rnd ? sortForInsertion(m, jobs, g.rnd, g.orders) : jobs;
  g.findEmpty(s);
  let pairsDone: Set<number> | null = null;
  for (const j of order) {
    if (s.routeOf[j] >= 0) continue;
    if (m.kind[j] !== VISIT) {
      // A drop-off goes in with its pick-up.
      pairsDone ??= new Set<number>();
      if (pairsDone.has(j)) continue;
      const [p, q] = m.kind[j] === PICKUP ? [j, m.partner[j]] : [m.partner[j], j];
      insertPair(m, s, p, q, g);
      pairsDone.add(p).add(q);
      continue;
    }
    const tick = g.reset();
    const only = m.only[j];
    // A pinned job has one route to go in (where it goes on it is free).
    if (only !== NONE) scanRoute(m, s.routes[only], only, j, g);
    else if (g.near > 0) {
      const around = m.neighbours[j];
      const k = Math.min(g.near, around.length);
      for (let i = 0; i < k; i++) {
        const r = s.routeOf[around[i]];
        if (r < 0 || g.mark[r] === tick) continue;
        g.mark[r] = tick;
        scanRoute(m, s.routes[r], r, j, g);
      }
      scanEmpty(m, s, j, g, tick);
    }
    if (g.route < 0 && only === NONE) {
      for (let r = 0; r < s.routes.length; r++) {
        if (g.mark[r] === tick || !s.routes[r].seq.length) continue;
        g.mark[r] = tick;
        scanRoute(m, s.routes[r], r, j, g);
      }
      scanEmpty(m, s, j, g, tick);
    }
    if (g.route < 0) {
      s.unassigned.push(j);
      continue;
    }
    const route = s.writable(g.route);
    route.seq.splice(g.pos, 0, j);
    route.update(m, g.pos, g.pos + 1);
    s.place(j, g.route);
    if (route.seq.length === 1) {
      g.moveOn(s, m.vClass[g.route]);
      g.used++;
    }
  }
}

/**
 * The cheapest feasible positions of a pick-up `p` and its drop-off `q` in `route` (index `r`),
 * before positions `a` ≤ `b` of its sequence, if cheaper than the best found so far (`g.cost`;
 * the positions go to `g.pos` and `g.pos2`). O(1) per pair of positions, from the route's caches:
 * the drop-off's cost delta at every position after the pick-up does not depend on where the
 * pick-up went, so it is computed once per route (`g.qDelta`), with its suffix minimum
 * (`g.qBest`), a lower bound that cuts a pick-up position, or the rest of its drop-off
 * positions, as soon as they cannot beat the best; the stretch between the two is re-timed one
 * stop per drop-off position (the pick-up delays it), and the drop-off is checked against the
 * latest start of the stop after it (`ls`). Departures only grow along a route, and so does the
 * load's running maximum over the stretch: once a window has closed or the load does not fit,
 * no later position will do. Blinks as in `scanRoute`: drawn only for a position that would win.
 */
export function scanPair(m: Model, route: Route, r: number, p: number, q: number, g: Recreate): void {
  const v = route.v;
  const seq = route.seq;
  const n = seq.length;
  const D = m.D;
  const cost = m.cost;
  const time = m.time;
  const L = m.L;
  const pl = m.loc[p];
  const ql = m.loc[q];
  const pA = m.twA[p];
  const pB = m.twB[p];
  const qA = m.twA[q];
  const qB = m.twB[q];
  const pSvc = m.svc[p];
  const qSvc = m.svc[q];
  const start = m.vStart[v];
  const end = m.vEnd[v];
  const rnd = g.rnd;
  const qDelta = g.scratch(n + 2);
  const qBest = g.qBest;
  // Legs into p and q from their own rows when the matrix is symmetric (as in scanRoute).
  const sym = m.symmetric;
  const qRow = ql * L;
  // The drop-off alone before position b ≥ 1 (after stop b − 1), and the best from b on.
  qBest[n + 1] = Number.POSITIVE_INFINITY;
  for (let b = n; b >= 1; b--) {
    const x = m.loc[seq[b - 1]];
    const y = b === n ? end : m.loc[seq[b]];
    qDelta[b] = (sym ? cost[qRow + x] : cost[x * L + ql]) + (y === NONE ? 0 : cost[qRow + y]) - route.edge[b];
    qBest[b] = Math.min(qDelta[b], qBest[b + 1]);
  }
  const pq = cost[pl * L + ql];
  const tpq = time[pl * L + ql];
  for (let a = m.fixedCount[v]; a <= n; a++) {
    const prevLoc = a === 0 ? start : m.loc[seq[a - 1]];
    const prevDep = a === 0 ? m.vShiftA[v] : route.es[a - 1] + m.svc[seq[a - 1]];
    if (prevDep > pB) return;
    let fits = true;
    for (let d = 0; d < D; d++) {
      if (route.pt[a * D + d] + m.dem[p * D + d] > m.vCap[v * D + d] + 1e-9) {
        fits = false;
        break;
      }
    }
    if (!fits) continue;
    const nextLoc = a === n ? end : m.loc[seq[a]];
    const into = prevLoc === NONE ? 0 : sym ? cost[pl * L + prevLoc] : cost[prevLoc * L + pl];
    const edge = route.edge[a];
    // The pair side by side: p then q in place of the leg before position a.
    const together = into + pq + (nextLoc === NONE ? 0 : cost[ql * L + nextLoc]) - edge;
    // p alone before position a (the lower bound of every later drop-off position).
    const dP = into + (nextLoc === NONE ? 0 : cost[pl * L + nextLoc]) - edge;
    const later = a < n && dP + qBest[a + 1] < g.cost;
    if (!(together < g.cost) && !later) continue;
    const sP = Math.max(prevDep + (prevLoc === NONE ? 0 : time[prevLoc * L + pl]), pA);
    if (sP > pB) continue;
    const depP = sP + pSvc;
    if (together < g.cost && depP <= qB) {
      const sQ = Math.max(depP + tpq, qA);
      const latest = a === n ? m.vShiftB[v] : route.ls[a];
      if (sQ <= qB && sQ + qSvc + (nextLoc === NONE ? 0 : time[ql * L + nextLoc]) <= latest) {
        if (!(rnd && rnd.next() < g.blink)) {
          g.cost = together;
          g.route = r;
          g.pos = a;
          g.pos2 = a;
        }
      }
    }
    if (a === n) continue;
    // The stretch a … b − 1 re-timed after p, one stop per drop-off position b.
    let t = depP;
    let here = pl;
    for (let b = a + 1; b <= n; b++) {
      if (!(dP + qBest[b] < g.cost)) break;
      const j = seq[b - 1];
      const jl = m.loc[j];
      const s = Math.max(t + time[here * L + jl], m.twA[j]);
      if (s > m.twB[j]) break;
      t = s + m.svc[j];
      here = jl;
      if (t > qB) break;
      let over = false;
      for (let d = 0; d < D; d++) {
        if (route.pt[b * D + d] + m.dem[p * D + d] > m.vCap[v * D + d] + 1e-9) {
          over = true;
          break;
        }
      }
      if (over) break;
      const delta = dP + qDelta[b];
      if (!(delta < g.cost)) continue;
      const sQ = Math.max(t + time[jl * L + ql], qA);
      if (sQ > qB) continue;
      const y = b === n ? end : m.loc[seq[b]];
      const latest = b === n ? m.vShiftB[v] : route.ls[b];
      if (sQ + qSvc + (y === NONE ? 0 : time[ql * L + y]) > latest) continue;
      if (rnd && rnd.next() < g.blink) continue;
      g.cost = delta;
      g.route = r;
      g.pos = a;
      g.pos2 = b;
    }
  }
}

/** A pick-up and its drop-off, in the routes near either of them first, then in every route. */
function insertPair(m: Model, s: State, p: number, q: number, g: Recreate): void {
  const tick = g.reset();
  const tryRoute = (r: number) => {
    g.mark[r] = tick;
    scanPair(m, s.routes[r], r, p, q, g);
  };
  const tryEmpty = () => {
    if (!g.open) return;
    for (let c = 0; c < m.classes.length; c++) {
      const i = g.firstEmpty[c];
      if (i < m.classes[c].length && g.mark[m.classes[c][i]] !== tick) tryRoute(m.classes[c][i]);
    }
  };
  const only = m.only[p];
  if (only !== NONE) tryRoute(only);
  else if (g.near > 0) {
    for (const j of [p, q]) {
      const around = m.neighbours[j];
      for (let i = 0; i < Math.min(g.near, around.length); i++) {
        const r = s.routeOf[around[i]];
        if (r >= 0 && g.mark[r] !== tick) tryRoute(r);
      }
    }
    tryEmpty();
  }
  if (g.route < 0 && only === NONE) {
    for (let r = 0; r < s.routes.length; r++) if (g.mark[r] !== tick && s.routes[r].seq.length) tryRoute(r);
    tryEmpty();
  }
  if (g.route < 0) {
    s.unassigned.push(p, q);
    return;
  }
  const r = g.route;
  const route = s.writable(r);
  route.seq.splice(g.pos2, 0, q);
  route.seq.splice(g.pos, 0, p);
  route.update(m, g.pos, g.pos2 + 2);
  s.place(p, r);
  s.place(q, r);
  if (route.seq.length === 2) g.moveOn(s, m.vClass[r]);
}

export const isVisit = (m: Model, j: number) => m.kind[j] === VISIT;
