/**
 * Pair relocation, a descent step for pick-up-and-delivery pairs (the "PD-shift" of Li & Lim,
 * "A metaheuristic for the pickup and delivery problem with time windows", IJAIT 12(2), 2003,
 * §3; Nanry & Barnes' "single paired insertion", Transportation Research B 34(2), 2000): one
 * pick-up and its drop-off leave their route and go where they cost least, in their own route or
 * in one of the routes near either of them, made only when the routes get shorter. Tail
 * exchanges (tails.ts) cannot move pairs (a tail would split them); this is their counterpart for
 * shipments, with no annealing: SISR's ruins explore, the step only descends.
 *
 * The best position in a route is found by the recreate's own pair scan (`scanPair`, O(1) per
 * pair of positions from the route's caches) without blinks, with the removal's saving as the
 * bound to beat, so a route that cannot beat it is cut as soon as its lower bound says so.
 */
import { type Model, NONE, PICKUP } from "./model";
import type { Random } from "./random";
import { Route } from "./route";
import { Recreate, scanPair } from "./search";
import type { State } from "./state";

/** Whether pair relocations apply: the instance has pairs and the objective is a sum over routes (not `balance`). */
export function pairsApply(m: Model): boolean {
  if (m.balance) return false;
  for (let j = 0; j < m.J; j++) if (m.kind[j] === PICKUP) return true;
  return false;
}

/** An exchange tries the pairs among either stop's this many nearest neighbours. */
export const EXCHANGE_NEAR = 10;

/**
 * The steps' scratch: a recreate without blinks (rnd null: its routes' marks and scan arrays),
 * marks of the pairs already tried in a step, and two routes to try removals on.
 */
export class PairSearch {
  readonly g: Recreate;
  readonly seen: Int32Array;
  private tick = 0;
  readonly routes = [new Route(0), new Route(0)];

  /**
   * `near`: the neighbours whose routes a relocation tries (the recreate's); `exchangeNear`: the
   * neighbours whose pairs an exchange tries (each costs a copy of its route and two scans).
   */
  constructor(
    m: Model,
    near: number,
    readonly exchangeNear = EXCHANGE_NEAR,
  ) {
    this.g = new Recreate(m, null, near);
    this.seen = new Int32Array(m.J);
  }

  next(): number {
    return ++this.tick;
  }
}

export function pairScratch(m: Model, near: number, exchangeNear = EXCHANGE_NEAR): PairSearch {
  return new PairSearch(m, near, exchangeNear);
}

/**
 * One descent step inside a move the caller began (`State.begin`): a random job; if it is half
 * of a pair on a route, the pair is taken out and put back at its cheapest position in its own
 * route, in the routes of the `near` nearest neighbours of either half, or in an empty vehicle
 * of each class; kept only when that costs less than the removal saved. Returns whether the
 * routes changed; when not, the caller undoes the move (the pair's route was copied and
 * shortened).
 */
export function pairMove(m: Model, s: State, rnd: Random, x: PairSearch, exchange = false): boolean {
  const u = rnd.int(m.J);
  if (s.routeOf[u] < 0 || m.partner[u] === NONE || m.only[u] !== NONE) return false;
  const [p, q] = m.kind[u] === PICKUP ? [u, m.partner[u]] : [m.partner[u], u];
  return exchange ? exchangePair(m, s, p, q, x) : relocatePair(m, s, p, q, x.g);
}

/** `pairMove` for the pair of pick-up `p` and drop-off `q` (on a route). */
export function relocatePair(m: Model, s: State, p: number, q: number, g: Recreate): boolean {
  const a = s.routeOf[p];
  const A = s.writable(a);
  const before = A.cost;
  const ip = A.seq.indexOf(p);
  const iq = A.seq.indexOf(q, ip + 1);
  A.seq.splice(iq, 1);
  A.seq.splice(ip, 1);
  // Changed: the stretch between them (positions ip … iq − 2 of the new sequence).
  A.update(m, ip, iq - 1);
  s.place(p, -1);
  s.place(q, -1);
  // Without the triangle inequality a shorter route can arrive later: nothing is built on it.
  if (!A.feasible) return false;
  const saved = before - A.cost;
  const tick = g.reset();
  // Strictly shorter by more than rounding: a move that only moves rounding would cycle.
  g.cost = saved - 1e-7 * (1 + Math.abs(before));
  g.findEmpty(s);
  g.mark[a] = tick;
  scanPair(m, A, a, p, q, g);
  const near = g.near;
  for (const j of [p, q]) {
    const around = m.neighbours[j];
    const k = Math.min(near, around.length);
    for (let i = 0; i < k; i++) {
      const r = s.routeOf[around[i]];
      if (r < 0 || g.mark[r] === tick) continue;
      g.mark[r] = tick;
      scanPair(m, s.routes[r], r, p, q, g);
    }
  }
  for (let c = 0; c < m.classes.length; c++) {
    const i = g.firstEmpty[c];
    const r = m.classes[c][i];
    if (i < m.classes[c].length && g.mark[r] !== tick) {
      g.mark[r] = tick;
      scanPair(m, s.routes[r], r, p, q, g);
    }
  }
  if (g.route < 0) return false;
  const route = s.writable(g.route);
  route.seq.splice(g.pos2, 0, q);
  route.seq.splice(g.pos, 0, p);
  route.update(m, g.pos, g.pos2 + 2);
  s.place(p, g.route);
  s.place(q, g.route);
  return true;
}

/**
 * Pair exchange, the other descent step for pairs (Li & Lim's "PD-exchange", 2003, §3; Nanry &
 * Barnes' "swapping pairs between routes", 2000): pair X = (p, q) and a pair Y on another route,
 * near X (one of Y's stops among the `near` nearest neighbours of p or q), change routes, each
 * at its cheapest positions in the other's route without it; the best exchange is made when it
 * shortens the routes. A relocation cannot do this when neither route has room for a third pair
 * (a tight window or a full vehicle): the swap frees the room it takes.
 */
export function exchangePair(m: Model, s: State, p: number, q: number, x: PairSearch): boolean {
  const g = x.g;
  const scratch = x.routes;
  const a = s.routeOf[p];
  if (a < 0) return false;
  const A = s.routes[a];
  const without = (R: Route, up: number, down: number, into: Route): Route => {
    const r = R.clone(into);
    const i = r.seq.indexOf(up);
    const k = r.seq.indexOf(down, i + 1);
    r.seq.splice(k, 1);
    r.seq.splice(i, 1);
    r.update(m, i, k - 1);
    return r;
  };
  const A1 = without(A, p, q, scratch[0]);
  if (!A1.feasible) return false;
  const tick = x.next();
  let best = -1e-7 * (1 + A.cost);
  let bestY = -1;
  const near = x.exchangeNear;
  for (const j of [p, q]) {
    const around = m.neighbours[j];
    const k = Math.min(near, around.length);
    for (let i = 0; i < k; i++) {
      const w = around[i];
      const b = s.routeOf[w];
      if (b < 0 || b === a || m.partner[w] === NONE || m.only[w] !== NONE) continue;
      const y = m.kind[w] === PICKUP ? w : m.partner[w];
      // Each pair once per step (its pick-up marks it).
      if (x.seen[y] === tick) continue;
      x.seen[y] = tick;
      const B = s.routes[b];
      const B1 = without(B, y, m.partner[y], scratch[1]);
      if (!B1.feasible) continue;
      const removed = A1.cost - A.cost + B1.cost - B.cost;
      // X into B without Y, then Y into A without X, each bounded by what would still win.
      g.cost = best - removed;
      g.route = -1;
      scanPair(m, B1, b, p, q, g);
      if (g.route < 0) continue;
      const inX = g.cost;
      g.cost = best - removed - inX;
      g.route = -1;
      scanPair(m, A1, a, y, m.partner[y], g);
      if (g.route < 0) continue;
      best = removed + inX + g.cost;
      bestY = y;
    }
  }
  if (bestY < 0) return false;
  // The winner again, its positions this time (two scans), then both routes rebuilt from there.
  const y = bestY;
  const dy = m.partner[y];
  const b = s.routeOf[y];
  const B1 = without(s.routes[b], y, dy, scratch[1]);
  g.cost = Number.POSITIVE_INFINITY;
  scanPair(m, B1, b, p, q, g);
  const [xa, xb] = [g.pos, g.pos2];
  g.cost = Number.POSITIVE_INFINITY;
  scanPair(m, A1, a, y, dy, g);
  const [ya, yb] = [g.pos, g.pos2];
  const seqA = A1.seq.slice();
  seqA.splice(yb, 0, dy);
  seqA.splice(ya, 0, y);
  const seqB = B1.seq.slice();
  seqB.splice(xb, 0, q);
  seqB.splice(xa, 0, p);
  const RA = s.writable(a);
  RA.seq = seqA;
  RA.update(m);
  const RB = s.writable(b);
  RB.seq = seqB;
  RB.update(m);
  s.place(p, b);
  s.place(q, b);
  s.place(y, a);
  s.place(dy, a);
  return true;
}
