import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import { compile, type Model } from "../../src/solver/model";
import { Random } from "../../src/solver/random";
import { Route } from "../../src/solver/route";
import { State } from "../../src/solver/state";
import { applyTails, tailDelta, tailMove, tailsApply } from "../../src/solver/tails";
import type { Instance } from "../../src/solver/types";
import { checkSolution } from "../../src/solver-check";
import { lcg, randomDistances } from "./arbitrary";

/**
 * 4–12 visits and two identical vehicles; Euclidean or arbitrary (asymmetric, no triangle
 * inequality) matrices, durations apart from distances half the time, windows tight or loose,
 * 1–2 capacity dimensions, a missing end depot now and then.
 */
function randomInstance(seed: number): Instance {
  const r = lcg(seed);
  const n = 4 + Math.floor(r() * 9);
  const distances = randomDistances(r, n + 1);
  const durations = r() < 0.5 ? distances : distances.map((d) => d * (0.5 + r()));
  const dims = 1 + Math.floor(r() * 2);
  const capacity = Array.from({ length: dims }, () => 10 + Math.floor(r() * 30));
  const width = r() < 0.5 ? 60 : 500;
  const end = r() < 0.85 ? 0 : undefined;
  const shiftEnd = 400 + r() * 600;
  return {
    locations: n + 1,
    distances,
    durations,
    vehicles: ["a", "b"].map((id) => ({ id, start: 0, end, shiftStart: 0, shiftEnd, capacity })),
    jobs: Array.from({ length: n }, (_, i) => {
      const a = Math.floor(r() * 400);
      return {
        id: `j${i}`,
        location: i + 1,
        service: Math.floor(r() * 10),
        timeWindow: r() < 0.8 ? ([a, a + width * r()] as [number, number]) : undefined,
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

describe("2-opt* tail exchange", () => {
  it("costs every exchange as the two routes rebuilt from scratch do, and refuses exactly the infeasible ones", () => {
    let feasible = 0;
    let refused = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const m = compile(randomInstance(seed));
      expect(tailsApply(m)).toBe(true);
      const pair = twoRoutes(m, lcg(seed * 31));
      if (!pair) continue;
      const [A, B] = pair;
      for (let i = 0; i <= A.seq.length; i++) {
        for (let j = 0; j <= B.seq.length; j++) {
          const delta = tailDelta(m, A, i, B, j);
          const a2 = routeOf(m, 0, [...A.seq.slice(0, i), ...B.seq.slice(j)]);
          const b2 = routeOf(m, 1, [...B.seq.slice(0, j), ...A.seq.slice(i)]);
          const nothing = (i === 0 && j === 0) || (i === A.seq.length && j === B.seq.length);
          const ok = a2.feasible && b2.feasible && a2.seq.length > 0 && b2.seq.length > 0 && !nothing;
          const what = `seed ${seed} i ${i} j ${j}`;
          if (ok) {
            feasible++;
            expect(delta, what).toBeCloseTo(a2.cost + b2.cost - A.cost - B.cost, 9);
          } else {
            refused++;
            expect(delta, what).toBe(Number.POSITIVE_INFINITY);
          }
        }
      }
    }
    expect(feasible).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(1000);
  });

  it("applies an exchange as the routes rebuilt, jobs' routes included, and a move only ever shortens", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const m = compile(randomInstance(seed));
      const pair = twoRoutes(m, lcg(seed * 17));
      if (!pair) continue;
      const [A, B] = pair;
      const s = new State(m, [A, B]);
      for (const x of A.seq) s.routeOf[x] = 0;
      for (const x of B.seq) s.routeOf[x] = 1;
      const r = lcg(seed);
      const i = Math.floor(r() * (A.seq.length + 1));
      const j = Math.floor(r() * (B.seq.length + 1));
      const expectA = [...A.seq.slice(0, i), ...B.seq.slice(j)];
      const expectB = [...B.seq.slice(0, j), ...A.seq.slice(i)];
      s.begin();
      applyTails(m, s, 0, i, 1, j);
      const fresh = [routeOf(m, 0, expectA), routeOf(m, 1, expectB)];
      for (const k of [0, 1]) {
        expect(s.routes[k].seq).toEqual(fresh[k].seq);
        expect(s.routes[k].cost).toBe(fresh[k].cost);
        expect(Array.from(s.routes[k].ls.subarray(0, fresh[k].seq.length))).toEqual(
          Array.from(fresh[k].ls.subarray(0, fresh[k].seq.length)),
        );
        for (const x of fresh[k].seq) expect(s.routeOf[x]).toBe(k);
      }
      s.undo();
      expect(s.routes[0]).toBe(A);
      expect(s.routes[1]).toBe(B);
      // A move from the original routes: made only when it shortens them, and feasible.
      const before = A.cost + B.cost;
      const moved = tailMove(m, s, new Random(seed), 30);
      const after = s.routes[0].cost + s.routes[1].cost;
      if (moved) {
        expect(after).toBeLessThan(before);
        expect(s.routes[0].feasible && s.routes[1].feasible).toBe(true);
      } else expect(after).toBe(before);
    }
  });

  it("solves with tail exchanges to solutions the independent checker accepts", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const instance = randomInstance(seed);
      const solution = solve(instance, { seed, iterations: 300, tailExchange: 0.5 });
      expect(checkSolution(instance, solution), `seed ${seed}`).toEqual([]);
      expect(solution.stats.cost).toBeLessThanOrEqual(solution.stats.initialCost);
    }
  });
});
