import { describe, expect, it } from "vitest";
import { compile, type Model } from "../../src/solver/model";
import { Route } from "../../src/solver/route";
import type { Instance } from "../../src/solver/types";
import { lcg, randomDistances } from "./arbitrary";

/** 6–25 visits, Euclidean or arbitrary (asymmetric, no triangle inequality) matrices, windows tight or loose, 1–2 dimensions. */
function randomModel(seed: number): Model {
  const r = lcg(seed);
  const n = 6 + Math.floor(r() * 20);
  const distances = randomDistances(r, n + 1);
  const dims = 1 + Math.floor(r() * 2);
  const width = r() < 0.5 ? 40 : 400;
  const inst: Instance = {
    locations: n + 1,
    distances,
    durations: distances,
    vehicles: [
      {
        id: "v",
        start: 0,
        end: r() < 0.8 ? 0 : undefined,
        shiftStart: 0,
        shiftEnd: 600 + r() * 600,
        capacity: Array.from({ length: dims }, () => 20 + Math.floor(r() * 40)),
      },
    ],
    jobs: Array.from({ length: n }, (_, i) => {
      const a = Math.floor(r() * 500);
      return {
        id: `j${i}`,
        location: i + 1,
        service: Math.floor(r() * 10),
        timeWindow: r() < 0.8 ? ([a, a + width * r()] as [number, number]) : undefined,
        demand: Array.from({ length: dims }, () => Math.floor(r() * 6)),
      };
    }),
  };
  return compile(inst, { neighbours: false });
}

/** Every cache of `a` equal to that of `b` (the same numbers, not merely close). */
function expectSame(m: Model, a: Route, b: Route, what: string) {
  const n = b.seq.length;
  expect(a.seq, what).toEqual(b.seq);
  expect(Array.from(a.es.subarray(0, n)), `${what} es`).toEqual(Array.from(b.es.subarray(0, n)));
  expect(Array.from(a.ls.subarray(0, n)), `${what} ls`).toEqual(Array.from(b.ls.subarray(0, n)));
  expect(Array.from(a.edge.subarray(0, n + 1)), `${what} edge`).toEqual(
    Array.from(b.edge.subarray(0, n + 1)),
  );
  const size = (n + 1) * m.D;
  expect(Array.from(a.pt.subarray(0, size)), `${what} pt`).toEqual(Array.from(b.pt.subarray(0, size)));
  expect(Array.from(a.pm.subarray(0, size)), `${what} pm`).toEqual(Array.from(b.pm.subarray(0, size)));
  expect([a.cost, a.duration, a.feasible], what).toEqual([b.cost, b.duration, b.feasible]);
}

describe("Route.update over a range", () => {
  it("gives the caches a full recomputation gives, after insertions, string removals and replacements", () => {
    let checked = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const m = randomModel(seed);
      const r = lcg(seed * 7919);
      // A random order of a random subset, feasible or not (an infeasible route is recomputed whole).
      const jobs = Array.from({ length: m.J }, (_, j) => j).filter(() => r() < 0.6);
      let route = new Route(0);
      route.seq = jobs.sort(() => r() - 0.5);
      route.update(m);
      // A chain of changes, each on a copy of the last route (as the search does), each checked
      // against a route built from scratch; copies reuse a spare route's arrays half the time.
      let spare: Route | undefined;
      for (let step = 0; step < 12; step++) {
        const x = route.clone(r() < 0.5 ? spare : undefined);
        const seq = x.seq;
        const outside = Array.from({ length: m.J }, (_, j) => j).filter((j) => !seq.includes(j));
        const kind = r();
        let lo: number;
        let hi: number;
        if (kind < 0.4 && outside.length) {
          // One insertion.
          lo = Math.floor(r() * (seq.length + 1));
          seq.splice(lo, 0, outside[Math.floor(r() * outside.length)]);
          hi = lo + 1;
        } else if (kind < 0.8 && seq.length) {
          // A string removed, or a split string (a kept run inside it).
          const a = Math.floor(r() * seq.length);
          const b = a + 1 + Math.floor(r() * Math.min(5, seq.length - a));
          const keepFrom = a + Math.floor(r() * (b - a));
          const keepTo = r() < 0.5 ? keepFrom : keepFrom + Math.floor(r() * (b - keepFrom));
          const removed = [...seq.slice(a, keepFrom), ...seq.slice(keepTo, b)].length;
          x.seq = [...seq.slice(0, a), ...seq.slice(keepFrom, keepTo), ...seq.slice(b)];
          lo = a;
          hi = b - removed;
          if (!removed) continue;
        } else {
          // Two stops swapped.
          if (seq.length < 2) continue;
          const a = Math.floor(r() * seq.length);
          const b = Math.floor(r() * seq.length);
          [seq[a], seq[b]] = [seq[b], seq[a]];
          lo = Math.min(a, b);
          hi = Math.max(a, b) + 1;
        }
        x.update(m, lo, hi);
        const fresh = new Route(0);
        fresh.seq = x.seq.slice();
        fresh.update(m);
        expectSame(m, x, fresh, `seed ${seed} step ${step}`);
        checked++;
        spare = route;
        route = x;
      }
    }
    expect(checked).toBeGreaterThan(2000);
  });
});
