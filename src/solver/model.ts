/**
 * The instance compiled to flat arrays the search reads in its inner loops: jobs (standalone
 * visits, then each shipment's pick-up and drop-off), their windows and signed demands, and the
 * vehicles. Location -1 stands for "no location" (a route without a start or an end depot):
 * legs to and from it cost nothing.
 */
import type { Instance } from "./types";

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
  vStart: Int32Array;
  vEnd: Int32Array;
  vShiftA: Float64Array;
  vShiftB: Float64Array;
  /** `V × D`; Infinity where unlimited. */
  vCap: Float64Array;
  vIds: string[];
  dist: Float64Array;
  time: Float64Array;
  cost: Float64Array;
  balance: boolean;
  /** Jobs by distance from each job (nearest first), the adjacency of SISR's string removals. */
  neighbours: Int32Array[];
};

export function compile(inst: Instance): Model {
  const shipments = inst.shipments ?? [];
  const J = inst.jobs.length + 2 * shipments.length;
  const D = Math.max(
    1,
    ...inst.vehicles.map((v) => v.capacity.length),
    ...inst.jobs.map((j) => j.demand.length),
    ...shipments.map((s) => s.demand.length),
  );
  const L = inst.locations;
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
    vStart: new Int32Array(inst.vehicles.length),
    vEnd: new Int32Array(inst.vehicles.length),
    vShiftA: new Float64Array(inst.vehicles.length),
    vShiftB: new Float64Array(inst.vehicles.length),
    vCap: new Float64Array(inst.vehicles.length * D).fill(Number.POSITIVE_INFINITY),
    vIds: inst.vehicles.map((v) => v.id),
    dist: Float64Array.from(inst.distances, (x) => (Number.isFinite(x) ? x : Number.POSITIVE_INFINITY)),
    time: Float64Array.from(inst.durations, (x) => (Number.isFinite(x) ? x : Number.POSITIVE_INFINITY)),
    cost: new Float64Array(0),
    balance: inst.objective === "balance",
    neighbours: [],
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
  for (let a = 0; a < J; a++) {
    const others = Array.from({ length: J - 1 }, (_, k) => (k < a ? k : k + 1));
    const row = m.loc[a] * L;
    others.sort((x, y) => m.dist[row + m.loc[x]] - m.dist[row + m.loc[y]] || x - y);
    m.neighbours.push(Int32Array.from(others));
  }
  return m;
}

/** A leg's value in `matrix`; legs from or to "no location" are free. */
export const leg = (m: Model, matrix: Float64Array, a: number, b: number) =>
  a === NONE || b === NONE ? 0 : matrix[a * m.L + b];
