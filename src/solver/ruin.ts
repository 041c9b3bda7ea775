/**
 * SISR's ruin (§4.1 of Christiaens & Vanden Berghe, 2020): strings and split strings of
 * consecutive stops removed near a seed stop; and the route removal of fleet minimisation.
 */
import type { Model } from "./model";
import type { Random } from "./random";
import { isPaired } from "./route";
import type { State } from "./state";

/** SISR's split-string β = 0.01 (§6), as "keep going" 1 − β. */
const SPLIT_KEEP = 0.99;

/** The probability that a route loses a split string rather than a string (§4.1; `SolveOptions.splitRate`). */
export const DEFAULT_SPLIT = 0.5;

type Ruin = { removed: number[]; touched: Set<number> };

/**
 * §4.1: strings of consecutive stops from routes near a seed stop (`at`, else a random one), each
 * a split string with probability `split` (always a string where it spans the route).
 */
export function ruin(
  m: Model,
  s: State,
  rnd: Random,
  cBar: number,
  lMax: number,
  at = -1,
  split = DEFAULT_SPLIT,
): Ruin {
  const removed: number[] = [];
  const touched = new Set<number>();
  let used = 0;
  let stops = 0;
  // Counted and cut among the movable stops: a route's fixed prefix is never removed.
  for (const r of s.routes) {
    const movable = r.seq.length - m.fixedCount[r.v];
    if (movable > 0) {
      used++;
      stops += movable;
    }
  }
  if (!stops) return { removed, touched };
  const lsMax = Math.min(lMax, stops / used);
  const ksMax = (4 * cBar) / (1 + lsMax) - 1;
  const ks = Math.floor(rnd.next() * ksMax) + 1;
  // The seed: `at` if given (an unassigned job: the strings come from the routes around it), else
  // a random job on a route.
  let seed = at >= 0 ? at : rnd.int(m.J);
  for (let tries = 0; at < 0 && (s.routeOf[seed] < 0 || m.locked[seed]) && tries < m.J; tries++)
    seed = (seed + 1) % m.J;
  const around = m.neighbours[seed];
  for (let k = -1; k < around.length && touched.size < ks; k++) {
    const c = k < 0 ? seed : around[k];
    const r = s.routeOf[c];
    if (r < 0 || touched.has(r) || m.locked[c]) continue;
    const route = s.writable(r);
    // Positions from the end of the fixed prefix (f: 0 but while re-planning from now).
    const f = m.fixedCount[route.v];
    const n = route.seq.length - f;
    const lMaxT = Math.min(n, lsMax);
    const l = Math.floor(rnd.next() * lMaxT) + 1;
    const pos = route.seq.indexOf(c) - f;
    let take: number[];
    if (l === n || rnd.next() < 1 - split) {
      // String: l stops containing c.
      const lo = Math.max(0, pos - l + 1);
      const hi = Math.min(pos, n - l);
      const start = lo + rnd.int(hi - lo + 1);
      take = route.seq.slice(f + start, f + start + l);
    } else {
      // Split string: l + m stops containing c, of which m consecutive ones stay.
      let keep = 1;
      while (l + keep < n && rnd.next() < SPLIT_KEEP * 0.5) keep++;
      const span = Math.min(n, l + keep);
      const lo = Math.max(0, pos - span + 1);
      const hi = Math.min(pos, n - span);
      const start = lo + rnd.int(hi - lo + 1);
      const kept = start + rnd.int(span - keep + 1);
      take = route.seq
        .slice(f + start, f + start + span)
        .filter((_, i) => i + start < kept || i + start >= kept + keep);
    }
    touched.add(r);
    let count = 0;
    for (const j of take) {
      if (s.routeOf[j] !== r) continue;
      // A shipment leaves with its partner.
      s.place(j, -1);
      removed.push(j);
      count++;
      if (isPaired(m, j) && s.routeOf[m.partner[j]] === r) {
        s.place(m.partner[j], -1);
        removed.push(m.partner[j]);
        count++;
      }
    }
    // The caches are recomputed from the first stop removed to the last.
    const seq = route.seq;
    let lo = 0;
    while (s.routeOf[seq[lo]] === r) lo++;
    let hi = seq.length;
    while (s.routeOf[seq[hi - 1]] === r) hi--;
    route.seq = seq.filter((x) => s.routeOf[x] === r);
    route.update(m, lo, hi - count);
  }
  return { removed, touched };
}

/**
 * Route removal (fleet minimisation): every stop of one route, the shorter of two drawn at
 * random, is taken out; the recreate then may not open a vehicle, so the iteration can only be
 * accepted if the stops found room in the other routes (else they stay unassigned, which costs
 * more than any route set).
 */
export function removeRoute(m: Model, s: State, rnd: Random, out: number[]): void {
  const used: number[] = [];
  const movable = (r: number) => s.routes[r].seq.length - m.fixedCount[r];
  for (let r = 0; r < s.routes.length; r++) if (movable(r) > 0) used.push(r);
  if (used.length < 2) return;
  const a = used[rnd.int(used.length)];
  const b = used[rnd.int(used.length)];
  const r = movable(b) < movable(a) ? b : a;
  const route = s.writable(r);
  // Its fixed prefix stays.
  const f = m.fixedCount[r];
  for (const j of route.seq.slice(f)) {
    s.place(j, -1);
    out.push(j);
  }
  route.seq = route.seq.slice(0, f);
  route.update(m);
}
