import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import { applyRelocate, applySwap, exchangeMove, replaceDelta } from "../../src/solver/exchange";
import { compile, type Model } from "../../src/solver/model";
import { Random } from "../../src/solver/random";
import { Route } from "../../src/solver/route";
import { State } from "../../src/solver/state";
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

/** The pair rebuilt from scratch after a move, and whether both routes are feasible. */
function rebuilt(m: Model, a: number[], b: number[]) {
  const A = routeOf(m, 0, a);
  const B = routeOf(m, 1, b);
  return { A, B, ok: A.feasible && B.feasible };
}

describe("granular relocate and swap", () => {
  it("costs every relocate and swap as the two routes rebuilt from scratch do, and refuses exactly the infeasible ones", () => {
    let feasible = 0;
    let refused = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const m = compile(randomInstance(seed));
      const pair = twoRoutes(m, lcg(seed * 31));
      if (!pair) continue;
      const [A, B] = pair;
      const check = (delta: number, after: ReturnType<typeof rebuilt>, what: string) => {
        if (after.ok) {
          feasible++;
          expect(delta, what).toBeCloseTo(after.A.cost + after.B.cost - A.cost - B.cost, 9);
        } else {
          refused++;
          expect(delta, what).toBe(Number.POSITIVE_INFINITY);
        }
      };
      for (let i = 0; i < A.seq.length; i++) {
        const u = A.seq[i];
        const rest = A.seq.filter((_, k) => k !== i);
        // u taken out of A alone, then put before each position of B.
        const removal = replaceDelta(m, A, i, -1);
        check(removal, rebuilt(m, rest, B.seq), `seed ${seed} remove ${i}`);
        for (let p = 0; p <= B.seq.length; p++) {
          const after = rebuilt(m, rest, [...B.seq.slice(0, p), u, ...B.seq.slice(p)]);
          // Each side is checked on its own: the sum is refused when either is.
          const d = removal + B.insertionCost(m, u, p);
          check(
            Number.isFinite(d) ? d : Number.POSITIVE_INFINITY,
            after,
            `seed ${seed} relocate ${i} → ${p}`,
          );
        }
        for (let j = 0; j < B.seq.length; j++) {
          const x = B.seq[j];
          const a2 = A.seq.slice();
          a2[i] = x;
          const b2 = B.seq.slice();
          b2[j] = u;
          const d = replaceDelta(m, A, i, x) + replaceDelta(m, B, j, u);
          check(d, rebuilt(m, a2, b2), `seed ${seed} swap ${i} ↔ ${j}`);
        }
      }
    }
    expect(feasible).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(1000);
  });

  it("takes a stop out exactly when the route closed up stays feasible (detours faster than the direct leg)", () => {
    let kept = 0;
    let refused = 0;
    for (let seed = 1; seed <= 4000; seed++) {
      const m = compile(randomInstance(seed));
      const pair = twoRoutes(m, lcg(seed * 31));
      if (!pair) continue;
      for (const R of pair) {
        for (let i = 0; i < R.seq.length; i++) {
          const after = routeOf(m, R.v, R.seq.filter((_, k) => k !== i));
          const delta = replaceDelta(m, R, i, -1);
          if (after.feasible) {
            kept++;
            expect(delta, `seed ${seed} remove ${i}`).toBeCloseTo(after.cost - R.cost, 9);
          } else {
            refused++;
            expect(delta, `seed ${seed} remove ${i}`).toBe(Number.POSITIVE_INFINITY);
          }
        }
      }
    }
    expect(kept).toBeGreaterThan(10000);
    expect(refused).toBeGreaterThan(5);
  });

  it("applies a move as the routes rebuilt, jobs' routes included, undoes it, and a step only ever shortens", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const m = compile(randomInstance(seed));
      const pair = twoRoutes(m, lcg(seed * 17));
      if (!pair) continue;
      const [A, B] = pair;
      const s = new State(m, [A, B]);
      for (const x of A.seq) s.routeOf[x] = 0;
      for (const x of B.seq) s.routeOf[x] = 1;
      const r = lcg(seed);
      const i = Math.floor(r() * A.seq.length);
      const j = Math.floor(r() * B.seq.length);
      const p = Math.floor(r() * (B.seq.length + 1));
      const u = A.seq[i];
      const relocated = [A.seq.filter((_, k) => k !== i), [...B.seq.slice(0, p), u, ...B.seq.slice(p)]];
      const swapped = [A.seq.slice(), B.seq.slice()];
      swapped[0][i] = B.seq[j];
      swapped[1][j] = u;
      for (const [expected, apply] of [
        [relocated, () => applyRelocate(m, s, 0, i, 1, p)],
        [swapped, () => applySwap(m, s, 0, i, 1, j)],
      ] as const) {
        s.begin();
        apply();
        for (const k of [0, 1]) {
          const fresh = routeOf(m, k, expected[k]);
          expect(s.routes[k].seq).toEqual(fresh.seq);
          expect(s.routes[k].cost).toBe(fresh.cost);
          expect(s.routes[k].feasible).toBe(fresh.feasible);
          expect(Array.from(s.routes[k].ls.subarray(0, fresh.seq.length))).toEqual(
            Array.from(fresh.ls.subarray(0, fresh.seq.length)),
          );
          expect(Array.from(s.routes[k].es.subarray(0, fresh.seq.length))).toEqual(
            Array.from(fresh.es.subarray(0, fresh.seq.length)),
          );
          for (const x of fresh.seq) expect(s.routeOf[x]).toBe(k);
        }
        s.undo();
        expect(s.routes[0]).toBe(A);
        expect(s.routes[1]).toBe(B);
        for (const x of A.seq) expect(s.routeOf[x]).toBe(0);
      }
      // A step from the original routes: made only when it shortens them, and feasible.
      const before = A.cost + B.cost;
      s.begin();
      const moved = exchangeMove(m, s, new Random(seed), 30);
      const after = s.routes[0].cost + s.routes[1].cost;
      if (moved) {
        expect(after).toBeLessThan(before);
        expect(s.routes[0].feasible && s.routes[1].feasible).toBe(true);
      } else expect(after).toBe(before);
    }
  });

  it("solves with relocate and swap steps to solutions the independent checker accepts", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const instance = randomInstance(seed);
      const solution = solve(instance, { seed, iterations: 300, exchange: 0.5 });
      expect(checkSolution(instance, solution), `seed ${seed}`).toEqual([]);
      expect(solution.stats.cost).toBeLessThanOrEqual(solution.stats.initialCost);
    }
  });
});
