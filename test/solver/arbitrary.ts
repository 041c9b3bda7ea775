import fc from "fast-check";
import type { Instance } from "../../src/solver/types";

/** Small random instances: missing depots, 0–2 capacity dimensions, windows, pairs, holes in the matrix. */
export const instanceArb: fc.Arbitrary<Instance> = fc
  .record({
    points: fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 50 })), {
      minLength: 2,
      maxLength: 8,
    }),
    holes: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 3 }),
    dims: fc.integer({ min: 0, max: 2 }),
    vehicles: fc.array(
      fc.record({
        start: fc.option(fc.nat(), { nil: undefined }),
        end: fc.option(fc.nat(), { nil: undefined }),
        shiftStart: fc.integer({ min: 0, max: 50 }),
        length: fc.integer({ min: 20, max: 400 }),
        capacity: fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 2 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    jobs: fc.array(
      fc.record({
        location: fc.nat(),
        service: fc.integer({ min: 0, max: 10 }),
        window: fc.option(fc.tuple(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 200 })), {
          nil: undefined,
        }),
        demand: fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 2 }),
      }),
      { minLength: 1, maxLength: 7 },
    ),
    pairs: fc.array(
      fc.record({
        from: fc.nat(),
        to: fc.nat(),
        demand: fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 2 }),
      }),
      { maxLength: 2 },
    ),
  })
  .map(({ points, holes, dims, vehicles, jobs, pairs }) => {
    const n = points.length;
    const matrix = points.flatMap((a) => points.map((b) => Math.hypot(a[0] - b[0], a[1] - b[1])));
    for (const [a, b] of holes) if (a % n !== b % n) matrix[(a % n) * n + (b % n)] = Number.POSITIVE_INFINITY;
    const cut = (xs: number[]) => xs.slice(0, dims);
    return {
      locations: n,
      distances: matrix,
      durations: matrix,
      vehicles: vehicles.map((v, i) => ({
        id: `v${i}`,
        start: v.start === undefined ? undefined : v.start % n,
        end: v.end === undefined ? undefined : v.end % n,
        shiftStart: v.shiftStart,
        shiftEnd: v.shiftStart + v.length,
        capacity: cut(v.capacity),
      })),
      jobs: jobs.map((j, i) => ({
        id: `j${i}`,
        location: j.location % n,
        service: j.service,
        timeWindow: j.window
          ? ([Math.min(...j.window), Math.max(...j.window)] as [number, number])
          : undefined,
        demand: cut(j.demand),
      })),
      shipments: pairs.map((p, i) => ({
        pickup: { id: `p${i}`, location: p.from % n, service: 2, demand: [] },
        delivery: { id: `d${i}`, location: p.to % n, service: 2, demand: [] },
        demand: cut(p.demand),
      })),
    };
  });

/** A small deterministic PRNG of the tests' own (not the solver's). */
export function lcg(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 4294967296;
  };
}

/**
 * A `count` × `count` matrix drawn from `r`: Euclidean over random points most of the time, else
 * arbitrary (asymmetric, no triangle inequality).
 */
export function randomDistances(r: () => number, count: number): number[] {
  const pts = Array.from({ length: count }, () => [r() * 60, r() * 60]);
  const metric = r() < 0.6;
  return pts.flatMap((a, i) =>
    pts.map((b, k) => (i === k ? 0 : metric ? Math.hypot(a[0] - b[0], a[1] - b[1]) : 1 + r() * 60)),
  );
}
