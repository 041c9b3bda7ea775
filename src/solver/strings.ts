/**
 * Inter-route string relocation (Or-opt between routes: I. Or, "Traveling salesman-type
 * combinatorial problems and their relation to the logistics of regional blood banking", PhD
 * thesis, Northwestern University, 1976; between routes with time windows as in Bräysy and
 * Gendreau's survey, Transportation Science 39(1), 2005, §3): a string of one to three
 * consecutive stops leaves its route and goes, as it was or reversed, right before or right after
 * one of its first stop's nearest neighbours on another route. Checked from the routes' caches
 * in O(string length + D): the gap it leaves against the latest start of the stop after it, the
 * string re-timed where it lands and then against the latest start of the stop after it there.
 *
 * Standalone visits only, no pinned or fixed stops, no `balance` (the tail exchanges' gate).
 */
import { leg, type Model } from "./model";
import type { Random } from "./random";
import type { Route } from "./route";
import type { State } from "./state";

/** A relocation: the string A[i..i+len) (reversed or not) before position p of route b. */
export type StringMove = { delta: number; i: number; len: number; reversed: boolean; b: number; p: number };

/** The cost change of taking A[i..i+len) out, or Infinity when the route left would break a window or its shift. */
export function stringRemoval(m: Model, A: Route, i: number, len: number): number {
  const n = A.seq.length;
  if (len === n) return -A.cost;
  const w = A.v;
  const prevLoc = i === 0 ? m.vStart[w] : m.loc[A.seq[i - 1]];
  const dep = i === 0 ? m.vShiftA[w] : A.es[i - 1] + m.svc[A.seq[i - 1]];
  const j = i + len;
  const nextLoc = j === n ? m.vEnd[w] : m.loc[A.seq[j]];
  if (j === n) {
    if (dep + leg(m, m.time, prevLoc, nextLoc) > m.vShiftB[w]) return Number.POSITIVE_INFINITY;
  } else if (Math.max(dep + leg(m, m.time, prevLoc, nextLoc), m.twA[A.seq[j]]) > A.ls[j])
    return Number.POSITIVE_INFINITY;
  let out = A.edge[i];
  for (let k = i + 1; k <= j; k++) out += A.edge[k];
  return leg(m, m.cost, prevLoc, nextLoc) - out;
}

/**
 * The cost change of putting the string `str` (stops in the order they will be driven) before
 * position p of B, or Infinity when it does not fit (load, windows, shift).
 */
export function stringInsertion(m: Model, B: Route, p: number, str: number[]): number {
  const n = B.seq.length;
  const w = B.v;
  const D = m.D;
  for (let d = 0; d < D; d++) {
    let load = B.pt[d];
    for (const x of str) load += m.dem[x * D + d];
    if (load > m.vCap[w * D + d] + 1e-9) return Number.POSITIVE_INFINITY;
  }
  let prev = p === 0 ? m.vStart[w] : m.loc[B.seq[p - 1]];
  let t = p === 0 ? m.vShiftA[w] : B.es[p - 1] + m.svc[B.seq[p - 1]];
  let cost = -B.edge[p];
  for (const x of str) {
    const l = m.loc[x];
    const start = Math.max(t + leg(m, m.time, prev, l), m.twA[x]);
    if (start > m.twB[x]) return Number.POSITIVE_INFINITY;
    cost += leg(m, m.cost, prev, l);
    t = start + m.svc[x];
    prev = l;
  }
  const nextLoc = p === n ? m.vEnd[w] : m.loc[B.seq[p]];
  const arr = t + leg(m, m.time, prev, nextLoc);
  if (p === n ? arr > m.vShiftB[w] : Math.max(arr, m.twA[B.seq[p]]) > B.ls[p])
    return Number.POSITIVE_INFINITY;
  return cost + leg(m, m.cost, prev, nextLoc);
}

/** Makes relocation `x` of a string of route `a` in `s`. */
export function applyString(m: Model, s: State, a: number, x: StringMove): void {
  const A = s.writable(a);
  const B = s.writable(x.b);
  const str = A.seq.splice(x.i, x.len);
  if (x.reversed) str.reverse();
  B.seq.splice(x.p, 0, ...str);
  for (const j of str) s.place(j, x.b);
  A.update(m, x.i, x.i);
  B.update(m, x.p, x.p + str.length);
}

/**
 * The best relocation of a string that starts at A's stop i (1–3 stops, as it is or reversed)
 * right before or after one of the first stop's `near` nearest neighbours on another route.
 */
export function bestString(
  m: Model,
  s: State,
  a: number,
  i: number,
  near: number,
  best = -1e-9,
): StringMove | null {
  const A = s.routes[a];
  const u = A.seq[i];
  const around = m.neighbours[u];
  const k = Math.min(near, around.length);
  let found: StringMove | null = null;
  const str: number[] = [];
  for (let len = 1; len <= 3 && i + len <= A.seq.length; len++) {
    const out = stringRemoval(m, A, i, len);
    if (!Number.isFinite(out)) continue;
    for (const reversed of [false, true]) {
      if (reversed && len === 1) continue;
      str.length = 0;
      for (let q = 0; q < len; q++) str.push(A.seq[reversed ? i + len - 1 - q : i + q]);
      for (let t = 0; t < k; t++) {
        const w = around[t];
        const b = s.routeOf[w];
        if (b < 0 || b === a) continue;
        const B = s.routes[b];
        const pw = B.seq.indexOf(w);
        for (const p of [pw, pw + 1]) {
          if (!(out + lowerBound(m, B, p, str) < best)) continue;
          const d = out + stringInsertion(m, B, p, str);
          if (d < best) {
            best = d;
            found = { delta: d, i, len, reversed, b, p };
          }
        }
      }
    }
  }
  return found;
}

/** The insertion's cost without its checks (its legs only), to skip the time checks of a move that cannot win. */
function lowerBound(m: Model, B: Route, p: number, str: number[]): number {
  const w = B.v;
  const n = B.seq.length;
  let prev = p === 0 ? m.vStart[w] : m.loc[B.seq[p - 1]];
  let cost = -B.edge[p];
  for (const x of str) {
    cost += leg(m, m.cost, prev, m.loc[x]);
    prev = m.loc[x];
  }
  return cost + leg(m, m.cost, prev, p === n ? m.vEnd[w] : m.loc[B.seq[p]]);
}

/** One descent step: a random stop, the best relocation of a string that starts at it, made if it shortens the routes. */
export function stringMove(m: Model, s: State, rnd: Random, near: number): boolean {
  const u = rnd.int(m.J);
  const a = s.routeOf[u];
  if (a < 0) return false;
  const x = bestString(m, s, a, s.routes[a].seq.indexOf(u), near);
  if (!x) return false;
  applyString(m, s, a, x);
  return true;
}
