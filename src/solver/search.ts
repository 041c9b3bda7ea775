/**
 * The search: SISR, "Slack Induction by String Removals" (Christiaens & Vanden Berghe,
 * Transportation Science 54(2), 2020). Each iteration ruins a solution by removing strings of
 * consecutive stops from a few routes near a random seed stop (§4.1: string and split-string
 * removals), recreates it by greedy insertion with blinks (§4.2: each position skipped with a
 * small probability, jobs ordered randomly, by demand, far first or close first), and accepts
 * the result by simulated annealing with an exponentially falling temperature (§5).
 */
import { DELIVERY, type Model, PICKUP, VISIT } from "./model";
import type { Random } from "./random";
import { isPaired, Route } from "./route";

/** SISR's defaults (§6): c̄ = 10, L_max = 10, split-string β = 0.01 (as "keep going" 1 − β), blinks 0.01. */
const BLINK = 0.01;
const SPLIT_KEEP = 0.99;

export class State {
  routes: Route[];
  routeOf: Int32Array;
  unassigned: number[];
  cost = 0;
  private owned: boolean[];

  constructor(m: Model, routes?: Route[], routeOf?: Int32Array, unassigned?: number[]) {
    this.routes = routes ?? Array.from({ length: m.V }, (_, v) => new Route(v));
    this.routeOf = routeOf ?? new Int32Array(m.J).fill(-1);
    this.unassigned = unassigned ?? [];
    this.owned = new Array(this.routes.length).fill(!routes);
  }

  clone(m: Model): State {
    const s = new State(m, this.routes.slice(), this.routeOf.slice(), this.unassigned.slice());
    s.cost = this.cost;
    return s;
  }

  /** The route to modify, copied first if another state shares it (copy on write). */
  writable(r: number): Route {
    if (!this.owned[r]) {
      this.routes[r] = this.routes[r].clone();
      this.owned[r] = true;
    }
    return this.routes[r];
  }
}

/** Unassigned jobs cost more than any set of routes: assigning comes first, the objective second. */
export function penalty(m: Model): number {
  let max = 0;
  for (const x of m.cost) if (Number.isFinite(x) && x > max) max = x;
  return (max + 1) * 4 * (m.J + 2) + 1e6;
}

export function totalCost(m: Model, s: State, unassignedPenalty: number): number {
  let c = 0;
  let longest = 0;
  for (const r of s.routes) {
    c += r.cost;
    if (r.duration > longest) longest = r.duration;
  }
  // Balance: the longest route counts once more than the others (contract §16's `balance`).
  if (m.balance) c += longest * s.routes.length;
  return c + s.unassigned.length * unassignedPenalty;
}

/** Removes job `j` (and its shipment partner) from its route; returns what was removed. */
function removeJob(m: Model, s: State, j: number, out: number[]): void {
  const r = s.routeOf[j];
  if (r < 0) return;
  const route = s.writable(r);
  const drop = isPaired(m, j) ? [j, m.partner[j]] : [j];
  route.seq = route.seq.filter((x) => !drop.includes(x));
  for (const x of drop) {
    s.routeOf[x] = -1;
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

/** §4.2's orders of reinsertion: random (weight 4), demand (4), far (2), close (1). */
function sortForInsertion(m: Model, jobs: number[], rnd: Random): number[] {
  const x = rnd.int(11);
  const depotDistance = (j: number) => {
    const start = m.vStart[0];
    return start < 0 ? 0 : m.dist[start * m.L + m.loc[j]];
  };
  const demand = (j: number) => {
    let d = 0;
    for (let k = 0; k < m.D; k++) d += Math.abs(m.dem[j * m.D + k]);
    return d;
  };
  const out = jobs.slice();
  if (x < 4) {
    for (let i = out.length - 1; i > 0; i--) {
      const k = rnd.int(i + 1);
      [out[i], out[k]] = [out[k], out[i]];
    }
  } else if (x < 8) out.sort((a, b) => demand(b) - demand(a) || a - b);
  else if (x < 10) out.sort((a, b) => depotDistance(b) - depotDistance(a) || a - b);
  else out.sort((a, b) => depotDistance(a) - depotDistance(b) || a - b);
  return out;
}

/** Greedy insertion with blinks; what fits nowhere stays unassigned. */
export function recreate(m: Model, s: State, jobs: number[], rnd: Random | null): void {
  const order = rnd ? sortForInsertion(m, jobs, rnd) : jobs;
  const done = new Set<number>();
  let emptyTried = new Set<string>();
  for (const j of order) {
    if (done.has(j) || s.routeOf[j] >= 0) continue;
    if (m.kind[j] === DELIVERY) {
      // A drop-off goes in with its pick-up.
      insertPair(m, s, m.partner[j], j, rnd);
      done.add(j).add(m.partner[j]);
      continue;
    }
    if (m.kind[j] === PICKUP) {
      insertPair(m, s, j, m.partner[j], rnd);
      done.add(j).add(m.partner[j]);
      continue;
    }
    let best = Number.POSITIVE_INFINITY;
    let bestR = -1;
    let bestP = -1;
    emptyTried = new Set<string>();
    for (let r = 0; r < s.routes.length; r++) {
      const route = s.routes[r];
      const n = route.seq.length;
      if (n === 0) {
        // Identical empty vehicles give identical answers: try one of each kind.
        const kind = `${m.vStart[r]}|${m.vEnd[r]}|${m.vShiftA[r]}|${m.vShiftB[r]}|${Array.from(m.vCap.subarray(r * m.D, r * m.D + m.D)).join(",")}`;
        if (emptyTried.has(kind)) continue;
        emptyTried.add(kind);
      }
      for (let p = 0; p <= n; p++) {
        if (rnd && rnd.next() < BLINK) continue;
        const c = route.insertionCost(m, j, p);
        if (c < best) {
          best = c;
          bestR = r;
          bestP = p;
        }
      }
    }
    if (bestR < 0) {
      s.unassigned.push(j);
      continue;
    }
    const route = s.writable(bestR);
    route.seq.splice(bestP, 0, j);
    route.update(m);
    s.routeOf[j] = bestR;
  }
}

function insertPair(m: Model, s: State, p: number, q: number, rnd: Random | null): void {
  let best = Number.POSITIVE_INFINITY;
  let at: [number, number, number] | null = null;
  for (let r = 0; r < s.routes.length; r++) {
    const route = s.routes[r];
    const n = route.seq.length;
    for (let a = 0; a <= n; a++) {
      for (let b = a; b <= n; b++) {
        if (rnd && rnd.next() < BLINK) continue;
        const c = route.pairCost(m, p, q, a, b);
        if (c < best) {
          best = c;
          at = [r, a, b];
        }
      }
    }
  }
  if (!at) {
    s.unassigned.push(p, q);
    return;
  }
  const [r, a, b] = at;
  const route = s.writable(r);
  route.seq.splice(b, 0, q);
  route.seq.splice(a, 0, p);
  route.update(m);
  s.routeOf[p] = r;
  s.routeOf[q] = r;
}

export const isVisit = (m: Model, j: number) => m.kind[j] === VISIT;
