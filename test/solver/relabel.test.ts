import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import { compile, NONE, RELABEL_FROM } from "../../src/solver/model";
import type { Instance } from "../../src/solver/types";
import { checkSolution } from "../../src/solver-check";
import { lcg, randomDistances } from "./arbitrary";

/**
 * Instances just above the size where the locations are renumbered (model.ts, `relabel`): some
 * locations unused or shared by two jobs, Euclidean or arbitrary (asymmetric) matrices as plain,
 * 32-bit or 64-bit arrays, durations apart from distances half the time, the duration objective
 * now and then, a missing end depot now and then, windows and one capacity dimension.
 */
function randomInstance(seed: number): Instance {
  const r = lcg(seed);
  const L = RELABEL_FROM + Math.floor(r() * 40);
  const plain = randomDistances(r, L);
  const kind = r();
  const distances = kind < 0.3 ? plain : kind < 0.6 ? Float32Array.from(plain) : Float64Array.from(plain);
  const durations = r() < 0.5 ? distances : distances.map((d) => d * (0.5 + r()));
  const jobs = Math.floor(L * 0.7);
  const end = r() < 0.8 ? 0 : undefined;
  return {
    locations: L,
    distances,
    durations,
    objective: r() < 0.25 ? "duration" : "distance",
    vehicles: Array.from({ length: 12 }, (_, i) => ({
      id: `v${i}`,
      start: 0,
      end,
      shiftStart: 0,
      shiftEnd: 3000,
      capacity: [60 + (i % 2) * 20],
    })),
    jobs: Array.from({ length: jobs }, (_, i) => {
      const a = Math.floor(r() * 2500);
      return {
        id: `j${i}`,
        location: 1 + Math.floor(r() * (L - 1)),
        service: Math.floor(r() * 10),
        timeWindow: r() < 0.8 ? ([a, a + 100 + r() * 600] as [number, number]) : undefined,
        demand: [Math.floor(r() * 10)],
      };
    }),
  };
}

/** The instance's matrices as they are now, copied entry by entry. */
const snapshot = (inst: Instance) => ({
  distances: Array.from(inst.distances),
  durations: Array.from(inst.durations),
});

/**
 * How many entries of the instance's matrices differ from a snapshot (a count: a failed
 * comparison of 90,000 entries takes minutes to print).
 */
const changed = (inst: Instance, before: ReturnType<typeof snapshot>) => {
  let n = 0;
  for (let i = 0; i < before.distances.length; i++) {
    if (!Object.is(inst.distances[i], before.distances[i])) n++;
    if (!Object.is(inst.durations[i], before.durations[i])) n++;
  }
  return n;
};

describe("relabelled locations (model.ts)", () => {
  for (const mode of [true, "in-place"] as const) {
    it(`give every leg between the jobs and depots its own matrix entry (${mode === true ? "copies" : "in place"})`, () => {
      for (let seed = 1; seed <= 12; seed++) {
        const inst = randomInstance(seed);
        const before = snapshot(inst);
        const plain = compile(
          { ...inst, distances: before.distances, durations: before.durations },
          { relabel: false },
        );
        const m = compile(inst, { relabel: mode });
        const typed = inst.distances instanceof Float32Array || inst.distances instanceof Float64Array;
        if (mode === true || !typed) expect(changed(inst, before)).toBe(0);
        // In place: the instance's own typed matrix is what is renumbered (no copy).
        else expect(m.dist).toBe(inst.distances);
        // Renumbered: the locations are not the instance's (else this test would prove nothing).
        expect(Array.from(m.loc)).not.toEqual(Array.from(plain.loc));
        const L = m.L;
        const places = [...Array.from(m.loc), m.vStart[0], ...(m.vEnd[0] === NONE ? [] : [m.vEnd[0]])];
        const origin = [
          ...Array.from(plain.loc),
          plain.vStart[0],
          ...(plain.vEnd[0] === NONE ? [] : [plain.vEnd[0]]),
        ];
        const wrong: string[] = [];
        for (let a = 0; a < places.length; a++) {
          for (let b = 0; b < places.length; b++) {
            const x = places[a] * L + places[b];
            const y = origin[a] * L + origin[b];
            if (!Object.is(m.dist[x], plain.dist[y]) || !Object.is(m.time[x], plain.time[y]))
              wrong.push(`${a}→${b}`);
            if (!Object.is(m.cost[x], plain.cost[y])) wrong.push(`cost ${a}→${b}`);
            // The same locations stay one (two jobs at one place), different ones stay apart.
            if ((places[a] === places[b]) !== (origin[a] === origin[b])) wrong.push(`place ${a}, ${b}`);
          }
        }
        expect(wrong.slice(0, 5)).toEqual([]);
        expect(m.symmetric).toBe(plain.symmetric);
        expect(m.timeNonNegative).toBe(plain.timeNonNegative);
        m.restore();
        expect(changed(inst, before)).toBe(0);
      }
    });
  }

  it("leave the search as it was: the same routes at a fixed budget, feasible, the instance's matrices put back", () => {
    for (let seed = 1; seed <= 6; seed++) {
      const inst = randomInstance(100 + seed);
      const before = snapshot(inst);
      const a = solve(inst, { seed, iterations: 300 });
      expect(changed(inst, before)).toBe(0);
      const b = solve(inst, { seed, iterations: 300, relabel: false });
      expect(a.routes).toEqual(b.routes);
      expect(a.unassigned).toEqual(b.unassigned);
      expect(a.distance).toBe(b.distance);
      expect(checkSolution(inst, a)).toEqual([]);
    }
  });

  it("put the instance's matrices back when the solve throws", () => {
    for (let seed = 1; seed <= 4; seed++) {
      const inst = randomInstance(200 + seed);
      const before = snapshot(inst);
      let calls = 0;
      const progress = () => {
        if (++calls > 3) throw new Error("stopped");
        return 0;
      };
      expect(() => solve(inst, { seed, progress })).toThrow("stopped");
      expect(calls).toBe(4);
      expect(changed(inst, before)).toBe(0);
    }
  });
});
