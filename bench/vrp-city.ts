/**
 * A generated city instance for the benchmark: `visits` stops scattered over a 30 km square
 * around a depot, time windows of 1–3 hours within a 10-hour day, demands of 1–20 against a
 * capacity of 250 (the fleet carries 1.2× the demand), 50 km/h travel (metres and seconds), deterministic for a seed.
 * The matrices are 32-bit floats, as the service builds them.
 */
import type { Instance } from "../src/solver/types";

export function cityInstance(visits: number, vehicles: number, seed: number): Instance {
  let s = seed >>> 0;
  const rnd = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const n = visits + 1;
  const xy = Array.from({ length: n }, (_, i) =>
    i === 0 ? [15_000, 15_000] : [rnd() * 30_000, rnd() * 30_000],
  );
  const distances = new Float32Array(n * n);
  const durations = new Float32Array(n * n);
  for (let a = 0; a < n; a++) {
    for (let b = 0; b < n; b++) {
      const d = Math.hypot(xy[a][0] - xy[b][0], xy[a][1] - xy[b][1]) * 1.3;
      distances[a * n + b] = d;
      durations[a * n + b] = d / (50_000 / 3600);
    }
  }
  const day = 10 * 3600;
  return {
    locations: n,
    distances,
    durations,
    objective: "distance",
    vehicles: Array.from({ length: vehicles }, (_, i) => ({
      id: `v${i + 1}`,
      start: 0,
      end: 0,
      shiftStart: 0,
      shiftEnd: day,
      capacity: [250],
    })),
    jobs: Array.from({ length: visits }, (_, i) => {
      const width = (1 + Math.floor(rnd() * 3)) * 3600;
      const open = Math.floor(rnd() * (day - width - 3600));
      return {
        id: `j${i + 1}`,
        location: i + 1,
        service: 300,
        timeWindow: [open, open + width] as [number, number],
        demand: [1 + Math.floor(rnd() * 20)],
      };
    }),
  };
}
