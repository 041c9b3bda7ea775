/**
 * A population with crossover around SISR, after HGS (T. Vidal et al., "A hybrid genetic
 * algorithm for multidepot and periodic vehicle routing problems", Operations Research 60(3),
 * 2012, and "A hybrid genetic algorithm with adaptive diversity management for a large class of
 * vehicle routing problems with time-windows", Computers & OR 40(1), 2013): a few solutions,
 * each from a SISR run of its own; then parents picked by binary tournament on the biased
 * fitness (cost rank plus diversity rank, the diversity measured by broken pairs), crossed by
 * SREX (selective route exchange: Y. Nagata and S. Kobayashi, "A memetic algorithm for the
 * pickup and delivery problem with time windows using selective route exchange crossover",
 * PPSN XI, 2010; as PyVRP's `selective_route_exchange.cpp` did before PyVRP dropped its genetic
 * algorithm), the offspring repaired by the solver's own recreate and improved by a short SISR
 * run (the "education"), and kept unless it duplicates a member; the member with the worst
 * biased fitness, never the cheapest, leaves when the population is over its size.
 *
 * The instances carry no coordinates (matrices only), so "adjacent routes" are not taken by the
 * polar angle of their centroids, as in PyVRP, but by walking the nearest-neighbour lists from a
 * random customer: the routes met first.
 */
import type { Annealer } from "./anneal";
import { fleetApplies, routesUsed } from "./fleet";
import type { Model } from "./model";
import type { Random } from "./random";
import { type Recreate, recreate } from "./search";
import { State, totalCost } from "./state";

/** As the fleet phase: standalone visits, no pinned or fixed stops (a route may then change vehicle within its class), no `balance`. */
export const populationApplies = fleetApplies;

/** How often the clock is read, in iterations (as the single run's PROGRESS_EVERY). */
const READ_EVERY = 100;

/** The budget shared by the runs: iterations made, and the fraction spent (iterations, or a benchmark's clock). */
export class Budget {
  constructor(
    readonly iterations: number,
    readonly clock: (() => number) | undefined,
    public it: number,
    public spent: number,
  ) {}

  /** The fraction of the budget spent (1 when the iterations are out). */
  now(): number {
    if (this.it >= this.iterations) return 1;
    if (!this.clock) return this.it / this.iterations;
    if (this.it % READ_EVERY === 0) this.spent = this.clock();
    return this.spent;
  }
}

/**
 * SISR on `current` (changed in place) while the budget's fraction is in [from, to), its
 * temperature falling from `t0` to `tf` over that span (§5's schedule); returns the best met.
 */
export function run(
  sisr: Annealer,
  budget: Budget,
  current: State,
  from: number,
  to: number,
  t0: number,
  tf: number,
): State {
  let best = current.snapshot(sisr.m);
  for (;;) {
    const f = budget.now();
    if (f >= to) break;
    const p = Math.min(1, Math.max(0, (f - from) / Math.max(1e-12, to - from)));
    best = sisr.step(current, t0 * (tf / t0) ** p, best);
    budget.it++;
  }
  return best;
}

/**
 * SREX's exchange, before repair. From `a`, the first `k` routes met walking the nearest-neighbour
 * lists breadth-first from customer `seed`; from `b`, as many routes at most, those holding most
 * of their customers (none that holds none; ties: the lower vehicle). The offspring is `b` with
 * its chosen routes emptied, the chosen customers taken out of its other routes (a route that is
 * then infeasible, which only a matrix without the triangle inequality allows, is emptied too),
 * and `a`'s chosen routes copied whole into empty vehicles of their class (the lowest first).
 * Returns the offspring (a new state sharing the parents' unchanged routes), the customers it
 * misses (ascending), and `a`'s chosen routes; null when a chosen route finds no empty vehicle.
 */
export function exchange(
  m: Model,
  a: State,
  b: State,
  seed: number,
  k: number,
): { child: State; missing: number[]; chosen: number[] } | null {
  const chosen: number[] = [];
  const seen = new Uint8Array(m.J);
  const queue = [seed];
  seen[seed] = 1;
  for (let q = 0; q < queue.length && chosen.length < k; q++) {
    const c = queue[q];
    const r = a.routeOf[c];
    if (r >= 0 && !chosen.includes(r)) chosen.push(r);
    for (const x of m.neighbours[c]) {
      if (seen[x]) continue;
      seen[x] = 1;
      queue.push(x);
    }
  }
  const inA = new Uint8Array(m.J);
  for (const r of chosen) for (const j of a.routes[r].seq) inA[j] = 1;
  const overlap = new Int32Array(b.routes.length);
  const candidates: number[] = [];
  for (let r = 0; r < b.routes.length; r++) {
    for (const j of b.routes[r].seq) overlap[r] += inA[j];
    if (overlap[r] > 0) candidates.push(r);
  }
  candidates.sort((x, y) => overlap[y] - overlap[x] || x - y);
  const replaced = candidates.slice(0, chosen.length);
  const child = new State(m, b.routes.slice(), b.routeOf.slice(), []);
  child.begin();
  const missing: number[] = [];
  for (const j of b.unassigned) if (!inA[j]) missing.push(j);
  const empty = (r: number) => {
    const route = child.writable(r);
    for (const j of route.seq) {
      child.place(j, -1);
      if (!inA[j]) missing.push(j);
    }
    route.seq = [];
    route.update(m);
  };
  for (const r of replaced) empty(r);
  for (let r = 0; r < child.routes.length; r++) {
    const seq = child.routes[r].seq;
    if (!seq.some((j) => inA[j])) continue;
    const route = child.writable(r);
    for (const j of seq) if (inA[j]) child.place(j, -1);
    route.seq = seq.filter((j) => !inA[j]);
    route.update(m);
    if (!route.feasible) empty(r);
  }
  for (const r of chosen) {
    const members = m.classes[m.vClass[r]];
    let e = -1;
    for (const v of members)
      if (!child.routes[v].seq.length) {
        e = v;
        break;
      }
    if (e < 0) return null;
    // Vehicles of one class are identical (start, end, shift, capacity): the caches stay valid.
    const copy = a.routes[r].clone();
    copy.v = e;
    child.writable(e);
    child.routes[e] = copy;
    for (const j of copy.seq) child.place(j, e);
  }
  missing.sort((x, y) => x - y);
  return { child, missing, chosen };
}

/**
 * SREX with repair: a random seed customer on a route of `a` and a random number of routes (1 to
 * half the smaller parent's), the exchange, then the missing customers placed by `g`'s greedy
 * insertion with blinks. Null when the exchange finds no vehicle for a route of `a`.
 */
export function srex(
  m: Model,
  a: State,
  b: State,
  rnd: Random,
  g: Recreate,
  unassignedPenalty: number,
): State | null {
  let seed = rnd.int(m.J);
  for (let tries = 0; a.routeOf[seed] < 0 && tries < m.J; tries++) seed = (seed + 1) % m.J;
  const k = 1 + rnd.int(Math.max(1, Math.floor(Math.min(routesUsed(a), routesUsed(b)) / 2)));
  const x = exchange(m, a, b, seed, k);
  if (!x) return null;
  g.open = true;
  recreate(m, x.child, x.missing, g);
  x.child.cost = totalCost(m, x.child, unassignedPenalty);
  return x.child;
}

/** Each job's successor on its route (−1: the route's end) and predecessor (−1: its start); −2: on no route. */
function links(m: Model, s: State): Int32Array {
  const out = new Int32Array(2 * m.J).fill(-2);
  for (const r of s.routes) {
    const seq = r.seq;
    for (let i = 0; i < seq.length; i++) {
      out[2 * seq[i]] = i + 1 < seq.length ? seq[i + 1] : -1;
      out[2 * seq[i] + 1] = i > 0 ? seq[i - 1] : -1;
    }
  }
  return out;
}

/**
 * The broken-pairs distance (Vidal et al. 2012/2013; PyVRP's `broken_pairs_distance`): the share
 * of the customers whose successor in `x` is neither their successor nor their predecessor in
 * `y`, or that start a route in `x` and are at neither end of theirs in `y` (a job on no route in
 * `x` counts for none). 0: the same routes.
 */
export function brokenPairs(x: Int32Array, y: Int32Array): number {
  const J = x.length / 2;
  let broken = 0;
  for (let j = 0; j < J; j++) {
    const s = x[2 * j];
    if (s === -2) continue;
    if (s !== y[2 * j] && s !== y[2 * j + 1]) broken++;
    if (x[2 * j + 1] === -1 && y[2 * j + 1] !== -1 && y[2 * j] !== -1) broken++;
  }
  return broken / Math.max(1, J);
}

type Member = { s: State; links: Int32Array };

export class Population {
  readonly members: Member[] = [];

  constructor(
    readonly m: Model,
    readonly size: number,
    /** The diversity of a member: its mean distance to this many nearest members. */
    readonly close = 3,
    /** Vidal's elite count: the diversity rank weighs 1 − elite ÷ members. */
    readonly elite = Math.max(1, Math.floor(size / 2)),
  ) {}

  /**
   * Each member's biased fitness (lower is better): its cost rank plus its diversity rank
   * weighted by 1 − elite ÷ members, both ranks scaled to [0, 1] (Vidal et al. 2012, §4.2).
   */
  fitness(): number[] {
    const n = this.members.length;
    if (n < 2) return new Array(n).fill(0);
    const diversity = this.members.map((x, i) => {
      const d = this.members
        .filter((_, k) => k !== i)
        .map((y) => brokenPairs(x.links, y.links))
        .sort((p, q) => p - q)
        .slice(0, this.close);
      return d.reduce((p, q) => p + q, 0) / d.length;
    });
    const idx = this.members.map((_, i) => i);
    const costRank = new Array(n);
    idx
      .slice()
      .sort((p, q) => this.members[p].s.cost - this.members[q].s.cost || p - q)
      .forEach((i, r) => {
        costRank[i] = r / (n - 1);
      });
    const divRank = new Array(n);
    idx
      .slice()
      .sort((p, q) => diversity[q] - diversity[p] || p - q)
      .forEach((i, r) => {
        divRank[i] = r / (n - 1);
      });
    const weight = 1 - Math.min(1, this.elite / n);
    return idx.map((i) => costRank[i] + weight * divRank[i]);
  }

  /** Adds `s` unless a member has the same routes; then the worst by biased fitness leaves, never the cheapest. */
  add(s: State): boolean {
    const l = links(this.m, s);
    if (this.members.some((x) => brokenPairs(l, x.links) === 0 && x.s.cost === s.cost)) return false;
    this.members.push({ s, links: l });
    if (this.members.length > this.size) {
      const fit = this.fitness();
      let cheapest = 0;
      for (let i = 1; i < this.members.length; i++)
        if (this.members[i].s.cost < this.members[cheapest].s.cost) cheapest = i;
      let worst = -1;
      for (let i = 0; i < this.members.length; i++)
        if (i !== cheapest && (worst < 0 || fit[i] > fit[worst])) worst = i;
      this.members.splice(worst, 1);
    }
    return true;
  }

  /** Binary tournament on the biased fitness (two draws, the fitter wins; ties: the first). */
  select(rnd: Random, fit: number[]): number {
    const x = rnd.int(this.members.length);
    const y = rnd.int(this.members.length);
    return fit[y] < fit[x] ? y : x;
  }

  /** Two distinct parents (the second tournament drawn again, a few times, while it repeats the first). */
  parents(rnd: Random): [State, State] {
    const fit = this.fitness();
    const a = this.select(rnd, fit);
    let b = this.select(rnd, fit);
    for (let tries = 0; b === a && tries < 10; tries++) b = this.select(rnd, fit);
    if (b === a) b = (a + 1) % this.members.length;
    return [this.members[a].s, this.members[b].s];
  }
}

export type EvolveOptions = {
  /** The share of the budget left at `from` that the first runs take, split evenly among them. */
  share: number;
  /** Each offspring's run: this fraction of the whole budget. */
  slice: number;
  /** The first runs' temperatures, start and final (scaled to the instance). */
  temperatures: [number, number];
  /** An offspring's run starts at this temperature (scaled) and ends at the final one. */
  offspringT0: number;
  /** false: no crossover, the slice improves a copy of the first parent (an ablation: restarts alone). */
  crossover?: boolean;
};

/**
 * The population's search from `start` (the construction or the fleet phase's result), with the
 * budget left from fraction `from`: `size` SISR runs of the full schedule, then generations of
 * SREX and a short SISR run until the budget is spent. Returns the best solution met (or `best`)
 * and what the population did.
 */
export function evolve(
  m: Model,
  sisr: Annealer,
  start: State,
  best: State,
  budget: Budget,
  from: number,
  size: number,
  o: EvolveOptions,
): { best: State; stats: { runs: number[]; offspring: number; kept: number; improved: number } } {
  const stats = { runs: [] as number[], offspring: 0, kept: 0, improved: 0 };
  const [t0, tf] = o.temperatures;
  const pop = new Population(m, size);
  const width = ((1 - from) * o.share) / size;
  for (let k = 0; k < size; k++) {
    const a = from + k * width;
    const found = run(sisr, budget, start.snapshot(m), a, a + width, t0, tf);
    pop.add(found);
    stats.runs.push(found.cost);
    if (found.cost < best.cost) best = found;
  }
  while (budget.now() < 1) {
    const [a, b] = pop.parents(sisr.rnd);
    const child = o.crossover === false ? null : srex(m, a, b, sisr.rnd, sisr.g, sisr.unassignedPenalty);
    // No vehicle for a route of `a` (no offspring): the slice improves a copy of `a` instead.
    const f = budget.now();
    const found = run(sisr, budget, child ?? a.snapshot(m), f, Math.min(1, f + o.slice), o.offspringT0, tf);
    stats.offspring++;
    if (pop.add(found) && pop.members.some((x) => x.s === found)) stats.kept++;
    if (found.cost < best.cost) {
      best = found;
      stats.improved++;
    }
  }
  return { best, stats };
}
