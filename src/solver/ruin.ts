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

/** Removes job `j` (and its shipment partner) from its route; returns what was removed. */
function removeJob(m: Model, s: State, j: number, out: number[]): void {
  const r = s.routeOf[j];
  if (r < 0) return;
  const route = s.writable(r);
  const drop = isPaired(m, j) ? [j, m.partner[j]] : [j];
  route.seq = route.seq.filter((x) => !drop.includes(x));
  for (const x of drop) {
    s.place(x, -1);
    out.push(x);
  }
}

type Ruin = { removed: number[]; touched: Set<number> };

/** §4.1: strings of consecutive stops from routes near a seed stop. */
export function ruin(m: Model, s: State, rnd: Random, cBar: number, lMax: number): Ruin {
  const removed: number[] = [];
  const touched = new Set<number>();
  let used = 0;
  let stops = 0;
  for (const r of s.routes) {
    if (r.seq.length) {
      used++;
      stops += r.seq.length;
    }
  }
  if (!stops) return { removed, touched };
  const lsMax = Math.min(lMax, stops / used);
  const ksMax = (4 * cBar) / (1 + lsMax) - 1;
  const ks = Math.floor(rnd.next() * ksMax) + 1;
  let seed = rnd.int(m.J);
  for (let tries = 0; s.routeOf[seed] < 0 && tries < m.J; tries++) seed = (seed + 1) % m.J;
  const around = m.neighbours[seed];
  for (let k = -1; k < around.length && touched.size < ks; k++) {
    const c = k < 0 ? seed : around[k];
    const r = s.routeOf[c];
    if (r < 0 || touched.has(r)) continue;
    const route = s.writable(r);
    const n = route.seq.length;
    const lMaxT = Math.min(n, lsMax);
    const l = Math.floor(rnd.next() * lMaxT) + 1;
    const pos = route.seq.indexOf(c);
    let take: number[];
    if (l === n || rnd.next() < 0.5) {
      // String: l stops containing c.
      const lo = Math.max(0, pos - l + 1);
      const hi = Math.min(pos, n - l);
      const start = lo + rnd.int(hi - lo + 1);
      take = route.seq.slice(start, start + l);
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
        .slice(start, start + span)
        .filter((_, i) => i + start < kept || i + start >= kept + keep);
    }
    touched.add(r);
    for (const j of take) if (s.routeOf[j] === r) removeJob(m, s, j, removed);
  }
  for (const r of touched) s.routes[r].update(m);
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
  for (let r = 0; r < s.routes.length; r++) if (s.routes[r].seq.length) used.push(r);
  if (used.length < 2) return;
  const a = used[rnd.int(used.length)];
  const b = used[rnd.int(used.length)];
  const r = s.routes[b].seq.length < s.routes[a].seq.length ? b : a;
  const route = s.writable(r);
  for (const j of route.seq) {
    s.place(j, -1);
    out.push(j);
  }
  route.seq = [];
  route.update(m);
}
