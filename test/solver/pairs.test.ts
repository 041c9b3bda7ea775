import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import { compile, type Model, PICKUP } from "../../src/solver/model";
import { exchangePair, pairScratch, pairsApply, relocatePair } from "../../src/solver/pairs";
import { Route } from "../../src/solver/route";
import { State } from "../../src/solver/state";
import type { Instance } from "../../src/solver/types";
import { checkSolution } from "../../src/solver-check";
import { lcg, randomDistances } from "./arbitrary";

/**
 * 2–6 pick-up-and-drop-off pairs and 0–3 standalone visits, three vehicles (two alike, one with
 * another capacity half the time); Euclidean or arbitrary (asymmetric, no triangle inequality)
 * matrices, windows tight or loose, 1–2 capacity dimensions, a missing end depot now and then.
 */
function randomInstance(seed: number): Instance {
  const r = lcg(seed);
  const pairs = 2 + Math.floor(r() * 5);
  const visits = Math.floor(r() * 4);
  const n = 2 * pairs + visits;
  const distances = randomDistances(r, n + 1);
  const dims = 1 + Math.floor(r() * 2);
  const capacity = Array.from({ length: dims }, () => 6 + Math.floor(r() * 20));
  const other = r() < 0.5 ? capacity : capacity.map((c) => c + 5);
  const width = r() < 0.5 ? 80 : 600;
  const end = r() < 0.85 ? 0 : undefined;
  const shiftEnd = 500 + r() * 700;
  const job = (id: string, location: number) => {
    const a = Math.floor(r() * 400);
    return {
      id,
      location,
      service: Math.floor(r() * 10),
      timeWindow: r() < 0.8 ? ([a, a + width * r()] as [number, number]) : undefined,
      demand: Array.from({ length: dims }, () => Math.floor(r() * 6)),
    };
  };
  return {
    locations: n + 1,
    distances,
    durations: distances,
    vehicles: [capacity, capacity, other].map((c, i) => ({
      id: `v${i}`,
      start: 0,
      end,
      shiftStart: 0,
      shiftEnd,
      capacity: c,
    })),
    jobs: Array.from({ length: visits }, (_, i) => job(`j${i}`, 2 * pairs + i + 1)),
    shipments: Array.from({ length: pairs }, (_, i) => ({
      pickup: { ...job(`p${i}`, 2 * i + 1), demand: [] },
      delivery: { ...job(`d${i}`, 2 * i + 2), demand: [] },
      demand: Array.from({ length: dims }, () => Math.floor(r() * 6)),
    })),
  };
}

function routeOf(m: Model, v: number, seq: number[]): Route {
  const r = new Route(v);
  r.seq = seq;
  r.update(m);
  return r;
}

/** Feasible routes over every job, pairs kept together, pick-up first, or null: random draws until one holds. */
function randomRoutes(m: Model, r: () => number): Route[] | null {
  for (let attempt = 0; attempt < 300; attempt++) {
    const seqs: number[][] = Array.from({ length: m.V }, () => []);
    for (let j = 0; j < m.J; j++) {
      if (m.kind[j] === PICKUP) {
        // The vehicle may stay empty (one of them, now and then), so opening one is tried too.
        const s = seqs[Math.floor(r() * (m.V - (r() < 0.5 ? 1 : 0)))];
        const a = Math.floor(r() * (s.length + 1));
        s.splice(a, 0, j);
        const b = a + 1 + Math.floor(r() * (s.length - a));
        s.splice(b, 0, m.partner[j]);
      } else if (m.partner[j] < 0) {
        const s = seqs[Math.floor(r() * m.V)];
        s.splice(Math.floor(r() * (s.length + 1)), 0, j);
      }
    }
    const routes = seqs.map((s, v) => routeOf(m, v, s));
    if (routes.every((x) => x.feasible)) return routes;
  }
  return null;
}

function stateOf(m: Model, routes: Route[]): State {
  // The state's own array: `routes` stays as given (the tests compare with it after an undo).
  const s = new State(m, routes.slice());
  routes.forEach((x, v) => {
    for (const j of x.seq) s.routeOf[j] = v;
  });
  s.cost = routes.reduce((c, x) => c + x.cost, 0);
  return s;
}

/**
 * By brute force: the lowest total cost of the routes with pair (p, q) taken out of its route
 * and put back anywhere (every route, every pair of positions, pick-up first), every route
 * rebuilt from scratch and required feasible.
 */
function bestRelocation(m: Model, routes: Route[], p: number, q: number): number {
  const without = routes.map((x) => x.seq.filter((j) => j !== p && j !== q));
  const base = without.map((seq, v) => routeOf(m, v, seq));
  if (!base.every((x) => x.feasible)) return Number.POSITIVE_INFINITY;
  const rest = base.reduce((c, x) => c + x.cost, 0);
  let best = Number.POSITIVE_INFINITY;
  without.forEach((seq, v) => {
    for (let a = 0; a <= seq.length; a++) {
      for (let b = a; b <= seq.length; b++) {
        const t = [...seq.slice(0, a), p, ...seq.slice(a, b), q, ...seq.slice(b)];
        const x = routeOf(m, v, t);
        if (x.feasible) best = Math.min(best, rest - base[v].cost + x.cost);
      }
    }
  });
  return best;
}

/** The cheapest feasible route of vehicle `v` with pair (p, q) put into `seq` (every pair of positions, rebuilt from scratch). */
function cheapestWith(m: Model, v: number, seq: number[], p: number, q: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let a = 0; a <= seq.length; a++) {
    for (let b = a; b <= seq.length; b++) {
      const x = routeOf(m, v, [...seq.slice(0, a), p, ...seq.slice(a, b), q, ...seq.slice(b)]);
      if (x.feasible) best = Math.min(best, x.cost);
    }
  }
  return best;
}

/**
 * By brute force: the lowest total cost after pair (p, q) and a pair on another route change
 * routes, each at its cheapest positions in the other's route without it.
 */
function bestExchange(m: Model, routes: Route[], p: number, q: number): number {
  const total = routes.reduce((c, x) => c + x.cost, 0);
  const a = routes.findIndex((x) => x.seq.includes(p));
  const A1 = routes[a].seq.filter((j) => j !== p && j !== q);
  if (!routeOf(m, a, A1).feasible) return Number.POSITIVE_INFINITY;
  let best = Number.POSITIVE_INFINITY;
  routes.forEach((B, b) => {
    if (b === a) return;
    for (const y of B.seq) {
      if (m.kind[y] !== PICKUP) continue;
      const B1 = B.seq.filter((j) => j !== y && j !== m.partner[y]);
      if (!routeOf(m, b, B1).feasible) continue;
      const cost =
        total -
        routes[a].cost -
        B.cost +
        cheapestWith(m, a, A1, y, m.partner[y]) +
        cheapestWith(m, b, B1, p, q);
      best = Math.min(best, cost);
    }
  });
  return best;
}

describe("pair exchange", () => {
  it("finds the best exchange brute force finds, makes it only when it shortens, and undoes exactly", () => {
    let moved = 0;
    let kept = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const m = compile(randomInstance(seed));
      const routes = randomRoutes(m, lcg(seed * 11));
      if (!routes) continue;
      const before = routes.reduce((c, x) => c + x.cost, 0);
      const x = pairScratch(m, 100, 100);
      for (let p = 0; p < m.J; p++) {
        if (m.kind[p] !== PICKUP) continue;
        const q = m.partner[p];
        const s = stateOf(m, routes);
        const best = bestExchange(m, routes, p, q);
        s.begin();
        const made = exchangePair(m, s, p, q, x);
        const what = `seed ${seed} pair ${p}`;
        if (best < before - 1e-6 * (1 + before)) {
          moved++;
          expect(made, what).toBe(true);
          expect(s.routesDelta(), what).toBeCloseTo(best - before, 6);
          s.routes.forEach((r, v) => {
            const fresh = routeOf(m, v, r.seq.slice());
            expect(fresh.feasible, what).toBe(true);
            expect(r.cost, what).toBeCloseTo(fresh.cost, 9);
            for (const j of r.seq) expect(s.routeOf[j], what).toBe(v);
          });
          expect(s.routeOf[p]).toBe(s.routeOf[q]);
          expect(s.routeOf[p]).not.toBe(routes.findIndex((r) => r.seq.includes(p)));
        } else {
          kept++;
          if (best > before - 1e-9 * (1 + before)) expect(made, what).toBe(false);
          if (made) expect(s.routesDelta(), what).toBeLessThan(1e-9);
        }
        s.undo();
        routes.forEach((r, v) => {
          expect(s.routes[v], what).toBe(r);
          for (const j of r.seq) expect(s.routeOf[j], what).toBe(v);
        });
      }
    }
    expect(moved).toBeGreaterThan(200);
    expect(kept).toBeGreaterThan(100);
  });

  it("solves with pair exchanges to solutions the independent checker accepts", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const instance = randomInstance(seed);
      const solution = solve(instance, { seed, iterations: 300, pairRelocation: 0.3, pairExchange: 0.5 });
      expect(checkSolution(instance, solution), `seed ${seed}`).toEqual([]);
      expect(solution.stats.cost).toBeLessThanOrEqual(solution.stats.initialCost);
    }
  });
});

describe("pair relocation", () => {
  it("finds the best relocation brute force finds, makes it only when it shortens, and undoes exactly", () => {
    let moved = 0;
    let kept = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const m = compile(randomInstance(seed));
      expect(pairsApply(m)).toBe(true);
      const routes = randomRoutes(m, lcg(seed * 13));
      if (!routes) continue;
      const before = routes.reduce((c, x) => c + x.cost, 0);
      const g = pairScratch(m, 100);
      for (let p = 0; p < m.J; p++) {
        if (m.kind[p] !== PICKUP) continue;
        const q = m.partner[p];
        const s = stateOf(m, routes);
        const best = bestRelocation(m, routes, p, q);
        s.begin();
        const made = relocatePair(m, s, p, q, g.g);
        const what = `seed ${seed} pair ${p}`;
        if (best < before - 1e-6 * (1 + before)) {
          moved++;
          expect(made, what).toBe(true);
          const after = s.routes.reduce((c, x) => c + x.cost, 0);
          expect(after, what).toBeCloseTo(best, 6);
          expect(s.routesDelta(), what).toBeCloseTo(best - before, 6);
          // Every route as rebuilt from scratch (caches included), every job's route recorded.
          s.routes.forEach((x, v) => {
            const fresh = routeOf(m, v, x.seq.slice());
            expect(fresh.feasible, what).toBe(true);
            expect(x.cost, what).toBeCloseTo(fresh.cost, 9);
            expect(Array.from(x.ls.subarray(0, x.seq.length))).toEqual(
              Array.from(fresh.ls.subarray(0, x.seq.length)),
            );
            for (const j of x.seq) expect(s.routeOf[j], what).toBe(v);
          });
          expect(s.routes[s.routeOf[p]].seq.indexOf(p)).toBeLessThan(s.routes[s.routeOf[q]].seq.indexOf(q));
          expect(s.routeOf[p]).toBe(s.routeOf[q]);
        } else {
          kept++;
          // Ties within rounding may go either way; anything made must not lengthen the routes.
          if (best > before - 1e-9 * (1 + before)) expect(made, what).toBe(false);
          if (made) expect(s.routesDelta(), what).toBeLessThan(1e-9);
        }
        s.undo();
        routes.forEach((x, v) => {
          expect(s.routes[v], what).toBe(x);
          for (const j of x.seq) expect(s.routeOf[j], what).toBe(v);
        });
      }
    }
    expect(moved).toBeGreaterThan(300);
    expect(kept).toBeGreaterThan(30);
  });

  it("descends to routes where brute force finds no shorter relocation of any pair", () => {
    let checked = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const m = compile(randomInstance(seed));
      const routes = randomRoutes(m, lcg(seed * 7));
      if (!routes) continue;
      const s = stateOf(m, routes);
      const g = pairScratch(m, 100);
      const pickups = Array.from({ length: m.J }, (_, j) => j).filter((j) => m.kind[j] === PICKUP);
      for (let round = 0, changed = true; changed && round < 100; round++) {
        changed = false;
        for (const p of pickups) {
          const cost = s.cost;
          s.begin();
          if (relocatePair(m, s, p, m.partner[p], g.g)) {
            s.cost = cost + s.routesDelta();
            expect(s.cost).toBeLessThan(cost);
            changed = true;
          } else s.undo();
        }
      }
      const now = s.routes.map((x) => routeOf(m, x.v, x.seq.slice()));
      const total = now.reduce((c, x) => c + x.cost, 0);
      expect(s.cost, `seed ${seed}`).toBeCloseTo(total, 6);
      for (const p of pickups) {
        expect(bestRelocation(m, now, p, m.partner[p]), `seed ${seed} pair ${p}`).toBeGreaterThan(
          total - 1e-6 * (1 + total),
        );
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(300);
  });

  it("solves with pair relocations to solutions the independent checker accepts", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const instance = randomInstance(seed);
      const solution = solve(instance, { seed, iterations: 300, pairRelocation: 0.5 });
      expect(checkSolution(instance, solution), `seed ${seed}`).toEqual([]);
      expect(solution.stats.cost).toBeLessThanOrEqual(solution.stats.initialCost);
      // The same instance, seed and budget: the same solution.
      const again = solve(instance, { seed, iterations: 300, pairRelocation: 0.5 });
      expect(again.routes).toEqual(solution.routes);
    }
  });
});
