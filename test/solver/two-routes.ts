/** Helpers of the tests of moves between two routes (SWAP*, string relocation). */
import type { Model } from "../../src/solver/model";
import { Route } from "../../src/solver/route";
import type { Instance } from "../../src/solver/types";
import { lcg, randomDistances } from "./arbitrary";

/**
 * 4–12 visits and two vehicles (capacities may differ); `metric`: Euclidean distances and travel
 * time = distance (the triangle inequality holds), else the shared generator's matrices (arbitrary
 * ones half the time) and durations apart from distances half the time. Windows tight or loose or
 * none (`windows` false: none, and a shift no route reaches the end of).
 */
export function randomInstance(seed: number, metric: boolean, windows = true): Instance {
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

export function routeOf(m: Model, v: number, seq: number[]): Route {
  const r = new Route(v);
  r.seq = seq;
  r.update(m);
  return r;
}

/**
 * A sequence driven from scratch on the model's raw arrays (not the route's caches): its cost,
 * whether every window and the shift are kept (`time`), and whether its load fits (`load`).
 */
export function drive(m: Model, v: number, seq: number[]): { cost: number; time: boolean; load: boolean } {
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
export function twoRoutes(m: Model, r: () => number): [Route, Route] | null {
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
