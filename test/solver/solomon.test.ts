import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import { parseSolomon } from "../../src/solver/solomon";
import { checkSolution } from "../../src/solver-check";
import C101 from "../fixtures/solomon/C101.txt?raw";
import C201 from "../fixtures/solomon/C201.txt?raw";
import R101 from "../fixtures/solomon/R101.txt?raw";
import R201 from "../fixtures/solomon/R201.txt?raw";
import RC101 from "../fixtures/solomon/RC101.txt?raw";
import RC201 from "../fixtures/solomon/RC201.txt?raw";

// Best known total distances (fixtures/solomon/README.md).
const CASES: [string, string, number][] = [
  ["C101", C101, 828.94],
  ["C201", C201, 591.56],
  ["R101", R101, 1642.88],
  ["R201", R201, 1149.68],
  ["RC101", RC101, 1643.41],
  ["RC201", RC201, 1265.56],
];

/**
 * A regression net for the solver, not its benchmark (`npm run bench:vrp` measures that): a
 * small budget on one instance per Solomon class must give a feasible solution within a loose
 * gap of the best known distance.
 */
describe("the solver on Solomon instances (one per class, small budget)", () => {
  for (const [name, text, best] of CASES) {
    it(`${name}: every customer served, feasible, within 8% of ${best}`, () => {
      const instance = parseSolomon(text);
      const solution = solve(instance, { seed: 1, iterations: 2500 });
      expect(checkSolution(instance, solution)).toEqual([]);
      expect(solution.unassigned).toEqual([]);
      const gap = (solution.distance - best) / best;
      expect(gap, `${name}: ${solution.distance.toFixed(2)}`).toBeLessThan(0.08);
      expect(solution.stats.cost).toBeLessThanOrEqual(solution.stats.initialCost);
    }, 60_000);
  }
});
