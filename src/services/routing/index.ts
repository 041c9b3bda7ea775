/**
 * Travel times and distances between points (contract §16), behind one interface with two
 * providers, as geocoding has: `offline` (the default: great-circle distance × 1.3 at a settable
 * speed, no network) and `osrm` (an OSRM-compatible `/table` service at `ROUTING_URL`).
 */
import { pool } from "../../lib/pool";
export type Point = [lon: number, lat: number];
export type Matrix = { distances: number[][]; durations: number[][] };
/**
 * The same table as flat rows of 32-bit floats (`size × size`, row-major): what the solver reads.
 * A 2,000-point table takes 16 MB per matrix this way, against 32 MB as a Float64Array and more
 * as nested arrays, so a depot's day fits a Worker's 128 MB (bench/VRP.md, "Memory").
 */
export type Grid = { size: number; distances: Float32Array; durations: Float32Array };

export interface MatrixProvider {
  readonly name: string;
  /** Metres and seconds from every point to every point; Infinity where there is no path. */
  table(points: Point[]): Promise<Matrix>;
  /** The same, as a Grid. */
  grid(points: Point[]): Promise<Grid>;
  /**
   * Seconds of each leg of a path through `points` in order (`points[i]` → `points[i + 1]`):
   * what an ETA along a worker's stops needs, without the n × n table (n − 1 figures, not n²).
   */
  legs(points: Point[]): Promise<number[]>;
  /**
   * Seconds from `center` to each point and from each point back (`to[i]`, `from[i]`): what an
   * insertion of one stop into fixed routes needs (auto-assign, contract §29), 2n figures
   * instead of an n × n table.
   */
  star(center: Point, points: Point[]): Promise<{ to: number[]; from: number[] }>;
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

  async grid(points: Point[]): Promise<Grid> {
    const metresPerSecond = (this.speedKmh * 1000) / 3600;
    const n = points.length;
    const distances = new Float32Array(n * n);
    const durations = new Float32Array(n * n);
    for (let a = 0; a < n; a++) {
      for (let b = 0; b < n; b++) {
        const d = greatCircleMetres(points[a], points[b]) * DETOUR;
        distances[a * n + b] = d;
        durations[a * n + b] = d / metresPerSecond;
      }
    }
    return { size: n, distances, durations };
  }

  async legs(points: Point[]): Promise<number[]> {
    const metresPerSecond = (this.speedKmh * 1000) / 3600;
    return points.slice(1).map((b, i) => (greatCircleMetres(points[i], b) * DETOUR) / metresPerSecond);
  }

  async star(center: Point, points: Point[]): Promise<{ to: number[]; from: number[] }> {
    const metresPerSecond = (this.speedKmh * 1000) / 3600;
    // The great circle is symmetric: one figure serves both ways.
    const to = points.map((p) => (greatCircleMetres(center, p) * DETOUR) / metresPerSecond);
    return { to, from: to.slice() };
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
    if (n <= Math.max(1, this.maxTableSize)) return this.block(points, null, null);
    const durations = points.map(() => new Array<number>(n));
    const distances = points.map(() => new Array<number>(n));
    await this.blocks(points, (row, col, duration, distance) => {
      durations[row][col] = duration;
      distances[row][col] = distance;
    });
    return { durations, distances };
  }

  async grid(points: Point[]): Promise<Grid> {
    const n = points.length;
    const durations = new Float32Array(n * n);
    const distances = new Float32Array(n * n);
    await this.blocks(points, (row, col, duration, distance) => {
      durations[row * n + col] = duration;
      distances[row * n + col] = distance;
    });
    return { size: n, durations, distances };
  }

  /** Every entry of the table, asked for in blocks, handed to `put` as each block arrives. */
  private async blocks(
    points: Point[],
    put: (row: number, col: number, duration: number, distance: number) => void,
  ): Promise<void> {
    const n = points.length;
    const k = Math.max(1, this.maxTableSize);
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
          put(row, col, m.durations[r][c], m.distances[r][c]);
        });
      });
    };
    await pool(blocks, 6, one);
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

  /** One source to runs of at most `maxTableSize` destinations, and those back: a request each. */
  async star(center: Point, points: Point[]): Promise<{ to: number[]; from: number[] }> {
    const k = Math.max(1, this.maxTableSize);
    const to = new Array<number>(points.length);
    const from = new Array<number>(points.length);
    const runs: number[] = [];
    for (let i = 0; i < points.length; i += k) runs.push(i);
    await pool(runs, 6, async (start) => {
      const run = points.slice(start, start + k);
      const ids = run.map((_, i) => i + 1);
      const [out, back] = await Promise.all([
        this.block([center, ...run], [0], ids),
        this.block([center, ...run], ids, [0]),
      ]);
      run.forEach((_, i) => {
        to[start + i] = out.durations[0][i];
        from[start + i] = back.durations[i][0];
      });
    });
    return { to, from };
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
