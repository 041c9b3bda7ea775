import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import { compile, type Model } from "../../src/solver/model";
import { Random } from "../../src/solver/random";
import type { Route } from "../../src/solver/route";
import { State } from "../../src/solver/state";
import { applySwapStar, bestSwapStar, swapStarMove } from "../../src/solver/swapstar";
import { checkSolution } from "../../src/solver-check";
import { lcg } from "./arbitrary";
import { drive, randomInstance, routeOf, twoRoutes } from "./two-routes";

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
