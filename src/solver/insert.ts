/**
 * Cheapest insertion of one new stop (or a pick-up and its drop-off) into routes that stay as
 * they are (contract §29's auto-assign): each route keeps its order, its first `fixed` stops
 * (a task being done, one being driven to) stay first, and the new stop goes where it adds the
 * least cost while every stop of the route still fits (windows, capacity, shift, pick-up before
 * drop-off). Pure, like the rest of the solver: instances in, a placement out.
 *
 * Each route is an instance of its own (one vehicle, its stops and the new ones): a day of 50
 * routes of 40 stops is 50 tables of 42 points (88,000 entries) instead of one of 2,000 points
 * (4,000,000), and each check is Savelsbergh's O(1) test on the route's cached slack
 * (route.ts) for a single stop, or a rebuild of the route for each placement of a pair.
 */
import { reasonFor } from "./index";
import { compile, DELIVERY, type Model, NONE, PICKUP } from "./model";
import { Route } from "./route";
import type { Instance, UnassignedReason } from "./types";

export type InsertionRoute = {
  /** One vehicle; its jobs (and shipments) are the route's stops and the new ones. */
  instance: Instance;
  /** The route's stops in order, by job id. */
  order: string[];
  /** Stops at the front that stay there (a new stop goes after them). */
  fixed: number;
};

export type Placement = {
  /** Index of the route in the list given. */
  route: number;
  /** Where the new stop goes in the route's order (0-based); for a pair, where its drop-off goes after the pick-up is placed. */
  position: number;
  /** A pair's pick-up position (before its drop-off is placed). */
  pickupPosition?: number;
  /** The cost the insertion adds (the instance's objective: seconds with `duration`). */
  added: number;
};

/** The stage at which a route refuses a job, the order of contract §16's reasons. */
const STAGES: UnassignedReason[] = ["unreachable", "capacity", "time_window", "shift"];

/**
 * Where `job` (a new job of every instance; with `partner`, a shipment's other half, new too
 * or already on the route) goes at least cost, or why nowhere: the reason is §16's, the first
 * that holds over all the routes (no route at all: `shift`, the shifts have no room).
 */
export function cheapestInsertion(
  routes: InsertionRoute[],
  job: string,
): Placement | { reason: UnassignedReason } {
  return bestPlacement(
    routes.map((r) => {
      // No neighbour lists: nothing here searches (they cost more than the insertion itself).
      const m = compile(r.instance, { neighbours: false });
      const index = new Map(m.ids.map((id, j) => [id, j]));
      const seq = r.order.map((id) => index.get(id)!).filter((j) => j !== undefined);
      return { m, seq, fixed: r.fixed, job: index.get(job) };
    }),
  );
}

/** A route already compiled: its model (one vehicle), its stops as job indexes in order, and the new job's index (none: not on it). */
export type CompiledInsertion = { m: Model; seq: number[]; fixed: number; job: number | undefined };

/**
 * cheapestInsertion on compiled routes: a caller that keeps a route's model between insertions
 * (auto-assign compiles each route once and writes the new stop into a slot of it) places the
 * job without compiling again.
 */
export function bestPlacement(routes: CompiledInsertion[]): Placement | { reason: UnassignedReason } {
  let best: Placement | null = null;
  let stage = -1;
  routes.forEach((r, i) => {
    const { m, job: u } = r;
    if (u === undefined) return;
    const route = new Route(0);
    route.seq = r.seq.slice();
    route.update(m);
    const found = placeIn(m, route, u, Math.min(r.fixed, route.seq.length));
    if (found && (!best || found.added < best.added - 1e-9)) best = { ...found, route: i };
    if (!found) stage = Math.max(stage, STAGES.indexOf(reasonFor(m, u)));
  });
  if (best) return best;
  return { reason: STAGES[stage] ?? "shift" };
}

function placeIn(m: Model, route: Route, u: number, fixed: number): Omit<Placement, "route"> | null {
  const partner = m.partner[u];
  if (partner === NONE) {
    let best: Omit<Placement, "route"> | null = null;
    for (let p = fixed; p <= route.seq.length; p++) {
      const added = route.insertionCost(m, u, p);
      if (Number.isFinite(added) && (!best || added < best.added - 1e-9)) best = { position: p, added };
    }
    return best;
  }
  const onRoute = route.seq.indexOf(partner);
  if (onRoute >= 0) {
    // The other half is on this route already: the new one on its side of it.
    const from = m.kind[u] === DELIVERY ? Math.max(fixed, onRoute + 1) : fixed;
    const to = m.kind[u] === PICKUP ? onRoute : route.seq.length;
    let best: Omit<Placement, "route"> | null = null;
    for (let p = from; p <= to; p++) {
      const added = tryWith(m, route, [[u, p]]);
      if (added !== null && (!best || added < best.added - 1e-9)) best = { position: p, added };
    }
    return best;
  }
  // Both halves new: the pick-up at p, the drop-off after it; a pick-up that does not fit alone
  // at p cannot fit with its drop-off there either (window and shift slack only shrink).
  const [up, down] = m.kind[u] === PICKUP ? [u, partner] : [partner, u];
  let best: Omit<Placement, "route"> | null = null;
  for (let p = fixed; p <= route.seq.length; p++) {
    if (!Number.isFinite(route.insertionCost(m, up, p))) continue;
    for (let q = p + 1; q <= route.seq.length + 1; q++) {
      const added = tryWith(m, route, [
        [up, p],
        [down, q],
      ]);
      if (added !== null && (!best || added < best.added - 1e-9))
        best = { pickupPosition: p, position: q, added };
    }
  }
  if (best && m.kind[u] === PICKUP) return { position: best.pickupPosition!, added: best.added };
  return best;
}

/** The cost added by these insertions made in turn (each position in the route as it then is), or null when the route no longer fits. */
function tryWith(m: Model, route: Route, inserts: [number, number][]): number | null {
  const r = route.clone();
  for (const [j, p] of inserts) r.seq.splice(p, 0, j);
  r.update(m);
  return r.feasible ? r.cost - route.cost : null;
}
