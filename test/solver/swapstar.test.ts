import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import { compile, type Model } from "../../src/solver/model";
import { Random } from "../../src/solver/random";
import { Route } from "../../src/solver/route";
import { State } from "../../src/solver/state";
import { applySwapStar, bestSwapStar, swapStarMove } from "../../src/solver/swapstar";
import type { Instance } from "../../src/solver/types";
import { checkSolution } from "../../src/solver-check";
import { lcg, randomDistances } from "./arbitrary";

/**
 * 4–12 visits and two vehicles (capacities may differ); `metric`: Euclidean distances and travel
 * time = distance (the triangle inequality holds), else the shared generator's matrices (arbitrary
 * ones half the time) and durations apart from distances half the time. Windows tight or loose or
 * none (`windows` false: none, and a shift no route reaches the end of).
 */
function randomInstance(seed: number, metric: boolean, windows = true): Instance {
  const r = lcg(seed);
  const n = 4 + Math.floor(r() * 9);
  let distances: number[];
  if (metric) {
    const pts = Array.from({ length: n + 1 }, () => [r() * 60, r() * 60]);
    distances = pts.flatMap((a) => pts.map((b) => Math.hypot(a[0] - b[0], a[1] - b[1])));
  } else distances = randomDistances(r, n + 1);
  const durations = metric || r() < 0.5 ? distances : distances.map((d) => d * (0.5 + r()));
  const dims = 1 + Math.floor(r() * 2);
  const cap = () => Array.from({ length: dims }, () => 10 + Math.floor(r() * 30));
  const width = r() < 0.5 ? 60 : 500;
  const end = r() < 0.85 ? 0 : undefined;
  const shiftEnd = windows ? 400 + r() * 600 : 1e9;
  const capA = cap();
  const capB = r() < 0.5 ? cap() : capA;
  return {
    locations: n + 1,
    distances,
    durations,
    vehicles: ["a", "b"].map((id, i) => ({
      id,
      start: 0,
      end,
      shiftStart: 0,
      shiftEnd,
      capacity: i ? capB : capA,
    })),
    jobs: Array.from({ length: n }, (_, i) => {
      const a = Math.floor(r() * 400);
      return {
        id: `j${i}`,
        location: i + 1,
        service: Math.floor(r() * 10),
        timeWindow: windows && r() < 0.8 ? ([a, a + width * r()] as [number, number]) : undefined,
        demand: Array.from({ length: dims }, () => Math.floor(r() * 8)),
      };
    }),
  };
}

function routeOf(m: Model, v: number, seq: number[]): Route {
  const r = new Route(v);
  r.seq = seq;
  r.update(m);
  return r;
}

/**
 * A sequence driven from scratch on the model's raw arrays (not the route's caches): its cost,
 * whether every window and the shift are kept (`time`), and whether its load fits (`load`).
 */
function drive(m: Model, v: number, seq: number[]): { cost: number; time: boolean; load: boolean } {
  const at = (a: number, b: number, x: ArrayLike<number>) => (a < 0 || b < 0 ? 0 : x[a * m.L + b]);
  let t = m.vShiftA[v];
  let prev = m.vStart[v];
  let cost = 0;
  let time = true;
  for (const j of seq) {
    const l = m.loc[j];
    cost += at(prev, l, m.cost);
    const start = Math.max(t + at(prev, l, m.time), m.twA[j]);
    if (start > m.twB[j]) time = false;
    t = start + m.svc[j];
    prev = l;
  }
  cost += at(prev, m.vEnd[v], m.cost);
  if (t + at(prev, m.vEnd[v], m.time) > m.vShiftB[v]) time = false;
  let load = true;
  for (let d = 0; d < m.D; d++) {
    let sum = 0;
    for (const j of seq) sum += m.dem[j * m.D + d];
    if (sum > m.vCap[v * m.D + d] + 1e-9) load = false;
  }
  return { cost: seq.length ? cost : 0, time, load };
}

/** Two feasible, non-empty routes over the instance's visits (some left out), or null. */
function twoRoutes(m: Model, r: () => number): [Route, Route] | null {
  for (let attempt = 0; attempt < 200; attempt++) {
    const jobs = Array.from({ length: m.J }, (_, j) => j)
      .filter(() => r() < 0.85)
      .sort(() => r() - 0.5);
    const cut = 1 + Math.floor(r() * (jobs.length - 1));
    if (cut < 1 || cut >= jobs.length) continue;
    const A = routeOf(m, 0, jobs.slice(0, cut));
    const B = routeOf(m, 1, jobs.slice(cut));
    if (A.feasible && B.feasible) return [A, B];
  }
  return null;
}

const without = (seq: number[], k: number) => seq.filter((_, i) => i !== k);
const insert = (seq: number[], p: number, x: number) => [...seq.slice(0, p), x, ...seq.slice(p)];

/**
 * Brute force: every exchange of a stop u of A with a stop v of B, u put at every position of
 * B without v and v at every position of A without u, each route driven from scratch. `allowed`:
 * restricts u's positions (of B without v) to v's place and the positions of B where u fits in
 * time with v still there (SWAP*'s candidates under windows); the same for v in A.
 */
function bruteForce(m: Model, A: Route, B: Route, restricted: boolean): number {
  let best = Number.POSITIVE_INFINITY;
  const fitsAsIs = (R: Route, x: number, p: number) => drive(m, R.v, insert(R.seq, p, x)).time;
  for (let i = 0; i < A.seq.length; i++) {
    for (let k = 0; k < B.seq.length; k++) {
      const u = A.seq[i];
      const v = B.seq[k];
      const a0 = without(A.seq, i);
      const b0 = without(B.seq, k);
      for (let pu = 0; pu <= b0.length; pu++) {
        // pu of B without v: k is v's place; before it, B's position pu; after it, B's pu + 1.
        if (restricted && pu !== k && !fitsAsIs(B, u, pu < k ? pu : pu + 1)) continue;
        const b1 = drive(m, B.v, insert(b0, pu, u));
        if (!b1.time || !b1.load) continue;
        for (let pv = 0; pv <= a0.length; pv++) {
          if (restricted && pv !== i && !fitsAsIs(A, v, pv < i ? pv : pv + 1)) continue;
          const a1 = drive(m, A.v, insert(a0, pv, v));
          if (!a1.time || !a1.load) continue;
          best = Math.min(best, a1.cost + b1.cost - A.cost - B.cost);
        }
      }
    }
  }
  return best;
}

/** The exchange `x` as sequences built from scratch. */
function exchanged(A: Route, B: Route, x: { i: number; k: number; pu: number; pv: number }) {
  const at = (p: number, k: number) => (p <= k ? p : p - 1);
  return {
    a: insert(without(A.seq, x.i), at(x.pv, x.i), B.seq[x.k]),
    b: insert(without(B.seq, x.k), at(x.pu, x.k), A.seq[x.i]),
  };
}

describe("SWAP*", () => {
  it("finds the best exchange of all, without windows (Vidal's three positions suffice), on any matrix", () => {
    let improving = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const m = compile(randomInstance(seed, seed % 2 === 0, false));
      const pair = twoRoutes(m, lcg(seed * 31));
      if (!pair) continue;
      const [A, B] = pair;
      const brute = bruteForce(m, A, B, false);
      const x = bestSwapStar(m, A, B);
      if (brute < -1e-9) {
        improving++;
        expect(x, `seed ${seed}`).not.toBeNull();
        expect(x?.delta, `seed ${seed}`).toBeCloseTo(brute, 9);
      } else expect(x, `seed ${seed}`).toBeNull();
    }
    expect(improving).toBeGreaterThan(100);
  });

  it("with windows and the triangle inequality: the best exchange over positions where each stop fits as the other route stands, or in the other's place", () => {
    let improving = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const m = compile(randomInstance(seed, true));
      const pair = twoRoutes(m, lcg(seed * 7));
      if (!pair) continue;
      const [A, B] = pair;
      const brute = bruteForce(m, A, B, true);
      const x = bestSwapStar(m, A, B);
      if (brute < -1e-9) {
        improving++;
        expect(x?.delta, `seed ${seed}`).toBeCloseTo(brute, 9);
      } else expect(x, `seed ${seed}`).toBeNull();
    }
    expect(improving).toBeGreaterThan(40);
  });

  it("on arbitrary matrices and durations: every exchange it returns is feasible and costs what it says", () => {
    let found = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const m = compile(randomInstance(seed, false));
      const pair = twoRoutes(m, lcg(seed * 13));
      if (!pair) continue;
      const [A, B] = pair;
      const x = bestSwapStar(m, A, B);
      if (!x) continue;
      found++;
      const { a, b } = exchanged(A, B, x);
      const a1 = drive(m, 0, a);
      const b1 = drive(m, 1, b);
      expect(a1.time && a1.load && b1.time && b1.load, `seed ${seed}`).toBe(true);
      expect(x.delta, `seed ${seed}`).toBeCloseTo(a1.cost + b1.cost - A.cost - B.cost, 9);
      expect(x.delta).toBeLessThan(0);
    }
    expect(found).toBeGreaterThan(50);
  });

  it("applies an exchange as the routes rebuilt, jobs' routes included; undo restores; a move only ever shortens", () => {
    let moves = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const m = compile(randomInstance(seed, seed % 3 !== 0));
      const pair = twoRoutes(m, lcg(seed * 17));
      if (!pair) continue;
      const [A, B] = pair;
      const s = new State(m, [A, B]);
      for (const x of A.seq) s.routeOf[x] = 0;
      for (const x of B.seq) s.routeOf[x] = 1;
      const x = bestSwapStar(m, A, B);
      if (x) {
        const { a, b } = exchanged(A, B, x);
        s.begin();
        applySwapStar(m, s, 0, 1, x);
        const fresh = [routeOf(m, 0, a), routeOf(m, 1, b)];
        for (const k of [0, 1]) {
          expect(s.routes[k].seq).toEqual(fresh[k].seq);
          expect(s.routes[k].cost).toBeCloseTo(fresh[k].cost, 9);
          expect(s.routes[k].feasible).toBe(true);
          for (const j of fresh[k].seq) expect(s.routeOf[j]).toBe(k);
        }
        expect(s.routesDelta()).toBeCloseTo(x.delta, 9);
        s.undo();
        expect(s.routes[0]).toBe(A);
        expect(s.routes[1]).toBe(B);
      }
      s.begin();
      const before = A.cost + B.cost;
      const made = swapStarMove(m, s, new Random(seed), 10);
      const after = s.routes[0].cost + s.routes[1].cost;
      if (made) {
        moves++;
        expect(after).toBeLessThan(before);
        expect(s.routes[0].feasible && s.routes[1].feasible).toBe(true);
      } else expect(after).toBe(before);
    }
    expect(moves).toBeGreaterThan(20);
  });

  it("solves with SWAP* to solutions the independent checker accepts", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const instance = randomInstance(seed, seed % 2 === 0);
      const solution = solve(instance, { seed, iterations: 300, swapStar: 0.5 });
      expect(checkSolution(instance, solution), `seed ${seed}`).toEqual([]);
      expect(solution.stats.cost).toBeLessThanOrEqual(solution.stats.initialCost);
    }
  });
});
