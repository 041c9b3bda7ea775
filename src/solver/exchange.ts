/**
 * Granular relocate and swap between routes (the neighbourhoods of granular local search,
 * Toth and Vigo, "The granular tabu search and its application to the vehicle-routing problem",
 * INFORMS Journal on Computing 15(4), 2003; as HGS applies them, Vidal 2022): a stop u goes next
 * to one of its nearest neighbours w on another route, alone (relocate) or in exchange for the
 * stop it displaces there (swap; or for w itself). Each move is checked in O(D) from the routes'
 * caches: the stop that comes in is timed from the earliest departure of the stop before it and
 * must start before the latest start of the stop after it; the loads before it change by the
 * demands that come in and go out.
 *
 * Same conditions as the tail exchanges (standalone visits, no pinned or fixed stops, not with
 * `balance`): `tailsApply`.
 */
import { leg, type Model } from "./model";
import type { Random } from "./random";
import type { Route } from "./route";
import type { State } from "./state";

/**
 * The cost change of putting visit `x` in place of the stop at position `p` of `R` (`x` < 0: of
 * taking that stop out, the route closing up), or Infinity when `R` would be infeasible.
 */
export function replaceDelta(m: Model, R: Route, p: number, x: number): number {
  const v = R.v;
  const n = R.seq.length;
  const D = m.D;
  const out = R.seq[p];
  for (let d = 0; d < D; d++) {
    const change = (x < 0 ? 0 : m.dem[x * D + d]) - m.dem[out * D + d];
    if (change > 0 && R.pm[p * D + d] + change > m.vCap[v * D + d] + 1e-9) return Number.POSITIVE_INFINITY;
  }
  // Taking out the only stop empties the route: it costs nothing any more.
  if (x < 0 && n === 1) return -R.cost;
  const prevLoc = p === 0 ? m.vStart[v] : m.loc[R.seq[p - 1]];
  let t = p === 0 ? m.vShiftA[v] : R.es[p - 1] + m.svc[R.seq[p - 1]];
  const nextLoc = p === n - 1 ? m.vEnd[v] : m.loc[R.seq[p + 1]];
  const latestNext = p === n - 1 ? m.vShiftB[v] : R.ls[p + 1];
  const old = R.edge[p] + R.edge[p + 1];
  if (x < 0) {
    const arr = t + leg(m, m.time, prevLoc, nextLoc);
    // The next stop's latest start is at most its window's end; the end of the route: the shift.
    const start = p === n - 1 ? arr : Math.max(arr, m.twA[R.seq[p + 1]]);
    if (start > latestNext) return Number.POSITIVE_INFINITY;
    return leg(m, m.cost, prevLoc, nextLoc) - old;
  }
  const xl = m.loc[x];
  const start = Math.max(t + leg(m, m.time, prevLoc, xl), m.twA[x]);
  if (start > m.twB[x]) return Number.POSITIVE_INFINITY;
  t = start + m.svc[x];
  if (t + leg(m, m.time, xl, nextLoc) > latestNext) return Number.POSITIVE_INFINITY;
  return leg(m, m.cost, prevLoc, xl) + leg(m, m.cost, xl, nextLoc) - old;
}

/** Moves visit u (at position `pu` of route `a`) to position `p` of route `b` (before the stop there). */
export function applyRelocate(m: Model, s: State, a: number, pu: number, b: number, p: number): void {
  const A = s.writable(a);
  const B = s.writable(b);
  const u = A.seq[pu];
  A.seq.splice(pu, 1);
  A.update(m, pu, pu);
  B.seq.splice(p, 0, u);
  B.update(m, p, p + 1);
  s.place(u, b);
}

/** Exchanges the stop at position `pa` of route `a` with the stop at position `pb` of route `b`. */
export function applySwap(m: Model, s: State, a: number, pa: number, b: number, pb: number): void {
  const A = s.writable(a);
  const B = s.writable(b);
  const u = A.seq[pa];
  const x = B.seq[pb];
  A.seq[pa] = x;
  A.update(m, pa, pa + 1);
  B.seq[pb] = u;
  B.update(m, pb, pb + 1);
  s.place(x, a);
  s.place(u, b);
}

/**
 * One descent step: a random stop u, and for each of its `near` nearest neighbours w on another
 * route: u relocated right before or right after w, u swapped with the stop right before or
 * right after w (u then sits next to w), or with w itself. The best move that lowers the cost is
 * made. Returns whether one was.
 */
export function exchangeMove(m: Model, s: State, rnd: Random, near: number): boolean {
  const u = rnd.int(m.J);
  const a = s.routeOf[u];
  if (a < 0) return false;
  const A = s.routes[a];
  const pu = A.seq.indexOf(u);
  const removal = replaceDelta(m, A, pu, -1);
  const around = m.neighbours[u];
  const k = Math.min(near, around.length);
  let best = -1e-9;
  let kind = 0;
  let bb = -1;
  let bp = -1;
  for (let t = 0; t < k; t++) {
    const w = around[t];
    const b = s.routeOf[w];
    if (b < 0 || b === a) continue;
    const B = s.routes[b];
    const pw = B.seq.indexOf(w);
    if (removal < best) {
      // Relocate: u before w, or after it.
      for (const p of [pw, pw + 1]) {
        const d = removal + B.insertionCost(m, u, p);
        if (d < best) {
          best = d;
          kind = 1;
          bb = b;
          bp = p;
        }
      }
    }
    // Swap u with the stop before w, w itself, the stop after w.
    for (let p = Math.max(0, pw - 1); p <= Math.min(B.seq.length - 1, pw + 1); p++) {
      const inB = replaceDelta(m, B, p, u);
      if (!(inB < Number.POSITIVE_INFINITY)) continue;
      const d = inB + replaceDelta(m, A, pu, B.seq[p]);
      if (d < best) {
        best = d;
        kind = 2;
        bb = b;
        bp = p;
      }
    }
  }
  if (bb < 0) return false;
  if (kind === 1) applyRelocate(m, s, a, pu, bb, bp);
  else applySwap(m, s, a, pu, bb, bp);
  return true;
}
