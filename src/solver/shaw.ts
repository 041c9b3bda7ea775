/**
 * Shaw (relatedness) removal of whole requests, a second ruin beside SISR's strings for
 * pick-up/drop-off instances (Ropke & Pisinger, "An adaptive large neighborhood search heuristic
 * for the pickup and delivery problem with time windows", Transportation Science 40(4), 2006,
 * §4.1.1, after Shaw 1998). Two requests are related when their pick-ups are near each other and
 * so are their drop-offs, when they are served at similar times and when they carry similar
 * loads: R(i, j) = 9·(d(p_i, p_j) + d(q_i, q_j)) + 3·(|S(p_i) − S(p_j)| + |S(q_i) − S(q_j)|)
 * + 2·|l_i − l_j|, each term normalised to [0, 1] (the paper's weights φ = 9, χ = 3, ψ = 2; its
 * vehicle-compatibility term is left out: every vehicle serves every request here). From a random
 * request, each further one is drawn among the requests still in, sorted by relatedness to a
 * random request already removed, at rank ⌊y^p·|L|⌋ with y uniform and p = 6 (the paper's
 * determinism). SISR's strings remove stops that are close along one route; Shaw removal takes
 * requests that are close in space and time across routes, which regret insertion can then
 * redistribute. A single visit counts as a request whose pick-up and drop-off are the same stop.
 */
import { type Model, NONE, PICKUP } from "./model";
import type { Random } from "./random";
import type { State } from "./state";

/** The paper's weights and determinism (§6.1: φ = 9, χ = 3, ψ = 2, p = 6). */
const PHI = 9;
const CHI = 3;
const PSI = 2;
const DETERMINISM = 6;

type Scales = { dist: number; time: number; load: number };
const scalesOf = new WeakMap<Model, Scales>();

/** The normalisers: the longest leg between two jobs, the widest span of windows, the largest load. */
function scales(m: Model): Scales {
  let s = scalesOf.get(m);
  if (s) return s;
  let dist = 0;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  let load = 0;
  for (let i = 0; i < m.J; i++) {
    const li = m.loc[i];
    if (li !== NONE)
      for (let j = 0; j < m.J; j++) {
        const lj = m.loc[j];
        const c = lj === NONE ? 0 : m.cost[li * m.L + lj];
        if (Number.isFinite(c) && c > dist) dist = c;
      }
    if (Number.isFinite(m.twA[i])) lo = Math.min(lo, m.twA[i]);
    if (Number.isFinite(m.twB[i])) hi = Math.max(hi, m.twB[i]);
    load = Math.max(load, loadOf(m, i));
  }
  s = { dist: dist || 1, time: hi > lo ? hi - lo : 1, load: load || 1 };
  scalesOf.set(m, s);
  return s;
}

function loadOf(m: Model, j: number): number {
  let x = 0;
  for (let d = 0; d < m.D; d++) x += Math.abs(m.dem[j * m.D + d]);
  return x;
}

/**
 * Removes 1 … `most` requests (uniformly; a pair is two stops) by relatedness; returns the jobs
 * removed. Stops of a route's fixed prefix and locked jobs stay.
 */
export function shawRuin(m: Model, s: State, rnd: Random, most: number): number[] {
  const { dist, time, load } = scales(m);
  // Each routed request by its first stop (a pick-up, or a visit), with its stops' start times.
  const start = new Float64Array(m.J);
  const requests: number[] = [];
  for (const route of s.routes) {
    const f = m.fixedCount[route.v];
    for (let i = 0; i < route.seq.length; i++) {
      const j = route.seq[i];
      start[j] = route.es[i];
      if (i >= f && !m.locked[j] && (m.partner[j] === NONE || m.kind[j] === PICKUP)) requests.push(j);
    }
  }
  if (!requests.length) return [];
  const other = (j: number) => (m.partner[j] === NONE ? j : m.partner[j]);
  const related = (i: number, j: number) => {
    const a = other(i);
    const b = other(j);
    const L = m.L;
    const d = m.cost[m.loc[i] * L + m.loc[j]] + m.cost[m.loc[a] * L + m.loc[b]];
    const t = Math.abs(start[i] - start[j]) + Math.abs(start[a] - start[b]);
    return (PHI * d) / dist + (CHI * t) / time + (PSI * Math.abs(loadOf(m, i) - loadOf(m, j))) / load;
  };
  const count = Math.min(requests.length, 1 + rnd.int(Math.max(1, Math.floor(most))));
  const left = requests.slice();
  const taken: number[] = [left.splice(rnd.int(left.length), 1)[0]];
  const key = new Float64Array(m.J);
  while (taken.length < count) {
    const r = taken[rnd.int(taken.length)];
    for (const j of left) key[j] = related(r, j);
    left.sort((x, y) => key[x] - key[y] || x - y);
    const at = Math.floor(rnd.next() ** DETERMINISM * left.length);
    taken.push(left.splice(at, 1)[0]);
  }
  // Out of their routes, each route's caches recomputed from its first stop removed to its last.
  const removed: number[] = [];
  const touched = new Set<number>();
  for (const j of taken) {
    touched.add(s.routeOf[j]);
    removed.push(j);
    if (m.partner[j] !== NONE) removed.push(m.partner[j]);
  }
  for (const r of touched) {
    const route = s.writable(r);
    const seq = route.seq;
    const out = new Set(removed.filter((j) => s.routeOf[j] === r));
    let lo = 0;
    while (!out.has(seq[lo])) lo++;
    let hi = seq.length;
    while (!out.has(seq[hi - 1])) hi--;
    route.seq = seq.filter((x) => !out.has(x));
    route.update(m, lo, hi - out.size);
  }
  for (const j of removed) s.place(j, -1);
  return removed;
}
