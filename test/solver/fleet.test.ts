import { describe, expect, it } from "vitest";
import { DEFAULT_NEIGHBOURHOOD, searchNeighbourhood, solve } from "../../src/solver";
import { fleetApplies, minimiseFleet, routesUsed } from "../../src/solver/fleet";
import { compile, type Model } from "../../src/solver/model";
import { Random } from "../../src/solver/random";
import { Route } from "../../src/solver/route";
import { Recreate } from "../../src/solver/search";
import { State } from "../../src/solver/state";
import type { Instance } from "../../src/solver/types";
import { checkSolution } from "../../src/solver-check";
import { lcg } from "./arbitrary";

/**
 * 4–7 visits on a 100 × 100 plane (Euclidean), as many identical vehicles as visits; windows
 * tight or loose and capacities small or large, so the smallest fleet ranges from 1 to several.
 */
function randomInstance(seed: number): Instance {
  const r = lcg(seed);
  const n = 4 + Math.floor(r() * 4);
  const pts = Array.from({ length: n + 1 }, () => [Math.floor(r() * 100), Math.floor(r() * 100)]);
  const distances = new Float64Array((n + 1) * (n + 1));
  for (let a = 0; a <= n; a++)
    for (let b = 0; b <= n; b++)
      distances[a * (n + 1) + b] = Math.hypot(pts[a][0] - pts[b][0], pts[a][1] - pts[b][1]);
  const capacity = [6 + Math.floor(r() * 20)];
  const width = r() < 0.5 ? 40 : 300;
  const shiftEnd = 800;
  return {
    locations: n + 1,
    distances,
    durations: distances,
    vehicles: Array.from({ length: n }, (_, i) => ({
      id: `v${i}`,
      start: 0,
      end: 0,
      shiftStart: 0,
      shiftEnd,
      capacity,
    })),
    jobs: Array.from({ length: n }, (_, i) => {
      // Each job alone on a vehicle is in time: its window opens after the drive from the depot.
      const a = Math.ceil(distances[i + 1]) + Math.floor(r() * 200);
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

/** Whether the jobs of `mask` fit on one vehicle in some order (every order tried). */
function oneRoute(m: Model, mask: number): boolean {
  const jobs = Array.from({ length: m.J }, (_, j) => j).filter((j) => mask & (1 << j));
  const permute = (k: number): boolean => {
    if (k === jobs.length) {
      const r = new Route(0);
      r.seq = jobs.slice();
      r.update(m);
      return r.feasible;
    }
    for (let i = k; i < jobs.length; i++) {
      [jobs[k], jobs[i]] = [jobs[i], jobs[k]];
      const ok = permute(k + 1);
      [jobs[k], jobs[i]] = [jobs[i], jobs[k]];
      if (ok) return true;
    }
    return false;
  };
  return permute(0);
}

/** The smallest number of routes that serve every job, by brute force (Infinity: none does). */
function smallestFleet(m: Model): number {
  const full = (1 << m.J) - 1;
  const fits = Array.from({ length: full + 1 }, (_, mask) => mask > 0 && oneRoute(m, mask));
  const fewest = new Array<number>(full + 1).fill(Number.POSITIVE_INFINITY);
  fewest[0] = 0;
  for (let mask = 1; mask <= full; mask++) {
    // The route holding the lowest job of `mask`, over every subset of `mask` that has it.
    const low = mask & -mask;
    for (let sub = mask; sub > 0; sub = (sub - 1) & mask)
      if (sub & low && fits[sub]) fewest[mask] = Math.min(fewest[mask], 1 + fewest[mask ^ sub]);
  }
  return fewest[full];
}

/** Every job alone on a vehicle of its own (feasible by construction of the instances): the largest fleet. */
function singletons(m: Model): State {
  const s = new State(m);
  for (let j = 0; j < m.J; j++) {
    const r = s.routes[j];
    r.seq = [j];
    r.update(m);
    s.routeOf[j] = j;
  }
  return s;
}

describe("fleet minimisation", () => {
  // With penalised time windows (src/solver/warp.ts) too: jobs go in breaking windows, and a fleet
  // counts only once none is broken.
  it.each([false, true])(
    "never goes below the smallest fleet found by brute force, keeps every job in, and reaches it (time warp: %s)",
    (warp) => {
      let tried = 0;
      let reached = 0;
      let reduced = 0;
      for (let seed = 1; seed <= 150; seed++) {
        const m = compile(randomInstance(seed));
        expect(fleetApplies(m)).toBe(true);
        m.warp = warp;
        m.warpWeight = warp ? 10 : 0;
        const start = singletons(m);
        const smallest = smallestFleet(m);
        tried++;
        const rnd = new Random(seed);
        let budget = 400;
        const { best } = minimiseFleet(
          m,
          start.snapshot(m),
          rnd,
          new Recreate(m, rnd, 30),
          10,
          10,
          () => budget-- > 0,
          undefined,
          undefined,
          warp,
        );
        // The start serves every job, so the phase has a solution to return.
        expect(best).not.toBeNull();
        if (!best) continue;
        expect(best.unassigned).toEqual([]);
        // Every job on exactly the route that says so, every route feasible.
        const seen = new Set<number>();
        best.routes.forEach((r, i) => {
          expect(r.feasible).toBe(true);
          for (const j of r.seq) {
            expect(best.routeOf[j]).toBe(i);
            expect(seen.has(j)).toBe(false);
            seen.add(j);
          }
        });
        expect(seen.size).toBe(m.J);
        const used = routesUsed(best);
        expect(used).toBeGreaterThanOrEqual(smallest);
        expect(used).toBeLessThanOrEqual(routesUsed(start));
        if (used === smallest) reached++;
        if (used < routesUsed(start)) reduced++;
      }
      expect(tried).toBe(150);
      // A heuristic: it should find the smallest fleet nearly always on instances this small.
      expect(reached).toBeGreaterThanOrEqual(Math.floor(tried * 0.95));
      expect(reduced).toBeGreaterThan(140);
    },
  );

  it("as a phase of solve: solutions pass the independent checker, with no more routes than without it", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const instance = randomInstance(1000 + seed);
      const m = compile(instance);
      const smallest = smallestFleet(m);
      expect(Number.isFinite(smallest)).toBe(true);
      for (const share of [0.3, 1]) {
        const solution = solve(instance, { seed, iterations: 300, fleetMinimisation: share });
        expect(checkSolution(instance, solution)).toEqual([]);
        expect(solution.unassigned).toEqual([]);
        expect(solution.routes.length).toBeGreaterThanOrEqual(smallest);
        // The whole budget on the fleet: the best distance seen is kept, so routes may exceed the
        // smallest fleet only when the construction's solution was shorter.
        if (share === 1) {
          const plain = solve(instance, { seed, iterations: 0 });
          expect(solution.distance).toBeLessThanOrEqual(plain.distance + 1e-6);
        }
        // The phase's figures: its smallest fleet and that fleet's distance (the result is the
        // shorter of it and the construction when the phase took the whole budget; a construction
        // of one route leaves the phase nothing to do, and the budget to the annealing), with
        // and without time warp.
        for (const timeWarp of [0, 1]) {
          const s = solve(instance, { seed, iterations: 300, fleetMinimisation: share, timeWarp });
          const fleet = s.stats.fleet;
          expect(fleet).toBeDefined();
          if (!fleet || fleet.routes === null || fleet.distance === null) continue;
          expect(fleet.routes).toBeGreaterThanOrEqual(smallest);
          expect(fleet.lastFleet).toBeLessThanOrEqual(fleet.iterations);
          expect(fleet.distance).toBeGreaterThan(0);
          if (share === 1 && fleet.iterations === 300) {
            expect(s.distance).toBeLessThanOrEqual(fleet.distance + 1e-6);
            if (s.routes.length === fleet.routes) expect(s.distance).toBeCloseTo(fleet.distance, 6);
          }
        }
      }
    }
  });

  it("widens the neighbourhood with the fleet phase only, by the share of the jobs, never below the default", () => {
    // Gehring & Homberger's 1,000 customers: 80; Solomon's 100 and every size up to 375: 30.
    expect(searchNeighbourhood(1000, {}, true)).toBe(80);
    expect(searchNeighbourhood(100, {}, true)).toBe(DEFAULT_NEIGHBOURHOOD);
    expect(searchNeighbourhood(375, {}, true)).toBe(DEFAULT_NEIGHBOURHOOD);
    expect(searchNeighbourhood(2000, {}, true)).toBe(160);
    // No phase (long routes, pairs, the service's own solves): the default, whatever the size.
    expect(searchNeighbourhood(1000, {}, false)).toBe(DEFAULT_NEIGHBOURHOOD);
    expect(searchNeighbourhood(1000, { shortRouteNeighbourhood: 0.5 }, false)).toBe(DEFAULT_NEIGHBOURHOOD);
    expect(searchNeighbourhood(1000, { shortRouteNeighbourhood: 0 }, true)).toBe(DEFAULT_NEIGHBOURHOOD);
    // An explicit neighbourhood applies everywhere.
    expect(searchNeighbourhood(1000, { neighbourhood: 12 }, true)).toBe(12);
    expect(searchNeighbourhood(1000, { neighbourhood: 12 }, false)).toBe(12);
  });

  it("does not apply with pinned stops, pairs or balance", () => {
    const base = randomInstance(7);
    expect(fleetApplies(compile({ ...base, objective: "balance" } as Instance))).toBe(false);
    expect(
      fleetApplies(
        compile({ ...base, jobs: base.jobs.map((j, i) => (i ? j : { ...j, vehicle: "v0" })) } as Instance),
      ),
    ).toBe(false);
  });
});
