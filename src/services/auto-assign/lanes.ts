/**
 * The solver's view of a lane (services/auto-assign): its chain of points, the travel the
 * insertion reads, and one small instance per route (src/solver/insert.ts).
 */
import type { CompiledInsertion, InsertionRoute } from "../../solver/insert";
import { compile } from "../../solver/model";
import type { Job, Shipment } from "../../solver/types";
import { type AccountShift, demandValue, seconds, shipmentOf, windowOf } from "../route-optimizations/build";
import { type MatrixProvider, matrixFromEnv, type Point } from "../routing";
import { parseJson } from "../tasks/types";
import { type KeptLane, type Lane, pt, type StopRow } from "./day";

/** The account's shift today, epoch seconds. */
export type Shift = { start: number; end: number };

// A string is read as JSON, as it was when rows were read one by one (json_extract gives a list as its text).
const demandOf = (t: StopRow) =>
  demandValue(typeof t.demand === "string" ? parseJson<unknown>(t.demand, null) : t.demand);

/**
 * The travel an insertion reads, asked for once per call (contract §16's travel model): each
 * lane's consecutive legs (start, stops, end: one `legs` call over all lanes), and each waiting
 * task to and from every point (`star`). Nothing else of an n × n table is ever read: a stop
 * goes between two neighbours, so only legs that exist and legs to or from a new stop count.
 */
type Chain = {
  points: Point[];
  start: boolean;
  end: boolean;
  stops: StopRow[];
  offset: number;
  legs: number[];
};
export type Travel = {
  chains: Map<Lane, Chain>;
  /** The located candidates, in order; their points follow the chains' in `star`'s list. */
  candidates: StopRow[];
  candidateOffset: number;
  /** Per candidate id: seconds to and from every chain point and candidate, in that order. */
  stars: Map<string, { to: number[]; from: number[] }>;
};

/** A lane as a chain of points: its start, its located stops in order, its end. */
function chainOf(lane: Lane): Omit<Chain, "offset" | "legs"> {
  const stops = lane.stops.filter((t) => pt(t));
  const end = lane.route?.end ?? null;
  const points = [...(lane.start ? [lane.start] : []), ...stops.map((t) => pt(t)!), ...(end ? [end] : [])];
  return { points, start: !!lane.start, end: !!end, stops };
}

/** Every lane's chain, each with its points' offset in one list of all of them (`flat`). */
export function chainsOf(lanes: Lane[]): { chains: Map<Lane, Chain>; flat: Point[] } {
  const chains = new Map<Lane, Chain>();
  const flat: Point[] = [];
  for (const lane of lanes) {
    const c = chainOf(lane);
    chains.set(lane, { ...c, offset: flat.length, legs: [] });
    flat.push(...c.points);
  }
  return { chains, flat };
}

/** The consecutive legs of these chains, in one `legs` call over them end to end (the legs between two chains are not read). */
async function legsOf(provider: MatrixProvider, chains: Chain[]): Promise<void> {
  const points = chains.flatMap((c) => c.points);
  const legs = points.length > 1 ? await provider.legs(points) : [];
  let at = 0;
  for (const c of chains) {
    c.legs = legs.slice(at, at + Math.max(0, c.points.length - 1));
    at += c.points.length;
  }
}

export async function travelOf(env: Env, lanes: Lane[], waiting: StopRow[]): Promise<Travel> {
  const provider = matrixFromEnv(env);
  const { chains, flat } = chainsOf(lanes);
  await legsOf(provider, [...chains.values()]);
  const candidates = waiting.filter((t) => pt(t));
  const points = [...flat, ...candidates.map((t) => pt(t)!)];
  const stars = new Map<string, { to: number[]; from: number[] }>();
  for (const t of candidates) stars.set(t.id, await provider.star(pt(t)!, points));
  return { chains, candidates, candidateOffset: flat.length, stars };
}

/** The slot's stand-in while compiling: located (its legs are written later), three demand dimensions (any task's fit). */
const SLOT: StopRow = {
  id: "\u0000slot",
  state: "unassigned",
  route_id: null,
  position: null,
  created_at: 0,
  version: 0,
  order_id: null,
  category: "drop_off",
  duration_seconds: 0,
  complete_after: null,
  complete_before: null,
  assignee_id: null,
  lon: 0,
  lat: 0,
  demand: [0, 0, 0],
  updated_at: 0,
};

/** What a kept lane depends on besides its stops' fingerprint (`key`): a changed one is built again. */
export const laneSignature = (lane: Lane, key: string, account: AccountShift, shift: Shift) =>
  `${key}|${lane.start ?? ""}|${lane.route?.end ?? ""}|${lane.worker.vehicle_capacity}|${account.optimize_visit_duration_margin}|${shift.end}`;

/** The lanes in `build` compiled with their slot (their legs read in one call), keyed in `kept` by `keyOf`. */
export async function keepLanes(
  env: Env,
  build: { lane: Lane; sig: string }[],
  chains: Map<Lane, Chain>,
  account: AccountShift,
  shift: Shift,
  kept: Map<string, KeptLane>,
  keyOf: (lane: Lane) => string,
): Promise<void> {
  if (!build.length) return;
  const own = build.map(({ lane }) => ({ ...chains.get(lane)!, offset: 0 }));
  await legsOf(matrixFromEnv(env), own);
  build.forEach(({ lane, sig }, i) => {
    const chain = own[i];
    const n = chain.points.length;
    const never = new Array<number>(n).fill(Number.POSITIVE_INFINITY);
    const inst = laneInstance(
      lane,
      {
        chains: new Map([[lane, chain]]),
        candidates: [SLOT],
        candidateOffset: n,
        stars: new Map([[SLOT.id, { to: never, from: never }]]),
      },
      account,
      shift,
    );
    const m = compile(inst.instance, { neighbours: false });
    const index = new Map(m.ids.map((id, j) => [id, j]));
    kept.set(keyOf(lane), {
      sig,
      m,
      seq: inst.order.map((id) => index.get(id)!).filter((j) => j !== undefined),
      order: inst.order,
      fixed: inst.fixed,
      slot: index.get(SLOT.id)!,
    });
  });
}

/**
 * `task` written into the kept lane's slot: its service, window and demand, the shift's start
 * (now, once it has begun), and its legs to and from each point of the chain (`star`, read over
 * every lane's points, this chain's from `offset`). A leg with no route is Infinity, as the
 * solver's matrices have it.
 */
export function slotIn(
  k: KeptLane,
  task: StopRow,
  star: { to: number[]; from: number[] },
  offset: number,
  account: AccountShift,
  shift: Shift,
): CompiledInsertion {
  const { m, slot } = k;
  m.svc[slot] = (task.duration_seconds ?? 0) + seconds(account.optimize_visit_duration_margin || "00:00:00");
  const [a, b] = windowOf(task) ?? [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY];
  m.twA[slot] = a;
  m.twB[slot] = b;
  const demand = demandOf(task);
  for (let d = 0; d < m.D; d++) m.dem[slot * m.D + d] = demand[d] ?? 0;
  m.vShiftA[0] = shift.start;
  // The slot's legs may differ each way (a road network's): never read as symmetric.
  m.symmetric = false;
  const u = m.loc[slot];
  const leg = (x: number) => (Number.isFinite(x) ? Math.max(0, x) : Number.POSITIVE_INFINITY);
  // One matrix is the distances, the durations and the cost (the objective is time).
  for (let p = 0; p < u; p++) {
    m.time[u * m.L + p] = leg(star.to[offset + p]);
    m.time[p * m.L + u] = leg(star.from[offset + p]);
  }
  return { m, seq: k.seq, fixed: k.fixed, job: slot };
}

/**
 * The solver's instance of one lane with the candidate tasks, its travel read from `travel`: a
 * location per point of the chain, then one per candidate (no two stops merged: two at one
 * place are two locations with no travel between them).
 */
export function laneInstance(
  lane: Lane,
  travel: Travel,
  account: AccountShift,
  shift: Shift,
): InsertionRoute {
  const chain = travel.chains.get(lane)!;
  const candidates = travel.candidates;
  const n = chain.points.length;
  const L = n + candidates.length;
  // Seconds, Infinity where never read; the objective is time, so one matrix serves as both.
  const durations = new Float32Array(L * L).fill(Number.POSITIVE_INFINITY);
  for (let i = 0; i < L; i++) durations[i * L + i] = 0;
  chain.legs.forEach((seconds, i) => {
    durations[i * L + i + 1] = seconds;
  });
  candidates.forEach((t, j) => {
    const star = travel.stars.get(t.id)!;
    const u = n + j;
    for (let k = 0; k < n; k++) {
      durations[u * L + k] = star.to[chain.offset + k];
      durations[k * L + u] = star.from[chain.offset + k];
    }
    for (let k = 0; k < candidates.length; k++) {
      if (k === j) continue;
      durations[u * L + n + k] = star.to[travel.candidateOffset + k];
      durations[(n + k) * L + u] = star.from[travel.candidateOffset + k];
    }
  });
  const located = chain.stops;
  const locationOf = new Map<string, number>([
    ...located.map((t, k) => [t.id, k + (chain.start ? 1 : 0)] as const),
    ...candidates.map((t, j) => [t.id, n + j] as const),
  ]);
  const start = chain.start ? 0 : undefined;
  const end = chain.end ? n - 1 : undefined;
  const margin = seconds(account.optimize_visit_duration_margin || "00:00:00");
  const job = (t: StopRow): Job => ({
    id: t.id,
    location: locationOf.get(t.id)!,
    service: (t.duration_seconds ?? 0) + margin,
    timeWindow: windowOf(t),
    demand: demandOf(t),
  });
  // An order's pick-up and drop-off both here (on the route or new): a shipment.
  // A candidate already on this lane (placed by an earlier task of the call) is one of its stops.
  const all = [...located, ...candidates.filter((t) => !located.includes(t))];
  const byOrder = new Map<string, StopRow[]>();
  for (const t of all) {
    if (!t.order_id) continue;
    const group = byOrder.get(t.order_id);
    if (group) group.push(t);
    else byOrder.set(t.order_id, [t]);
  }
  const shipments: Shipment[] = [];
  const paired = new Set<string>();
  for (const group of byOrder.values()) {
    const up = group.filter((t) => t.category === "pick_up");
    const down = group.filter((t) => t.category === "drop_off");
    if (up.length === 1 && down.length === 1) {
      shipments.push(shipmentOf(job(up[0]), job(down[0]), demandOf(up[0]), demandOf(down[0])));
      paired.add(up[0].id).add(down[0].id);
    }
  }
  return {
    instance: {
      locations: L,
      distances: durations,
      durations,
      vehicles: [
        {
          id: lane.route?.id ?? lane.worker.user_id,
          start,
          end,
          shiftStart: shift.start,
          shiftEnd: shift.end,
          capacity: parseJson<number[]>(lane.worker.vehicle_capacity ?? "[]", []),
        },
      ],
      jobs: all.filter((t) => !paired.has(t.id)).map(job),
      shipments,
      objective: "duration",
    },
    order: located.map((t) => t.id),
    fixed: located.filter((t) => t.state === "active" || t.state === "transit").length,
  };
}
