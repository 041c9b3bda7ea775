import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import { compile, type Model } from "../../src/solver/model";
import { brokenPairs, exchange, Population, srex } from "../../src/solver/population";
import { Random } from "../../src/solver/random";
import { Route } from "../../src/solver/route";
import { Recreate, recreate } from "../../src/solver/search";
import { penalty, State, totalCost } from "../../src/solver/state";
import type { Instance } from "../../src/solver/types";
import { checkSolution } from "../../src/solver-check";
import { lcg } from "./arbitrary";

/**
 * 8–30 visits on a 100 × 100 plane (Euclidean: removing a stop never makes a route late), as many
 * identical vehicles as visits; windows tight or loose, capacities small or large.
 */
function randomInstance(seed: number): Instance {
  const r = lcg(seed);
  const n = 8 + Math.floor(r() * 23);
  const pts = Array.from({ length: n + 1 }, () => [Math.floor(r() * 100), Math.floor(r() * 100)]);
  const distances = new Float64Array((n + 1) * (n + 1));
  for (let a = 0; a <= n; a++)
    for (let b = 0; b <= n; b++)
      distances[a * (n + 1) + b] = Math.hypot(pts[a][0] - pts[b][0], pts[a][1] - pts[b][1]);
  const capacity = [6 + Math.floor(r() * 30)];
  const width = r() < 0.5 ? 60 : 400;
  return {
    locations: n + 1,
    distances,
    durations: distances,
    vehicles: Array.from({ length: n }, (_, i) => ({
      id: `v${i}`,
      start: 0,
      end: 0,
      shiftStart: 0,
      shiftEnd: 1000,
      capacity,
    })),
    jobs: Array.from({ length: n }, (_, i) => {
      const a = Math.ceil(distances[i + 1]) + Math.floor(r() * 300);
      return {
        id: `j${i}`,
        location: i + 1,
        service: Math.floor(r() * 10),
        timeWindow: [a, a + 5 + width * r()] as [number, number],
        demand: [1 + Math.floor(r() * 6)],
      };
    }),
  };
}

/** A feasible solution: every job by greedy insertion with blinks, in a random order. */
function randomSolution(m: Model, rnd: Random): State {
  const s = new State(m);
  for (const r of s.routes) r.update(m);
  const jobs = Array.from({ length: m.J }, (_, j) => j);
  for (let i = jobs.length - 1; i > 0; i--) {
    const k = rnd.int(i + 1);
    [jobs[i], jobs[k]] = [jobs[k], jobs[i]];
  }
  recreate(m, s, jobs, new Recreate(m, rnd, 0));
  s.cost = totalCost(m, s, penalty(m));
  return s;
}

const key = (seqs: number[][]) => seqs.map((x) => x.join(",")).sort();

/** The exchange built the slow way from its definition, given `a`'s chosen routes. */
function bruteExchange(
  m: Model,
  a: State,
  b: State,
  chosen: number[],
): { routes: string[]; missing: number[] } {
  const fromA = new Set(chosen.flatMap((r) => a.routes[r].seq));
  const ranked = b.routes
    .map((r, i) => ({ i, overlap: r.seq.filter((j) => fromA.has(j)).length }))
    .filter((x) => x.overlap > 0)
    .sort((x, y) => y.overlap - x.overlap || x.i - y.i)
    .slice(0, chosen.length)
    .map((x) => x.i);
  const routes = chosen.map((r) => a.routes[r].seq.slice());
  b.routes.forEach((r, i) => {
    if (ranked.includes(i)) return;
    const kept = r.seq.filter((j) => !fromA.has(j));
    if (kept.length) routes.push(kept);
  });
  const served = new Set(routes.flat());
  const missing = Array.from({ length: m.J }, (_, j) => j).filter((j) => !served.has(j));
  return { routes: key(routes), missing };
}

/** Each job's links, the slow way: the undirected edges of `y` (depot: −1), and `x`'s edges not among them. */
function bruteBrokenPairs(m: Model, x: State, y: State): number {
  const edges = (s: State) =>
    s.routes.flatMap((r) => {
      if (!r.seq.length) return [];
      const path = [-1, ...r.seq, -1];
      return path.slice(1).map((v, i) => [path[i], v]);
    });
  const inY = new Set(edges(y).flatMap(([u, v]) => [`${u},${v}`, `${v},${u}`]));
  return edges(x).filter(([u, v]) => !inY.has(`${u},${v}`)).length / m.J;
}

describe("SREX (selective route exchange)", () => {
  it("keeps a's chosen routes whole, serves every job once, and equals the exchange built from its definition", () => {
    let exchanges = 0;
    let partial = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const m = compile(randomInstance(seed));
      const rnd = new Random(seed);
      const a = randomSolution(m, rnd);
      const b = randomSolution(m, rnd);
      const seedJob = rnd.int(m.J);
      const k = 1 + rnd.int(5);
      const x = exchange(m, a, b, seedJob, k);
      expect(x).not.toBeNull();
      if (!x) continue;
      exchanges++;
      const { child, missing, chosen } = x;
      // The routes met first from the seed: its own route first, as many as asked (or all of a's).
      const usedA = a.routes.filter((r) => r.seq.length).length;
      expect(chosen[0]).toBe(a.routeOf[seedJob]);
      expect(chosen.length).toBe(Math.min(k, usedA));
      const expected = bruteExchange(m, a, b, chosen);
      expect(key(child.routes.filter((r) => r.seq.length).map((r) => r.seq))).toEqual(expected.routes);
      expect(missing).toEqual(expected.missing);
      if (missing.length) partial++;
      // a's routes intact, each on a vehicle of its own; every job once; caches as rebuilt.
      const seen = new Set<number>(missing);
      child.routes.forEach((r, i) => {
        expect(r.v).toBe(i);
        for (const j of r.seq) {
          expect(child.routeOf[j]).toBe(i);
          expect(seen.has(j)).toBe(false);
          seen.add(j);
        }
        const fresh = new Route(i);
        fresh.seq = r.seq.slice();
        fresh.update(m);
        expect(r.cost).toBeCloseTo(fresh.cost, 9);
        expect(r.feasible).toBe(fresh.feasible);
        expect(Array.from(r.ls.subarray(0, r.seq.length))).toEqual(
          Array.from(fresh.ls.subarray(0, r.seq.length)),
        );
        expect(Array.from(r.es.subarray(0, r.seq.length))).toEqual(
          Array.from(fresh.es.subarray(0, r.seq.length)),
        );
      });
      for (const j of missing) expect(child.routeOf[j]).toBe(-1);
      expect(seen.size).toBe(m.J);
      for (const r of chosen)
        expect(child.routes.some((c) => c.seq.join() === a.routes[r].seq.join())).toBe(true);
      // The parents are untouched (the offspring shares their routes, copied on change).
      expect(a.routes.every((r) => r.seq.every((j) => a.routeOf[j] === r.v))).toBe(true);
      expect(b.routes.every((r) => r.seq.every((j) => b.routeOf[j] === r.v))).toBe(true);
    }
    expect(exchanges).toBe(300);
    // Many exchanges leave some jobs to the repair.
    expect(partial).toBeGreaterThan(100);
  });

  it("with the repair: every job served once, every route feasible, the cost as rebuilt", () => {
    for (let seed = 1; seed <= 150; seed++) {
      const m = compile(randomInstance(5000 + seed));
      const rnd = new Random(seed);
      const a = randomSolution(m, rnd);
      const b = randomSolution(m, rnd);
      const child = srex(m, a, b, rnd, new Recreate(m, rnd, 30), penalty(m));
      expect(child).not.toBeNull();
      if (!child) continue;
      expect(child.unassigned).toEqual([]);
      const served = child.routes.flatMap((r) => r.seq).sort((x, y) => x - y);
      expect(served).toEqual(Array.from({ length: m.J }, (_, j) => j));
      expect(child.routes.every((r) => r.feasible)).toBe(true);
      const rebuilt = child.routes.reduce((c, r) => {
        const fresh = new Route(r.v);
        fresh.seq = r.seq.slice();
        fresh.update(m);
        return c + fresh.cost;
      }, 0);
      expect(child.cost).toBeCloseTo(rebuilt, 6);
    }
  });
});

describe("the population", () => {
  it("measures broken pairs as the edges counted one by one", () => {
    for (let seed = 1; seed <= 100; seed++) {
      const m = compile(randomInstance(9000 + seed));
      const rnd = new Random(seed);
      const x = randomSolution(m, rnd);
      const y = randomSolution(m, rnd);
      const pop = new Population(m, 2);
      pop.add(x);
      pop.add(y);
      if (pop.members.length < 2) continue;
      const [lx, ly] = pop.members.map((p) => p.links);
      expect(brokenPairs(lx, ly)).toBeCloseTo(bruteBrokenPairs(m, x, y), 12);
      expect(brokenPairs(ly, lx)).toBeCloseTo(bruteBrokenPairs(m, y, x), 12);
      expect(brokenPairs(lx, lx)).toBe(0);
    }
  });

  it("refuses a duplicate, ranks by biased fitness, drops the worst but never the cheapest", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const m = compile(randomInstance(7000 + seed));
      const rnd = new Random(seed);
      const size = 3 + rnd.int(3);
      const pop = new Population(m, size);
      const all: State[] = [];
      for (let i = 0; i < size + 4; i++) {
        const s = randomSolution(m, rnd);
        const before = pop.members.map((x) => x.s);
        const fresh = !before.some((x) => bruteBrokenPairs(m, s, x) === 0 && x.cost === s.cost);
        expect(pop.add(s)).toBe(fresh);
        // The same routes again (a copy, the routes in another order): a duplicate of a member.
        const copy = s.snapshot(m);
        copy.routes = copy.routes.slice().reverse();
        if (pop.members.some((x) => x.s === s)) expect(pop.add(copy)).toBe(false);
        if (fresh) all.push(s);
        expect(pop.members.length).toBe(Math.min(size, all.length));
        const cheapest = Math.min(...all.map((x) => x.cost));
        expect(pop.members.some((x) => x.s.cost === cheapest)).toBe(true);
        if (fresh && before.length === size) {
          // The one that left had the worst biased fitness among the others than the cheapest.
          const members = [...before, s];
          const n = members.length;
          const diversity = members.map((x) => {
            const d = members
              .filter((y) => y !== x)
              .map((y) => bruteBrokenPairs(m, x, y))
              .sort((p, q) => p - q)
              .slice(0, 3);
            return d.reduce((p, q) => p + q, 0) / d.length;
          });
          const rank = (v: number[], i: number, better: (p: number, q: number) => boolean) =>
            v.filter((w, k) => better(w, v[i]) || (w === v[i] && k < i)).length / (n - 1);
          const costs = members.map((x) => x.cost);
          const fit = members.map(
            (_, i) =>
              rank(costs, i, (p, q) => p < q) +
              (1 - Math.max(1, Math.floor(size / 2)) / n) * rank(diversity, i, (p, q) => p > q),
          );
          const gone = members.find((x) => !pop.members.some((y) => y.s === x));
          expect(gone).toBeDefined();
          if (!gone) continue;
          const cheapestIndex = costs.indexOf(Math.min(...costs));
          const worst = Math.max(...fit.filter((_, i) => i !== cheapestIndex));
          expect(fit[members.indexOf(gone)]).toBeCloseTo(worst, 12);
        }
      }
    }
  });

  it("selects by binary tournament: the fitter of the two drawn", () => {
    const m = compile(randomInstance(3));
    const pop = new Population(m, 4);
    const rnd = new Random(11);
    for (let i = 0; i < 6; i++) pop.add(randomSolution(m, rnd));
    const fit = pop.fitness();
    for (let t = 0; t < 200; t++) {
      const probe = new Random(100 + t);
      const x = probe.int(pop.members.length);
      const y = probe.int(pop.members.length);
      const picked = pop.select(new Random(100 + t), fit);
      expect(fit[picked]).toBe(Math.min(fit[x], fit[y]));
    }
    const [a, b] = pop.parents(rnd);
    expect(a).not.toBe(b);
  });

  it("as a phase of solve: solutions pass the independent checker, the same for a seed", () => {
    for (let seed = 1; seed <= 30; seed++) {
      const instance = randomInstance(11000 + seed);
      const options = { seed, iterations: 600, population: 3, populationSlice: 0.05 };
      const solution = solve(instance, options);
      expect(checkSolution(instance, solution)).toEqual([]);
      expect(solution.unassigned).toEqual([]);
      expect(solution.stats.population?.offspring).toBeGreaterThan(0);
      expect(solve(instance, options)).toEqual(solution);
    }
  });
});
