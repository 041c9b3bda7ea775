import { describe, expect, inject, it } from "vitest";
import {
  greatCircleMetres,
  matrixFromEnv,
  type Point,
  RoutingUnavailableError,
} from "../../src/services/routing";
import { OSRM_DETOUR, OSRM_SPEED } from "./server.mjs";

// OSRM's table service as served by the local stand-in (test/providers/server.mjs), with the
// server's --max-table-size of 100 enforced as OSRM does (sources × destinations ≤ 100²).
const server = inject("providers").url;
const osrm = (maxTableSize?: number) => {
  const tag = crypto.randomUUID();
  const provider = matrixFromEnv({
    ROUTING_URL: `${server}/osrm/${tag}`,
    ROUTING_MAX_TABLE_SIZE: maxTableSize ? String(maxTableSize) : undefined,
  });
  const stats = async () => (await (await fetch(`${server}/osrm/${tag}/__stats`)).json()) as any;
  return { provider, stats };
};
/** What the stand-in's road model gives for a pair (its answers are rounded to 0.1). */
const metres = (a: Point, b: Point) => greatCircleMetres(a, b) * OSRM_DETOUR;

function around(n: number, seed = 1): Point[] {
  let s = seed;
  const rnd = () => {
    s = (s * 48271) % 2147483647;
    return s / 2147483647;
  };
  return Array.from({ length: n }, () => [24.6 + rnd() * 0.4, 59.35 + rnd() * 0.15] as Point);
}

describe("OSRM provider against a server speaking OSRM's table API", () => {
  it("reads a small table in one request; no route is Infinity", async () => {
    const { provider, stats } = osrm();
    expect(provider.name).toBe("osrm");
    const points: Point[] = [
      [24.75, 59.44],
      [24.94, 60.17],
      [166.67, -77.85],
    ];
    const m = await provider.table(points);
    expect(m.distances[0][0]).toBe(0);
    expect(m.distances[0][1]).toBeCloseTo(metres(points[0], points[1]), 0);
    expect(m.durations[0][1]).toBeCloseTo(metres(points[0], points[1]) / OSRM_SPEED, 0);
    expect(m.durations[0][2]).toBe(Number.POSITIVE_INFINITY);
    expect(m.distances[2][1]).toBe(Number.POSITIVE_INFINITY);
    expect(await stats()).toEqual({ requests: 1, largest: 9 });
  });

  it("asks a table larger than the server's max-table-size in blocks, and assembles it exactly", async () => {
    const points = around(230);
    const { provider, stats } = osrm();
    const m = await provider.table(points);
    // 3 × 3 blocks of at most 100 × 100 (the server refuses anything larger with TooBig).
    expect(await stats()).toEqual({ requests: 9, largest: 100 * 100 });
    for (const [i, j] of [
      [0, 229],
      [229, 0],
      [99, 100],
      [100, 99],
      [150, 150],
      [5, 200],
      [201, 7],
    ]) {
      if (i === j) expect(m.distances[i][j]).toBe(0);
      else expect(Math.abs(m.distances[i][j] - metres(points[i], points[j]))).toBeLessThan(0.1);
    }
    expect(m.durations.every((row) => row.length === 230 && row.every(Number.isFinite))).toBe(true);
    // Blocks of 40 give the same matrix.
    expect((await osrm(40).provider.table(points)).distances).toEqual(m.distances);
    // The grid the optimizer reads: the same table as 32-bit rows.
    const g = await osrm(40).provider.grid(points);
    expect(g.size).toBe(230);
    expect(g.distances).toEqual(Float32Array.from(m.distances.flat()));
    expect(g.durations).toEqual(Float32Array.from(m.durations.flat()));
    // A limit above the server's is its refusal (a configuration error, not retried).
    const tooBig = osrm(1000).provider.table(around(120));
    await expect(tooBig).rejects.toThrow(/TooBig/);
    await expect(tooBig).rejects.not.toBeInstanceOf(RoutingUnavailableError);
  });

  it("legs of a path: each consecutive pair, in runs of max-table-size points, as the table says", async () => {
    const { provider, stats } = osrm(40);
    const points = around(95, 7);
    const legs = await provider.legs(points);
    expect(legs).toHaveLength(94);
    // Runs of 40 overlapping by one: 0-39, 39-78, 78-94.
    expect((await stats()).requests).toBe(3);
    const { durations } = await osrm(100).provider.table(points);
    for (let i = 0; i < 94; i++) expect(legs[i]).toBeCloseTo(durations[i][i + 1], 6);
    expect(await provider.legs([points[0]])).toEqual([]);
  });

  it("a star: one point to every other and back, in runs of max-table-size, as the table says", async () => {
    const { provider, stats } = osrm(40);
    const points = around(95, 11);
    const center: Point = [24.8, 59.42];
    const { to, from } = await provider.star(center, points);
    expect(to).toHaveLength(95);
    expect(from).toHaveLength(95);
    // Runs of 40 destinations: 3 runs, each one request out and one back.
    expect((await stats()).requests).toBe(6);
    const { durations } = await osrm(100).provider.table([center, ...points]);
    for (let i = 0; i < 95; i++) {
      expect(to[i]).toBeCloseTo(durations[0][i + 1], 6);
      expect(from[i]).toBeCloseTo(durations[i + 1][0], 6);
    }
  });

  it("an unreachable server is a temporary failure", async () => {
    const down = matrixFromEnv({ ROUTING_URL: "http://127.0.0.1:9" });
    await expect(
      down.table([
        [24.75, 59.44],
        [24.76, 59.45],
      ]),
    ).rejects.toBeInstanceOf(RoutingUnavailableError);
  });
});
