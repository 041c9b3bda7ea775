import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import { checkSolution } from "../../src/solver-check";
import { instanceArb } from "./arbitrary";

describe("solver properties (fast-check, random small instances)", () => {
  it("always answers a solution the independent checker accepts, never worse than its construction", () => {
    fc.assert(
      fc.property(instanceArb, fc.integer({ min: 1, max: 1000 }), (instance, seed) => {
        const solution = solve(instance, { seed, iterations: 150 });
        expect(checkSolution(instance, solution)).toEqual([]);
        expect(solution.stats.cost).toBeLessThanOrEqual(solution.stats.initialCost);
      }),
      { numRuns: 150 },
    );
  });

  it("is deterministic for a seed and a budget", () => {
    fc.assert(
      fc.property(instanceArb, fc.integer({ min: 1, max: 1000 }), (instance, seed) => {
        const a = solve(instance, { seed, iterations: 100 });
        const b = solve(instance, { seed, iterations: 100 });
        expect(b).toEqual(a);
      }),
      { numRuns: 50 },
    );
  });
});
