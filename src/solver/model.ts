/**
 * The instance compiled to flat arrays the search reads in its inner loops: jobs (standalone
 * visits, then each shipment's pick-up and drop-off), their windows and signed demands, and the
 * vehicles. Location -1 stands for "no location" (a route without a start or an end depot):
 * legs to and from it cost nothing. The travel matrices are used as given when they are typed
 * arrays (a 2,000-stop instance's two matrices take 32 MB as 32-bit floats: they are never
 * copied), and each job keeps only its nearest neighbours (a bounded list, not J × J).
 */
import type { Instance } from "./types";

export type Matrix = Float32Array | Float64Array;

/** Neighbours kept per job: SISR's string removals walk them, the recreate's candidate routes come from them. */
export const NEIGHBOURS = 100;

export const NONE = -1;
/** Job kinds: a standalone visit (its demand is loaded at the start), a pick-up, a drop-off. */
export const VISIT = 0;
export const PICKUP = 1;
export const DELIVERY = 2;

export type Model = {
  J: number;
  D: number;
  V: number;
  L: number;
  ids: string[];
  loc: Int32Array;
  svc: Float64Array;
  twA: Float64Array;
  twB: Float64Array;
  /** Signed load change per job and dimension (`J × D`); a visit's demand is positive. */
  dem: Float64Array;
  kind: Uint8Array;
  partner: Int32Array;
  /** Per job: the only vehicle it may go on (Job.vehicle, or the vehicle it is fixed on), else NONE. */
  only: Int32Array;
  /** Per job: 1 when it is in a vehicle's fixed prefix (never removed, never moved). */
  locked: Uint8Array;
  /** Per vehicle: its fixed prefix (Vehicle.fixed) as job indexes; insertions go after it. */
  prefix: Int32Array[];
  fixedCount: Int32Array;
  vStart: Int32Array;
  vEnd: Int32Array;
  vShiftA: Float64Array;
  vShiftB: Float64Array;
  /** `V × D`; Infinity where unlimited. */
  vCap: Float64Array;
  vIds: string[];
  /**
   * Vehicles alike in everything the search sees (depots, shift, capacity) share a class: an
   * empty vehicle of a class stands for all its empty ones.
   */
  vClass: Int32Array;
  classes: Int32Array[];
  dist: Matrix;
  time: Matrix;
  cost: Matrix;
  balance: boolean;
  /**
   * Penalised time windows (warp.ts): routes keep time-warp segments, and a route's cost adds
   * `warpWeight` per unit of time warp (0: the windows and shift are hard constraints). Set by
   * the search, false by default.
   */
  warp: boolean;
  warpWeight: number;
  /** Whether no travel time is negative: then a later departure never arrives earlier (window pruning relies on it). */
  timeNonNegative: boolean;
  /** Whether `cost` is symmetric: an insertion's two legs are then read from one row. */
  symmetric: boolean;
  /** The nearest jobs to each job (nearest first, at most NEIGHBOURS), the adjacency of SISR's string removals. */
  neighbours: Int32Array[];
  /** Per job: the sum of its demands' magnitudes, and its distance from the first vehicle's start (the recreate's orders). */
  size: Float64Array;
  depotDistance: Float64Array;
  /**
   * Puts the instance's matrices back in their own order after an in-place renumbering
   * (`compile(…, { relabel: "in-place" })`); nothing to do otherwise. Called once, when the
   * model is no longer read.
   */
  restore: () => void;
};

/**
 * A matrix as the search reads it: a typed array as given (non-finite entries become Infinity),
 * and whether an entry is negative. One pass with one comparison for the usual entry (a small
 * instance is compiled per route by auto-assign, 50 times a request: the scans were most of it).
 */
function matrixOf(values: ArrayLike<number>): { matrix: Matrix; negative: boolean } {
  let negative = false;
  if (values instanceof Float32Array || values instanceof Float64Array) {
    let clean = true;
    for (let i = 0; i < values.length; i++) {
      const x = values[i];
      if (x >= 0) continue;
      if (x < 0 && x !== Number.NEGATIVE_INFINITY) negative = true;
      else {
        clean = false;
        break;
      }
    }
    if (clean) return { matrix: values, negative };
  }
  const matrix = Float64Array.from(values, (x) => (Number.isFinite(x) ? x : Number.POSITIVE_INFINITY));
  negative = false;
  for (let i = 0; i < matrix.length; i++) if (matrix[i] < 0) negative = true;
  return { matrix, negative };
}

/**
 * `neighbours: false` skips the nearest-neighbour lists (O(J²)): what only times given routes
 * (`evaluate`) never reads them.
 */
export function compile(
  inst: Instance,
  options: { neighbours?: boolean; relabel?: boolean | "in-place" } = {},
): Model {
  const shipments = inst.shipments ?? [];
  const J = inst.jobs.length + 2 * shipments.length;
  const D = Math.max(
    1,
    ...inst.vehicles.map((v) => v.capacity.length),
    ...inst.jobs.map((j) => j.demand.length),
    ...shipments.map((s) => s.demand.length),
  );
  const L = inst.locations;
  const dist = matrixOf(inst.distances);
  const time = inst.durations === inst.distances ? dist : matrixOf(inst.durations);
  const m: Model = {
    J,
    D,
    V: inst.vehicles.length,
    L,
    ids: [],
    loc: new Int32Array(J),
    svc: new Float64Array(J),
    twA: new Float64Array(J).fill(Number.NEGATIVE_INFINITY),
    twB: new Float64Array(J).fill(Number.POSITIVE_INFINITY),
    dem: new Float64Array(J * D),
    kind: new Uint8Array(J),
    partner: new Int32Array(J).fill(NONE),
    only: new Int32Array(J).fill(NONE),
    locked: new Uint8Array(J),
    prefix: [],
    fixedCount: new Int32Array(inst.vehicles.length),
    vStart: new Int32Array(inst.vehicles.length),
    vEnd: new Int32Array(inst.vehicles.length),
    vShiftA: new Float64Array(inst.vehicles.length),
    vShiftB: new Float64Array(inst.vehicles.length),
    vCap: new Float64Array(inst.vehicles.length * D).fill(Number.POSITIVE_INFINITY),
    vIds: inst.vehicles.map((v) => v.id),
    vClass: new Int32Array(inst.vehicles.length),
    classes: [],
    dist: dist.matrix,
    time: time.matrix,
    cost: new Float64Array(0),
    balance: inst.objective === "balance",
    warp: false,
    warpWeight: 0,
    symmetric: false,
    timeNonNegative: false,
    neighbours: [],
    size: new Float64Array(J),
    depotDistance: new Float64Array(J),
    restore: () => {},
  };
  m.cost = inst.objective === "duration" || inst.objective === "balance" ? m.time : m.dist;
  let j = 0;
  const put = (job: Instance["jobs"][number], kind: number, demand: number[], sign: number) => {
    m.ids.push(job.id);
    m.loc[j] = job.location;
    m.svc[j] = job.service;
    if (job.timeWindow) {
      m.twA[j] = job.timeWindow[0];
      m.twB[j] = job.timeWindow[1];
    }
    for (let d = 0; d < D; d++) m.dem[j * D + d] = sign * (demand[d] ?? 0);
    m.kind[j] = kind;
    return j++;
  };
  for (const job of inst.jobs) put(job, VISIT, job.demand, 1);
  for (const s of shipments) {
    const p = put(s.pickup, PICKUP, s.demand, 1);
    const q = put(s.delivery, DELIVERY, s.demand, -1);
    m.partner[p] = q;
    m.partner[q] = p;
  }
  inst.vehicles.forEach((v, i) => {
    m.vStart[i] = v.start ?? NONE;
    m.vEnd[i] = v.end ?? NONE;
    m.vShiftA[i] = v.shiftStart;
    m.vShiftB[i] = v.shiftEnd;
    v.capacity.forEach((c, d) => {
      m.vCap[i * D + d] = c;
    });
  });
  pin(m, inst);
  const byKind = new Map<string, number[]>();
  // One vehicle (auto-assign's instance per route) is its own class: no key to build.
  if (m.V === 1) byKind.set("", [0]);
  else
    for (let v = 0; v < m.V; v++) {
      const key = `${m.vStart[v]}|${m.vEnd[v]}|${m.vShiftA[v]}|${m.vShiftB[v]}|${Array.from(m.vCap.subarray(v * D, v * D + D)).join(",")}`;
      let members = byKind.get(key);
      if (!members) {
        members = [];
        byKind.set(key, members);
      }
      m.vClass[v] = byKind.size - 1;
      members.push(v);
    }
  m.classes = [...byKind.values()].map((vs) => Int32Array.from(vs));
  for (let j = 0; j < J; j++) {
    for (let d = 0; d < D; d++) m.size[j] += Math.abs(m.dem[j * D + d]);
    m.depotDistance[j] = m.V && m.vStart[0] !== NONE ? m.dist[m.vStart[0] * L + m.loc[j]] : 0;
  }
  m.neighbours = options.neighbours === false ? [] : nearest(m, Math.min(NEIGHBOURS, J - 1));
  // Only for a search (what only times given routes reads a few entries), on a matrix larger than
  // a core's cache; as copies, only within their memory budget.
  if (options.neighbours !== false && options.relabel !== false && L >= RELABEL_FROM) {
    const inPlace = options.relabel === "in-place";
    if (inPlace || m.dist.byteLength + (m.time === m.dist ? 0 : m.time.byteLength) <= RELABEL_MAX_BYTES)
      relabel(m, inPlace);
  }
  m.symmetric = isSymmetric(m.cost, L);
  m.timeNonNegative = !time.negative;
  return m;
}

/**
 * Fixed prefixes and pinned jobs (Vehicle.fixed, Job.vehicle) as indexes. A fixed job is served
 * where it stands: the end of its window does not rule it out (a task under way past its window
 * is still under way); its opening still makes the route wait. Errors name the job or vehicle.
 */
function pin(m: Model, inst: Instance): void {
  // Built when first needed: most instances pin nothing.
  let index: Map<string, number> | undefined;
  let vehicles: Map<string, number> | undefined;
  const job = (id: string) => {
    index ??= new Map(m.ids.map((id, j) => [id, j]));
    const j = index.get(id);
    if (j === undefined) throw new Error(`Unknown job ${id}.`);
    return j;
  };
  inst.vehicles.forEach((v, i) => {
    const seq = (v.fixed ?? []).map(job);
    for (const j of seq) {
      if (m.kind[j] !== VISIT) throw new Error(`Job ${m.ids[j]} is part of a shipment and cannot be fixed.`);
      if (m.locked[j]) throw new Error(`Job ${m.ids[j]} is fixed twice.`);
      m.locked[j] = 1;
      m.only[j] = i;
      m.twB[j] = Number.POSITIVE_INFINITY;
    }
    m.prefix.push(Int32Array.from(seq));
    m.fixedCount[i] = seq.length;
  });
  const jobs = [...inst.jobs, ...(inst.shipments ?? []).flatMap((s) => [s.pickup, s.delivery])];
  for (const x of jobs) {
    if (x.vehicle === undefined) continue;
    vehicles ??= new Map(inst.vehicles.map((v, i) => [v.id, i]));
    const v = vehicles.get(x.vehicle);
    if (v === undefined) throw new Error(`Job ${x.id} names an unknown vehicle ${x.vehicle}.`);
    const j = job(x.id);
    if (m.locked[j] && m.only[j] !== v) throw new Error(`Job ${x.id} is fixed on another vehicle.`);
    m.only[j] = v;
  }
  for (let j = 0; j < m.J; j++) {
    const q = m.partner[j];
    if (q !== NONE && m.only[j] !== m.only[q])
      throw new Error(`The pick-up and drop-off ${m.ids[j]}, ${m.ids[q]} are pinned to different vehicles.`);
  }
}

function isSymmetric(x: Matrix, n: number): boolean {
  for (let a = 0; a < n; a++) for (let b = a + 1; b < n; b++) if (x[a * n + b] !== x[b * n + a]) return false;
  return true;
}

/**
 * The `k` nearest other jobs of each job (by distance, ties by index): a bounded insertion into
 * a sorted list of `k`, O(J × (k + insertions)) per job instead of sorting all J.
 */
function nearest(m: Model, k: number): Int32Array[] {
  const out: Int32Array[] = [];
  const ids = new Int32Array(Math.max(0, k));
  const keys = new Float64Array(Math.max(0, k));
  for (let a = 0; a < m.J; a++) {
    const row = m.loc[a] * m.L;
    let n = 0;
    for (let x = 0; x < m.J; x++) {
      if (x === a || k <= 0) continue;
      const d = m.dist[row + m.loc[x]];
      const key = Number.isNaN(d) ? Number.POSITIVE_INFINITY : d;
      // Later indexes lose ties, so an equal key goes after the ones already kept.
      if (n === k && key >= keys[n - 1]) continue;
      let i = n === k ? k - 1 : n++;
      while (i > 0 && keys[i - 1] > key) {
        keys[i] = keys[i - 1];
        ids[i] = ids[i - 1];
        i--;
      }
      keys[i] = key;
      ids[i] = x;
    }
    out.push(ids.slice(0, n));
  }
  return out;
}

/** A leg's value in `matrix`; legs from or to "no location" are free. */
export const leg = (m: Model, matrix: Matrix, a: number, b: number) =>
  a === NONE || b === NONE ? 0 : matrix[a * m.L + b];

/**
 * Locations are renumbered from this many on: below it a job's row of a 64-bit matrix (8 bytes a
 * location) and the rows a route's legs read stay in a core's cache (2 MB of L2 here) anyway.
 */
export const RELABEL_FROM = 256;
/**
 * Renumbered matrices are copies (the instance's own are not changed) only when they take at
 * most this much, 16 MB (1,000 locations: 8 MB as 64-bit floats, 8 MB as two 32-bit matrices);
 * `solve` renumbers in place instead, at any size, and puts them back (`Model.restore`).
 */
export const RELABEL_MAX_BYTES = 16 * 2 ** 20;

/**
 * Renumbers the locations along a greedy nearest-neighbour chain (by distance, from the first
 * vehicle's start), the matrices copied in that order, or permuted where they are (`inPlace`:
 * no memory beyond two rows, so a 2,000-stop day's 32 MB of matrices gain it too; the instance's
 * matrices are then out of order until `m.restore()`). A job's insertion scan reads its own row
 * of the cost matrix at the locations of the stops of routes near it (bench/VRP.md, session 8:
 * 54 % of the scan's time on r2_10_2 was that read, cache misses on an 8 MB matrix); in the
 * chain's order those stops are near the job in the row too, so the reads fall into a few cache
 * lines. Exact: every entry keeps its value, and nothing in the search breaks ties by location
 * (neighbour lists are built before, and break ties by job).
 */
function relabel(m: Model, inPlace: boolean): void {
  const L = m.L;
  const dist = m.dist;
  // A matrix shorter than L × L (not the instance's contract) is read as it is, never half permuted.
  if (dist.length < L * L || m.time.length < L * L) return;
  const perm = new Int32Array(L).fill(-1);
  let at = m.V && m.vStart[0] !== NONE ? m.vStart[0] : 0;
  for (let k = 0; k < L; k++) {
    perm[at] = k;
    let next = -1;
    let best = Number.POSITIVE_INFINITY;
    const row = at * L;
    for (let b = 0; b < L; b++) {
      if (perm[b] >= 0) continue;
      const d = dist[row + b];
      if (next < 0 || d < best) {
        best = d;
        next = b;
      }
    }
    if (next < 0) break;
    at = next;
  }
  const matrices = m.time === m.dist ? [m.dist] : [m.dist, m.time];
  if (inPlace) {
    const inverse = new Int32Array(L);
    for (let a = 0; a < L; a++) inverse[perm[a]] = a;
    for (const x of matrices) permuteInPlace(x, perm, L);
    m.restore = () => {
      for (const x of matrices) permuteInPlace(x, inverse, L);
      m.restore = () => {};
    };
  } else {
    const [newDist, newTime = newDist] = matrices.map((x) => {
      const y = blank(x, x.length);
      for (let a = 0; a < L; a++) {
        const from = a * L;
        const to = perm[a] * L;
        for (let b = 0; b < L; b++) y[to + perm[b]] = x[from + b];
      }
      return y;
    });
    m.cost = m.cost === m.dist ? newDist : newTime;
    m.dist = newDist;
    m.time = newTime;
  }
  for (let j = 0; j < m.J; j++) if (m.loc[j] !== NONE) m.loc[j] = perm[m.loc[j]];
  for (let v = 0; v < m.V; v++) {
    if (m.vStart[v] !== NONE) m.vStart[v] = perm[m.vStart[v]];
    if (m.vEnd[v] !== NONE) m.vEnd[v] = perm[m.vEnd[v]];
  }
}

/**
 * An L × L matrix's rows and columns permuted where it is: entry (a, b) goes to
 * (perm[a], perm[b]). Columns row by row through one spare row, then rows along the
 * permutation's cycles, each row carried to its place; two rows of memory, every entry's bits
 * kept (typed-array copies, no arithmetic).
 */
function permuteInPlace(x: Matrix, perm: Int32Array, L: number): void {
  let carry = blank(x, L);
  let spare = blank(x, L);
  for (let a = 0; a < L; a++) {
    const row = x.subarray(a * L, a * L + L);
    spare.set(row);
    for (let b = 0; b < L; b++) row[perm[b]] = spare[b];
  }
  const placed = new Uint8Array(L);
  for (let s = 0; s < L; s++) {
    if (placed[s]) continue;
    carry.set(x.subarray(s * L, s * L + L));
    let a = s;
    do {
      const b = perm[a];
      placed[b] = 1;
      spare.set(x.subarray(b * L, b * L + L));
      x.set(carry, b * L);
      [carry, spare] = [spare, carry];
      a = b;
    } while (a !== s);
  }
}

/** A zeroed array of `length` entries of `x`'s type (a renumbered entry keeps its bits). */
function blank(x: Matrix, length: number): Matrix {
  return x instanceof Float32Array ? new Float32Array(length) : new Float64Array(length);
}
