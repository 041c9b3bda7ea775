/**
 * Travel times and distances between points (contract §16), behind one interface with two
 * providers, as geocoding has: `offline` (the default: great-circle distance × 1.3 at a settable
 * speed, no network) and `osrm` (an OSRM-compatible `/table` service at `ROUTING_URL`).
 */
import { pool } from "../../lib/pool";
export type Point = [lon: number, lat: number];
export type Matrix = { distances: number[][]; durations: number[][] };

export interface MatrixProvider {
  readonly name: string;
  /** Metres and seconds from every point to every point; Infinity where there is no path. */
  table(points: Point[]): Promise<Matrix>;
  /**
   * Seconds of each leg of a path through `points` in order (`points[i]` → `points[i + 1]`):
   * what an ETA along a worker's stops needs, without the n × n table (n − 1 figures, not n²).
   */
  legs(points: Point[]): Promise<number[]>;
}

export class RoutingUnavailableError extends Error {}

export type RoutingEnv = {
  ROUTING_URL?: string;
  ROUTING_SPEED_KMH?: string;
  ROUTING_MAX_TABLE_SIZE?: string;
};

/** Great-circle distance in metres (haversine, mean Earth radius 6,371,008.8 m). */
export function greatCircleMetres(a: Point, b: Point): number {
  const rad = Math.PI / 180;
  const dLat = (b[1] - a[1]) * rad;
  const dLon = (b[0] - a[0]) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a[1] * rad) * Math.cos(b[1] * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Roads are longer than the crow flies: × 1.3 (a common detour factor for cities). */
export const DETOUR = 1.3;

export class OfflineMatrix implements MatrixProvider {
  readonly name = "offline";
  constructor(private readonly speedKmh = 40) {}

  async table(points: Point[]): Promise<Matrix> {
    const metresPerSecond = (this.speedKmh * 1000) / 3600;
    const distances = points.map((a) => points.map((b) => greatCircleMetres(a, b) * DETOUR));
    return { distances, durations: distances.map((row) => row.map((d) => d / metresPerSecond)) };
  }

  async legs(points: Point[]): Promise<number[]> {
    const metresPerSecond = (this.speedKmh * 1000) / 3600;
    return points.slice(1).map((b, i) => (greatCircleMetres(points[i], b) * DETOUR) / metresPerSecond);
  }
}

/**
 * OSRM's table service (`GET /table/v1/driving/{lon,lat;...}?annotations=duration,distance`):
 * `durations` in seconds and `distances` in metres, `null` where no route was found.
 *
 * An OSRM server refuses a table whose sources × destinations exceed its `--max-table-size`
 * squared ("TooBig"; 100 unless the operator raised it), and a Worker's URL stops at 16 KB.
 * A larger table is asked for in blocks of at most `maxTableSize` sources by as many
 * destinations, each naming only its own coordinates with the `sources` and `destinations`
 * parameters, at most six at a time (a Worker's simultaneous outgoing connections).
 */
export class OsrmMatrix implements MatrixProvider {
  readonly name = "osrm";
  private readonly fetchImpl: typeof fetch;
  constructor(
    private readonly baseUrl: string,
    fetchImpl: typeof fetch = fetch,
    private readonly timeoutMs = 30_000,
    private readonly maxTableSize = 100,
  ) {
    // Called unbound: workerd's fetch throws "Illegal invocation" when called as a method.
    this.fetchImpl = (input, init) => fetchImpl(input, init);
  }

  async table(points: Point[]): Promise<Matrix> {
    const n = points.length;
    const k = Math.max(1, this.maxTableSize);
    if (n <= k) return this.block(points, null, null);
    const durations = points.map(() => new Array<number>(n));
    const distances = points.map(() => new Array<number>(n));
    const blocks: [number, number][] = [];
    for (let i = 0; i < n; i += k) for (let j = 0; j < n; j += k) blocks.push([i, j]);
    const one = async ([i, j]: [number, number]) => {
      const rows = range(i, Math.min(n, i + k));
      const cols = range(j, Math.min(n, j + k));
      // A diagonal block names its points once; others name the rows' then the columns'.
      const ids = i === j ? rows : [...rows, ...cols];
      const sources = rows.map((_, r) => r);
      const destinations = cols.map((_, c) => (i === j ? c : rows.length + c));
      const m = await this.block(
        ids.map((id) => points[id]),
        sources,
        destinations,
      );
      rows.forEach((row, r) => {
        cols.forEach((col, c) => {
          durations[row][col] = m.durations[r][c];
          distances[row][col] = m.distances[r][c];
        });
      });
    };
    await pool(blocks, 6, one);
    return { durations, distances };
  }

  /** Consecutive runs of at most `maxTableSize` points, overlapping by one: a table request each. */
  async legs(points: Point[]): Promise<number[]> {
    const k = Math.max(2, this.maxTableSize);
    const out = new Array<number>(Math.max(0, points.length - 1));
    const starts: number[] = [];
    for (let i = 0; i < points.length - 1; i += k - 1) starts.push(i);
    await pool(starts, 6, async (start) => {
      const run = points.slice(start, start + k);
      const m = await this.block(run, null, null);
      for (let i = 0; i < run.length - 1; i++) out[start + i] = m.durations[i][i + 1];
    });
    return out;
  }

  private async block(points: Point[], sources: number[] | null, destinations: number[] | null) {
    const coords = points.map(([lon, lat]) => `${lon.toFixed(6)},${lat.toFixed(6)}`).join(";");
    // OSRM's own syntax: `;` between indexes, as between coordinates.
    let query = "annotations=duration,distance";
    if (sources) query += `&sources=${sources.join(";")}`;
    if (destinations) query += `&destinations=${destinations.join(";")}`;
    const url = `${this.baseUrl.replace(/\/+$/, "")}/table/v1/driving/${coords}?${query}`;
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        signal: AbortSignal.timeout(this.timeoutMs),
        headers: { Accept: "application/json" },
      });
    } catch (err) {
      throw new RoutingUnavailableError(`routing service unreachable: ${String(err)}`);
    }
    if (res.status >= 500 || res.status === 429)
      throw new RoutingUnavailableError(`routing service answered ${res.status}`);
    const body = (await res.json().catch(() => null)) as {
      code?: string;
      message?: string;
      durations?: (number | null)[][];
      distances?: (number | null)[][];
    } | null;
    if (!res.ok || body?.code !== "Ok" || !body.durations || !body.distances) {
      throw new Error(
        `routing service refused the table: ${body?.code ?? res.status} ${body?.message ?? ""}`.trim(),
      );
    }
    const fill = (m: (number | null)[][]) =>
      m.map((row) => row.map((x) => (x === null ? Number.POSITIVE_INFINITY : x)));
    return { durations: fill(body.durations), distances: fill(body.distances) };
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

export function matrixFromEnv(env: RoutingEnv, fetchImpl?: typeof fetch): MatrixProvider {
  if (env.ROUTING_URL) {
    const size = Number(env.ROUTING_MAX_TABLE_SIZE);
    return new OsrmMatrix(
      env.ROUTING_URL,
      fetchImpl,
      undefined,
      Number.isInteger(size) && size > 0 ? size : 100,
    );
  }
  const speed = Number(env.ROUTING_SPEED_KMH);
  return new OfflineMatrix(Number.isFinite(speed) && speed > 0 ? speed : 40);
}
