/**
 * SWAP* between two routes (T. Vidal, "Hybrid genetic search for the CVRP: open-source
 * implementation and SWAP* neighborhood", Computers & Operations Research 140, 2022, §4): a stop
 * u of route A and a stop v of route B change routes, each going to its best position in the
 * other route, not necessarily where the other was. Vidal's observation: u's best position in
 * B without v is either v's old place or one of u's three cheapest positions in B (the three
 * cheapest cannot all touch v), so three positions per stop and route, computed once per pair of
 * routes, make every exchange O(1) to cost.
 *
 * Adapted to time windows: the three positions are the cheapest among those where u fits in B
 * as it stands (the O(1) test of the route's caches: the departure from the stop before against
 * the latest start of the stop after). The exchange that costs least is then checked exactly
 * (the stops between u's new place and v's old one re-timed, the rest against the caches'
 * latest starts), and the next candidates tried when it does not fit. Removing v can make
 * positions feasible that were not with v; those are not tried (the heuristic's only loss
 * besides Vidal's, and none without windows: then the result is the best exchange of all).
 *
 * Standalone visits only, no pinned or fixed stops, no `balance` (the tail exchanges' gate):
 * a load then is the route's total demand, and a stop may go on any route.
 */
import { leg, type Model } from "./model";
import type { Random } from "./random";
import type { Route } from "./route";
import type { State } from "./state";

/** The best exchange found: the routes' cost change and what moves where. */
export type SwapStar = {
  delta: number;
  /** Positions of u in A and of v in B. */
  i: number;
  k: number;
  /** Where u goes in B and v in A, as a position of the route before the exchange (0…n; k or k + 1: v's place). */
  pu: number;
  pv: number;
};

/** Per stop of one route: its three cheapest feasible positions in the other route (cost, position; -1: none). */
class Top3 {
  cost = new Float64Array(0);
  pos = new Int32Array(0);
  fill(n: number): void {
    if (this.cost.length < 3 * n) {
      this.cost = new Float64Array(6 * n);
      this.pos = new Int32Array(6 * n);
    }
    this.cost.fill(Number.POSITIVE_INFINITY, 0, 3 * n);
    this.pos.fill(-1, 0, 3 * n);
  }
}

const topU = new Top3();
const topV = new Top3();
/** Each stop's removal cost in A and in B (`removal`), computed once per pair of routes. */
let remA = new Float64Array(64);
let remB = new Float64Array(64);

/** Each stop of `from`'s three cheapest positions in `to` where it fits in time as `to` stands. */
function cheapest(m: Model, from: Route, to: Route, top: Top3): void {
  const n = from.seq.length;
  const nt = to.seq.length;
  top.fill(n);
  const w = to.v;
  for (let a = 0; a < n; a++) {
    const u = from.seq[a];
    const ul = m.loc[u];
    for (let p = 0; p <= nt; p++) {
      const prevLoc = p === 0 ? m.vStart[w] : m.loc[to.seq[p - 1]];
      const nextLoc = p === nt ? m.vEnd[w] : m.loc[to.seq[p]];
      const c = leg(m, m.cost, prevLoc, ul) + leg(m, m.cost, ul, nextLoc) - to.edge[p];
      const o = 3 * a;
      if (!(c < top.cost[o + 2])) continue;
      const prevDep = p === 0 ? m.vShiftA[w] : to.es[p - 1] + m.svc[to.seq[p - 1]];
      const start = Math.max(prevDep + leg(m, m.time, prevLoc, ul), m.twA[u]);
      if (start > m.twB[u]) continue;
      const latestNext = p === nt ? m.vShiftB[w] : to.ls[p];
      if (start + m.svc[u] + leg(m, m.time, ul, nextLoc) > latestNext) continue;
      let q = o + 2;
      while (q > o && c < top.cost[q - 1]) {
        top.cost[q] = top.cost[q - 1];
        top.pos[q] = top.pos[q - 1];
        q--;
      }
      top.cost[q] = c;
      top.pos[q] = p;
    }
  }
}

/**
 * Whether route R without its stop at `k`, with stop x inserted before position `p` (of R as it
 * is; k or k + 1: in k's place), keeps every window and the shift: the stretch from the first
 * change to the last re-timed, then the stop after it against its latest start. Exact.
 */
export function fitsWithout(m: Model, R: Route, k: number, x: number, p: number): boolean {
  const seq = R.seq;
  const n = seq.length;
  const w = R.v;
  if (p === k + 1) p = k;
  const q = Math.min(p, k);
  let t = q === 0 ? m.vShiftA[w] : R.es[q - 1] + m.svc[seq[q - 1]];
  let prev = q === 0 ? m.vStart[w] : m.loc[seq[q - 1]];
  const visit = (j: number): boolean => {
    const l = m.loc[j];
    const start = Math.max(t + leg(m, m.time, prev, l), m.twA[j]);
    if (start > m.twB[j]) return false;
    t = start + m.svc[j];
    prev = l;
    return true;
  };
  let next: number;
  if (p <= k) {
    if (!visit(x)) return false;
    for (let i = p; i < k; i++) if (!visit(seq[i])) return false;
    next = k + 1;
  } else {
    for (let i = k + 1; i < p; i++) if (!visit(seq[i])) return false;
    if (!visit(x)) return false;
    next = p;
  }
  if (next === n) return t + leg(m, m.time, prev, m.vEnd[w]) <= m.vShiftB[w];
  const j = seq[next];
  return Math.max(t + leg(m, m.time, prev, m.loc[j]), m.twA[j]) <= R.ls[next];
}

/** The cost change of taking R's stop at `k` out (its two legs replaced by one). */
function removal(m: Model, R: Route, k: number): number {
  const w = R.v;
  const prevLoc = k === 0 ? m.vStart[w] : m.loc[R.seq[k - 1]];
  const nextLoc = k === R.seq.length - 1 ? m.vEnd[w] : m.loc[R.seq[k + 1]];
  return leg(m, m.cost, prevLoc, nextLoc) - R.edge[k] - R.edge[k + 1];
}

/** x in k's place in R (R's stop at k out): the cost change over the removal's. */
function inPlace(m: Model, R: Route, k: number, x: number): number {
  const w = R.v;
  const prevLoc = k === 0 ? m.vStart[w] : m.loc[R.seq[k - 1]];
  const nextLoc = k === R.seq.length - 1 ? m.vEnd[w] : m.loc[R.seq[k + 1]];
  const xl = m.loc[x];
  return leg(m, m.cost, prevLoc, xl) + leg(m, m.cost, xl, nextLoc) - leg(m, m.cost, prevLoc, nextLoc);
}

/** Whether R's load, its stop at k swapped for x, fits R's vehicle. */
function loadFits(m: Model, R: Route, k: number, x: number): boolean {
  const D = m.D;
  const out = R.seq[k];
  for (let d = 0; d < D; d++)
    if (R.pt[d] - m.dem[out * D + d] + m.dem[x * D + d] > m.vCap[R.v * D + d] + 1e-9) return false;
  return true;
}

/**
 * The cheapest feasible place for x in R without its stop at k, if it beats `bound`: k's place
 * or one of x's three positions not next to k (`top`, from offset `o`), tried cheapest first,
 * each checked exactly. Returns [cost over the removal, position] or null.
 */
function place(
  m: Model,
  R: Route,
  k: number,
  x: number,
  top: Top3,
  o: number,
  bound: number,
): [number, number] | null {
  const here = inPlace(m, R, k, x);
  let tried = 0;
  for (;;) {
    // The cheapest candidate not yet tried: k's place (bit 3) or the three positions (bits 0–2).
    let c = Number.POSITIVE_INFINITY;
    let pick = -1;
    if (!(tried & 8)) {
      c = here;
      pick = 3;
    }
    for (let t = 0; t < 3; t++) {
      const p = top.pos[o + t];
      if (p < 0 || tried & (1 << t) || p === k || p === k + 1) continue;
      if (top.cost[o + t] < c) {
        c = top.cost[o + t];
        pick = t;
      }
    }
    if (pick < 0 || !(c < bound)) return null;
    tried |= pick === 3 ? 8 : 1 << pick;
    const p = pick === 3 ? k : top.pos[o + pick];
    if (fitsWithout(m, R, k, x, p)) return [c, p];
  }
}

/** The best SWAP* exchange between A and B that lowers their cost by more than `-best`, or null. */
export function bestSwapStar(m: Model, A: Route, B: Route, best = -1e-9): SwapStar | null {
  const nA = A.seq.length;
  const nB = B.seq.length;
  if (!nA || !nB) return null;
  cheapest(m, A, B, topU);
  cheapest(m, B, A, topV);
  if (remA.length < nA) remA = new Float64Array(2 * nA);
  if (remB.length < nB) remB = new Float64Array(2 * nB);
  for (let i = 0; i < nA; i++) remA[i] = removal(m, A, i);
  for (let k = 0; k < nB; k++) remB[k] = removal(m, B, k);
  let found: SwapStar | null = null;
  for (let i = 0; i < nA; i++) {
    const u = A.seq[i];
    const remU = remA[i];
    for (let k = 0; k < nB; k++) {
      const v = B.seq[k];
      const base = remU + remB[k];
      // Lower bounds from cost alone (each side's cheapest candidate) before any time check.
      const lowU = Math.min(inPlace(m, B, k, u), firstApart(topU, 3 * i, k));
      const lowV = Math.min(inPlace(m, A, i, v), firstApart(topV, 3 * k, i));
      if (!(base + lowU + lowV < best)) continue;
      if (!loadFits(m, A, i, v) || !loadFits(m, B, k, u)) continue;
      const gu = place(m, B, k, u, topU, 3 * i, best - base - lowV);
      if (!gu) continue;
      const gv = place(m, A, i, v, topV, 3 * k, best - base - gu[0]);
      if (!gv) continue;
      best = base + gu[0] + gv[0];
      found = { delta: best, i, k, pu: gu[1], pv: gv[1] };
    }
  }
  return found;
}

/** The cheapest of the three positions at `o` not next to position k (Infinity: none). */
function firstApart(top: Top3, o: number, k: number): number {
  for (let t = 0; t < 3; t++) {
    const p = top.pos[o + t];
    if (p >= 0 && p !== k && p !== k + 1) return top.cost[o + t];
  }
  return Number.POSITIVE_INFINITY;
}

/** Makes exchange `x` between routes `a` and `b` of `s`. */
export function applySwapStar(m: Model, s: State, a: number, b: number, x: SwapStar): void {
  const A = s.writable(a);
  const B = s.writable(b);
  const u = A.seq[x.i];
  const v = B.seq[x.k];
  A.seq = moved(A.seq, x.i, v, x.pv);
  B.seq = moved(B.seq, x.k, u, x.pu);
  s.place(u, b);
  s.place(v, a);
  A.update(m);
  B.update(m);
}

/** `seq` with its stop at k taken out and `x` put before position p (of `seq`; k or k + 1: in k's place). */
function moved(seq: number[], k: number, x: number, p: number): number[] {
  const at = p === k + 1 ? k : p;
  const out: number[] = [];
  for (let i = 0; i < seq.length; i++) {
    if (i === at) out.push(x);
    if (i !== k) out.push(seq[i]);
  }
  if (at === seq.length) out.push(x);
  return out;
}

/**
 * One descent step: a random stop u, and SWAP* between its route and the first `routes` other
 * routes met among its nearest neighbours (Vidal pairs routes whose polar sectors overlap; a
 * neighbour's route is the granular equivalent); the best exchange that lowers the cost is made.
 * Returns whether one was.
 */
export function swapStarMove(m: Model, s: State, rnd: Random, routes: number): boolean {
  const u = rnd.int(m.J);
  const a = s.routeOf[u];
  if (a < 0) return false;
  const around = m.neighbours[u];
  let best: SwapStar | null = null;
  let bb = -1;
  const seen: number[] = [];
  for (let t = 0; t < around.length && seen.length < routes; t++) {
    const b = s.routeOf[around[t]];
    if (b < 0 || b === a || seen.includes(b)) continue;
    seen.push(b);
    const x = bestSwapStar(m, s.routes[a], s.routes[b], best ? best.delta : -1e-9);
    if (x) {
      best = x;
      bb = b;
    }
  }
  if (!best) return false;
  applySwapStar(m, s, a, bb, best);
  return true;
}
