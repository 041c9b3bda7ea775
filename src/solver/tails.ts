/**
 * 2-opt* between routes (Potvin and Rousseau, "An exchange heuristic for routeing problems with
 * time windows", JORS 46(12), 1995): two routes exchange their tails, A[0..i) + B[j..) and
 * B[0..j) + A[i..). SISR's string removals move at most a few stops at a time; a tail exchange
 * moves the whole end of a route in one step, which is what lets two crossing routes with tight
 * windows uncross. Each exchange is checked in O(D) from the routes' caches (the earliest start
 * of the prefix's last stop against the latest start of the tail's first stop, Savelsbergh's
 * test, and the loads of prefix and tail), so a move can try every exchange that would put a
 * stop next to one of its nearest neighbours and take the best that shortens the routes.
 *
 * Only between vehicles of one class (same depots, shift and capacity: the tail's latest starts
 * hold on either), and only on instances of standalone visits with no pinned or fixed stops (a
 * tail of pick-ups without their drop-offs, or a pinned stop, could not move).
 */
import { leg, type Model, NONE, VISIT } from "./model";
import type { Random } from "./random";
import type { Route } from "./route";
import type { State } from "./state";

/** Whether tail exchanges apply to this instance's jobs and vehicles. */
export function tailsApply(m: Model): boolean {
  for (let j = 0; j < m.J; j++) if (m.kind[j] !== VISIT || m.only[j] !== NONE) return false;
  for (let v = 0; v < m.V; v++) if (m.fixedCount[v]) return false;
  return !m.balance;
}

/**
 * The cost change of exchanging the tails A[i..) and B[j..) (A and B of one vehicle class,
 * neither empty), or Infinity when a route would be infeasible or empty, or nothing changes.
 */
export function tailDelta(m: Model, A: Route, i: number, B: Route, j: number): number {
  const nA = A.seq.length;
  const nB = B.seq.length;
  if (i + nB - j === 0 || j + nA - i === 0) return Number.POSITIVE_INFINITY;
  if ((i === 0 && j === 0) || (i === nA && j === nB)) return Number.POSITIVE_INFINITY;
  const D = m.D;
  // Standalone visits: the load leaving the start is the route's whole demand, and only falls.
  for (let d = 0; d < D; d++) {
    if (A.pt[d] - A.pt[i * D + d] + B.pt[j * D + d] > m.vCap[A.v * D + d] + 1e-9)
      return Number.POSITIVE_INFINITY;
    if (B.pt[d] - B.pt[j * D + d] + A.pt[i * D + d] > m.vCap[B.v * D + d] + 1e-9)
      return Number.POSITIVE_INFINITY;
  }
  if (!joins(m, A, i, B, j) || !joins(m, B, j, A, i)) return Number.POSITIVE_INFINITY;
  const x = i ? m.loc[A.seq[i - 1]] : m.vStart[A.v];
  const y = j < nB ? m.loc[B.seq[j]] : m.vEnd[A.v];
  const x2 = j ? m.loc[B.seq[j - 1]] : m.vStart[B.v];
  const y2 = i < nA ? m.loc[A.seq[i]] : m.vEnd[B.v];
  return leg(m, m.cost, x, y) + leg(m, m.cost, x2, y2) - A.edge[i] - B.edge[j];
}

/** Whether P's stops before `i`, then S's from `j`, keep every window and P's shift. */
function joins(m: Model, P: Route, i: number, S: Route, j: number): boolean {
  const v = P.v;
  const dep = i ? P.es[i - 1] + m.svc[P.seq[i - 1]] : m.vShiftA[v];
  const from = i ? m.loc[P.seq[i - 1]] : m.vStart[v];
  if (j === S.seq.length) return dep + leg(m, m.time, from, m.vEnd[v]) <= m.vShiftB[v];
  const k = S.seq[j];
  return Math.max(dep + leg(m, m.time, from, m.loc[k]), m.twA[k]) <= S.ls[j];
}

/** Exchanges the tails A[i..) and B[j..) of routes `a` and `b` in `s`. */
export function applyTails(m: Model, s: State, a: number, i: number, b: number, j: number): void {
  const A = s.writable(a);
  const B = s.writable(b);
  const tailA = A.seq.slice(i);
  const tailB = B.seq.slice(j);
  for (const x of tailB) s.place(x, a);
  for (const x of tailA) s.place(x, b);
  A.seq.length = i;
  for (const x of tailB) A.seq.push(x);
  B.seq.length = j;
  for (const x of tailA) B.seq.push(x);
  A.update(m, i, A.seq.length);
  B.update(m, j, B.seq.length);
}

/**
 * One descent step: a random stop u, and every exchange that puts u right before or right after
 * one of its `near` nearest neighbours on another route of its class; the best that lowers the
 * cost is made. Returns whether one was.
 */
export function tailMove(m: Model, s: State, rnd: Random, near: number): boolean {
  const u = rnd.int(m.J);
  const a = s.routeOf[u];
  if (a < 0) return false;
  const A = s.routes[a];
  const pu = A.seq.indexOf(u);
  const around = m.neighbours[u];
  const k = Math.min(near, around.length);
  let best = -1e-9;
  let bi = -1;
  let bj = -1;
  let bb = -1;
  for (let t = 0; t < k; t++) {
    const w = around[t];
    const b = s.routeOf[w];
    if (b < 0 || b === a || m.vClass[b] !== m.vClass[a]) continue;
    const B = s.routes[b];
    const pw = B.seq.indexOf(w);
    // u then w: A keeps u and takes B from w on.
    const d1 = tailDelta(m, A, pu + 1, B, pw);
    if (d1 < best) {
      best = d1;
      bi = pu + 1;
      bj = pw;
      bb = b;
    }
    // w then u: B keeps w and takes A from u on.
    const d2 = tailDelta(m, A, pu, B, pw + 1);
    if (d2 < best) {
      best = d2;
      bi = pu;
      bj = pw + 1;
      bb = b;
    }
  }
  if (bb < 0) return false;
  applyTails(m, s, a, bi, bb, bj);
  return true;
}
