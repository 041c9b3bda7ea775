/**
 * Penalised time windows ("time warp"), after Vidal et al., "A hybrid genetic algorithm with
 * adaptive diversity management for a large class of vehicle routing problems with
 * time-windows", Computers & OR 40(1), 2013, §4 (concatenation of sequences) and §5 (adaptive
 * penalties), with Kindervater & Savelsbergh's time warp: a vehicle that reaches a stop after
 * its window has closed "travels back in time" to the window's end, and the time it travelled
 * back is the route's time warp. A route with time warp is infeasible; the fleet phase
 * (fleet.ts) may make one at a cost of `Model.warpWeight` per unit of warp, and keeps a fleet only
 * once no route has any.
 *
 * A sequence's data (duration D, time warp TW, earliest and latest start E and L) concatenates
 * in O(1), so each route keeps them for every prefix (its start depot and its first p stops) and
 * every suffix (its stops from p on and its end depot): an insertion before position p is
 * prefix(p) ⊕ u ⊕ suffix(p), its added warp known in O(1). The shift is the depots' window
 * (start: [shiftStart, shiftEnd], end: (−∞, shiftEnd]), so arriving late at the end is time
 * warp too, penalised alike. Capacity stays a hard constraint.
 */
import { leg, type Model } from "./model";

/** Numbers per position in a route's `seg`: the prefix's D, TW, E, L, then the suffix's. */
export const SEG = 8;

/**
 * Fills `seg` ((n + 1) × SEG) for the route of vehicle `v` with stops `seq`; returns its total
 * time warp (the whole route: prefix(n) ⊕ end depot). Incremental like `Route.update`: `seq`
 * changed in positions `lo` … `hi` − 1 only and was `oldN` long when `seg` was last filled, so the
 * prefixes up to `lo` are kept, the suffixes from `hi` on are the old ones moved, and only the
 * prefixes after `lo` and the suffixes before `hi` are recomputed (the same operations as a full
 * fill, so the same numbers).
 */
export function segments(
  m: Model,
  v: number,
  seq: number[],
  seg: Float64Array,
  lo = 0,
  hi = seq.length,
  oldN = seq.length,
): number {
  const n = seq.length;
  const time = m.time;
  // The unchanged suffixes to their new positions (their halves only: the prefixes there change).
  const shift = n - oldN;
  if (hi < n && shift > 0) {
    for (let p = n; p >= hi; p--) for (let k = 4; k < SEG; k++) seg[p * SEG + k] = seg[(p - shift) * SEG + k];
  } else if (hi < n && shift < 0) {
    for (let p = hi; p <= n; p++) for (let k = 4; k < SEG; k++) seg[p * SEG + k] = seg[(p - shift) * SEG + k];
  }
  // Prefixes: the start depot alone, then one stop more at a time (kept up to `lo`).
  let d: number;
  let tw: number;
  let e: number;
  let l: number;
  let at: number;
  if (lo === 0) {
    d = 0;
    tw = 0;
    e = m.vShiftA[v];
    l = m.vShiftB[v];
    at = m.vStart[v];
    seg[0] = d;
    seg[1] = tw;
    seg[2] = e;
    seg[3] = l;
  } else {
    const b = lo * SEG;
    d = seg[b];
    tw = seg[b + 1];
    e = seg[b + 2];
    l = seg[b + 3];
    at = m.loc[seq[lo - 1]];
  }
  for (let p = lo + 1; p <= n; p++) {
    const j = seq[p - 1];
    const to = m.loc[j];
    const delta = d - tw + leg(m, time, at, to);
    const wait = Math.max(m.twA[j] - delta - l, 0);
    const late = Math.max(e + delta - m.twB[j], 0);
    d = d + m.svc[j] + (delta - d + tw) + wait;
    e = Math.max(m.twA[j] - delta, e) - wait;
    l = Math.min(m.twB[j] - delta, l) + late;
    tw += late;
    at = to;
    const b = p * SEG;
    seg[b] = d;
    seg[b + 1] = tw;
    seg[b + 2] = e;
    seg[b + 3] = l;
  }
  // The whole route: the last prefix, then the end depot (no earliest arrival, the shift's end).
  const total = tw + Math.max(e + d - tw + leg(m, time, at, m.vEnd[v]) - m.vShiftB[v], 0);
  // Suffixes: the end depot alone, then one stop more at a time, from the back (kept from `hi`).
  let b = hi * SEG + 4;
  if (hi === n) {
    d = 0;
    tw = 0;
    e = Number.NEGATIVE_INFINITY;
    l = m.vShiftB[v];
    at = m.vEnd[v];
    seg[b] = d;
    seg[b + 1] = tw;
    seg[b + 2] = e;
    seg[b + 3] = l;
  } else {
    d = seg[b];
    tw = seg[b + 1];
    e = seg[b + 2];
    l = seg[b + 3];
    at = m.loc[seq[hi]];
  }
  for (let p = hi - 1; p >= 0; p--) {
    const j = seq[p];
    const from = m.loc[j];
    // The stop (D = service, TW = 0, its window) before the suffix.
    const delta = m.svc[j] + leg(m, time, from, at);
    const wait = Math.max(e - delta - m.twB[j], 0);
    const late = Math.max(m.twA[j] + delta - l, 0);
    d = m.svc[j] + d + (delta - m.svc[j]) + wait;
    e = Math.max(e - delta, m.twA[j]) - wait;
    l = Math.min(l - delta, m.twB[j]) + late;
    tw += late;
    at = from;
    b = p * SEG + 4;
    seg[b] = d;
    seg[b + 1] = tw;
    seg[b + 2] = e;
    seg[b + 3] = l;
  }
  return total;
}

/**
 * The total time warp of the route with visit `u` inserted before position `p`:
 * prefix(p) ⊕ u ⊕ suffix(p), O(1). `prevLoc` and `nextLoc`: the locations around the position
 * (the depots at the ends).
 */
export function warpWith(
  m: Model,
  seg: Float64Array,
  p: number,
  u: number,
  prevLoc: number,
  nextLoc: number,
): number {
  const b = p * SEG;
  const d1 = seg[b];
  const tw1 = seg[b + 1];
  const e1 = seg[b + 2];
  const l1 = seg[b + 3];
  const ul = m.loc[u];
  const delta = d1 - tw1 + leg(m, m.time, prevLoc, ul);
  const wait = Math.max(m.twA[u] - delta - l1, 0);
  const late = Math.max(e1 + delta - m.twB[u], 0);
  const d = d1 + m.svc[u] + (delta - d1 + tw1) + wait;
  const tw = tw1 + late;
  const e = Math.max(m.twA[u] - delta, e1) - wait;
  // ⊕ suffix(p): only its time warp and latest start matter for the total.
  const delta2 = d - tw + leg(m, m.time, ul, nextLoc);
  return tw + seg[b + 5] + Math.max(e + delta2 - seg[b + 7], 0);
}
