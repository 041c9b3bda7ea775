import { describe, expect, it } from "vitest";
import {
  DETOUR,
  greatCircleMetres,
  matrixFromEnv,
  OfflineMatrix,
  OsrmMatrix,
  RoutingUnavailableError,
} from "../../src/services/routing";

const A: [number, number] = [24.75, 59.44];
const B: [number, number] = [24.94, 60.17];

/** A fake `fetch` speaking OSRM's table API (http://project-osrm.org/docs/v5.24.0/api/#table-service). */
function osrm(answer: (url: URL) => Response) {
  const calls: URL[] = [];
  const fn = (async (input: RequestInfo | URL) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    calls.push(url);
    return answer(url);
  }) as typeof fetch;
  return { fn, calls };
}

describe("travel matrices (contract §16)", () => {
  it("offline: great-circle distance × 1.3 at the configured speed", async () => {
    const m = await new OfflineMatrix(40).table([A, B]);
    const d = greatCircleMetres(A, B) * DETOUR;
    expect(greatCircleMetres(A, B)).toBeGreaterThan(80_000);
    expect(greatCircleMetres(A, B)).toBeLessThan(84_000);
    expect(m.distances).toEqual([
      [0, d],
      [d, 0],
    ]);
    expect(m.durations[0][1]).toBeCloseTo(d / (40_000 / 3600), 6);
    const faster = await new OfflineMatrix(80).table([A, B]);
    expect(faster.durations[0][1]).toBeCloseTo(m.durations[0][1] / 2, 6);
    expect(matrixFromEnv({ ROUTING_SPEED_KMH: "80" }).name).toBe("offline");
    // The grid the optimizer reads: the same table as 32-bit rows.
    const g = await new OfflineMatrix(40).grid([A, B]);
    expect(g.size).toBe(2);
    expect(g.distances).toEqual(Float32Array.from([0, d, d, 0]));
    expect(g.durations[1]).toBeCloseTo(m.durations[0][1], 1);
  });

  it("osrm: asks /table with both annotations and reads null as no path", async () => {
    const fake = osrm(() =>
      Response.json({
        code: "Ok",
        durations: [
          [0, 3600],
          [null, 0],
        ],
        distances: [
          [0, 82000],
          [null, 0],
        ],
      }),
    );
    const provider = matrixFromEnv({ ROUTING_URL: "http://osrm.local:5000/" }, fake.fn);
    expect(provider.name).toBe("osrm");
    const m = await provider.table([A, B]);
    expect(fake.calls[0].pathname).toBe("/table/v1/driving/24.750000,59.440000;24.940000,60.170000");
    expect(fake.calls[0].searchParams.get("annotations")).toBe("duration,distance");
    expect(m.durations).toEqual([
      [0, 3600],
      [Number.POSITIVE_INFINITY, 0],
    ]);
    expect(m.distances[0][1]).toBe(82000);
  });

  it("osrm: a server error is temporary (retried), a refusal is not", async () => {
    await expect(
      new OsrmMatrix("http://x", osrm(() => new Response("down", { status: 503 })).fn).table([A, B]),
    ).rejects.toBeInstanceOf(RoutingUnavailableError);
    const refused = new OsrmMatrix(
      "http://x",
      osrm(() => Response.json({ code: "InvalidQuery", message: "bad" }, { status: 400 })).fn,
    );
    await expect(refused.table([A, B])).rejects.toThrow(/InvalidQuery/);
    await expect(refused.table([A, B])).rejects.not.toBeInstanceOf(RoutingUnavailableError);
    const offline = new OsrmMatrix(
      "http://x",
      osrm(() => {
        throw new TypeError("connection refused");
      }).fn,
    );
    await expect(offline.table([A, B])).rejects.toBeInstanceOf(RoutingUnavailableError);
  });
});
