/**
 * An independent check of a route-optimization solution: it shares no code with the solver
 * (its own types and arithmetic), so a bug in one does not hide in the other. It re-simulates
 * every route from the instance and reports each broken rule: every job exactly once, capacity
 * at every point, windows, shifts, pick-up before drop-off on one route, and the totals; when
 * re-planning from now, each vehicle's fixed stops first in their order (their windows' ends
 * and the shift's end not held against them: they are under way) and pinned jobs on their vehicle.
 */

export type CheckedInstance = {
  distances: ArrayLike<number>;
  durations: ArrayLike<number>;
  locations: number;
  vehicles: {
    id: string;
    start?: number;
    end?: number;
    shiftStart: number;
    shiftEnd: number;
    capacity: number[];
    fixed?: string[];
  }[];
  jobs: {
    id: string;
    location: number;
    service: number;
    timeWindow?: [number, number];
    demand: number[];
    vehicle?: string;
  }[];
  shipments?: {
    pickup: CheckedInstance["jobs"][number];
    delivery: CheckedInstance["jobs"][number];
    demand: number[];
  }[];
};

export type CheckedSolution = {
  routes: {
    vehicle: string;
    stops: { job: string; arrival: number; start: number; departure: number }[];
    distance: number;
  }[];
  unassigned: { job: string }[];
  distance: number;
};

const EPS = 1e-6;

export function checkSolution(inst: CheckedInstance, sol: CheckedSolution): string[] {
  const problems: string[] = [];
  type Info = {
    location: number;
    service: number;
    window?: [number, number];
    load: number[];
    role: "visit" | "pickup" | "delivery";
    pair?: string;
    vehicle?: string;
  };
  const info = new Map<string, Info>();
  for (const j of inst.jobs)
    info.set(j.id, {
      location: j.location,
      service: j.service,
      window: j.timeWindow,
      load: j.demand,
      role: "visit",
      vehicle: j.vehicle,
    });
  for (const s of inst.shipments ?? []) {
    info.set(s.pickup.id, {
      location: s.pickup.location,
      service: s.pickup.service,
      window: s.pickup.timeWindow,
      load: s.demand,
      role: "pickup",
      pair: s.delivery.id,
      vehicle: s.pickup.vehicle,
    });
    info.set(s.delivery.id, {
      location: s.delivery.location,
      service: s.delivery.service,
      window: s.delivery.timeWindow,
      load: s.demand,
      role: "delivery",
      pair: s.pickup.id,
      vehicle: s.delivery.vehicle,
    });
  }
  const seen = new Map<string, number>();
  const count = (id: string) => seen.set(id, (seen.get(id) ?? 0) + 1);
  const at = (m: ArrayLike<number>, a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? 0 : m[a * inst.locations + b];
  const vehicles = new Map(inst.vehicles.map((v) => [v.id, v]));
  const usedVehicles = new Set<string>();
  const fixedOn = new Map<string, string>();
  for (const v of inst.vehicles) for (const id of v.fixed ?? []) fixedOn.set(id, v.id);
  let total = 0;
  for (const route of sol.routes) {
    const v = vehicles.get(route.vehicle);
    if (!v) {
      problems.push(`route of unknown vehicle ${route.vehicle}`);
      continue;
    }
    if (usedVehicles.has(v.id)) problems.push(`vehicle ${v.id} has two routes`);
    usedVehicles.add(v.id);
    const fixed = v.fixed ?? [];
    if (fixed.some((id, i) => route.stops[i]?.job !== id))
      problems.push(`vehicle ${v.id}: does not start with its fixed stops ${fixed.join(", ")}`);
    let time = -Infinity;
    let place = v.start;
    let distance = 0;
    // The load leaving the start: every plain visit's demand is on board.
    const dims = Math.max(v.capacity.length, ...route.stops.map((s) => info.get(s.job)?.load.length ?? 0));
    const load = new Array(dims).fill(0);
    for (const s of route.stops) {
      const j = info.get(s.job);
      if (j?.role === "visit")
        j.load.forEach((x, d) => {
          load[d] += x;
        });
    }
    const overCapacity = () => load.some((x, d) => d < v.capacity.length && x > v.capacity[d] + EPS);
    if (overCapacity()) problems.push(`vehicle ${v.id}: over capacity leaving the start`);
    const onBoard = new Set<string>();
    route.stops.forEach((s, i) => {
      count(s.job);
      const j = info.get(s.job);
      if (!j) {
        problems.push(`unknown job ${s.job}`);
        return;
      }
      const legTime = at(inst.durations, place, j.location);
      const legDistance = at(inst.distances, place, j.location);
      if (!Number.isFinite(legTime) || !Number.isFinite(legDistance))
        problems.push(`job ${s.job}: no path to it`);
      distance += legDistance;
      const earliestArrival = (i === 0 ? v.shiftStart : time) + legTime;
      if (s.arrival + EPS < earliestArrival)
        problems.push(`job ${s.job}: arrives at ${s.arrival}, before it can (${earliestArrival})`);
      if (i === 0 && s.arrival - legTime + EPS < v.shiftStart)
        problems.push(`vehicle ${v.id}: leaves before its shift starts`);
      if (s.start + EPS < s.arrival) problems.push(`job ${s.job}: starts before arriving`);
      if (j.vehicle !== undefined && j.vehicle !== v.id)
        problems.push(`job ${s.job}: on vehicle ${v.id}, pinned to ${j.vehicle}`);
      if (fixedOn.has(s.job) && fixedOn.get(s.job) !== v.id)
        problems.push(`job ${s.job}: on vehicle ${v.id}, fixed on ${fixedOn.get(s.job)}`);
      const late = !fixedOn.has(s.job) && j.window && s.start > j.window[1] + EPS;
      if (j.window && (s.start + EPS < j.window[0] || late))
        problems.push(`job ${s.job}: starts at ${s.start}, outside [${j.window[0]}, ${j.window[1]}]`);
      if (Math.abs(s.departure - (s.start + j.service)) > EPS)
        problems.push(`job ${s.job}: departure is not start + service`);
      time = s.departure;
      place = j.location;
      if (j.role === "visit")
        j.load.forEach((x, d) => {
          load[d] -= x;
        });
      if (j.role === "pickup") {
        j.load.forEach((x, d) => {
          load[d] += x;
        });
        onBoard.add(s.job);
      }
      if (j.role === "delivery") {
        if (!onBoard.has(j.pair!))
          problems.push(`job ${s.job}: dropped off before its pick-up ${j.pair} on this route`);
        j.load.forEach((x, d) => {
          load[d] -= x;
        });
      }
      if (overCapacity()) problems.push(`vehicle ${v.id}: over capacity after job ${s.job}`);
    });
    const back = at(inst.durations, place, v.end);
    distance += at(inst.distances, place, v.end);
    if (route.stops.length > fixed.length && time + back > v.shiftEnd + EPS)
      problems.push(`vehicle ${v.id}: back at ${time + back}, after its shift ends (${v.shiftEnd})`);
    for (const s of route.stops) {
      const j = info.get(s.job);
      if (j?.role === "pickup" && !route.stops.some((x) => x.job === j.pair))
        problems.push(`job ${s.job}: its drop-off ${j.pair} is not on the same route`);
    }
    if (Math.abs(distance - route.distance) > EPS * Math.max(1, distance))
      problems.push(`vehicle ${v.id}: distance ${route.distance}, recomputed ${distance}`);
    total += distance;
  }
  for (const u of sol.unassigned) {
    count(u.job);
    if (fixedOn.has(u.job)) problems.push(`job ${u.job}: fixed, yet unassigned`);
  }
  for (const v of inst.vehicles)
    if ((v.fixed ?? []).length && !usedVehicles.has(v.id))
      problems.push(`vehicle ${v.id}: its fixed stops are missing`);
  for (const id of info.keys()) {
    const n = seen.get(id) ?? 0;
    if (n !== 1) problems.push(`job ${id}: appears ${n} times`);
  }
  for (const id of seen.keys()) if (!info.has(id)) problems.push(`unknown job ${id} in the solution`);
  if (Math.abs(total - sol.distance) > EPS * Math.max(1, total))
    problems.push(`total distance ${sol.distance}, recomputed ${total}`);
  return problems;
}
