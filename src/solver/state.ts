/**
 * The search's solution state: the routes, which route each job is on, the unassigned jobs,
 * and the way back when a move is rejected; the cost the annealing compares.
 */
import type { Model } from "./model";
import { Route } from "./route";

/**
 * The current solution, changed in place by each iteration's ruin and recreate and put back
 * when the result is rejected (incremental: nothing is copied but the routes a move changes).
 * A route is never changed in place once a move has ended: the first change in a move copies
 * it and keeps the original for the way back, so a snapshot (the best solution) can share them.
 */
export class State {
  routes: Route[];
  routeOf: Int32Array;
  unassigned: number[];
  cost = 0;
  private move = 1;
  private readonly copiedIn: Int32Array;
  private readonly replaced: number[] = [];
  private readonly originals: Route[] = [];
  private readonly moved: number[] = [];
  private before: number[] = [];
  /** Copies made by rejected moves, referenced nowhere: reused by the next copies. */
  private readonly spare: Route[] = [];
  private costBefore = 0;

  constructor(m: Model, routes?: Route[], routeOf?: Int32Array, unassigned?: number[]) {
    this.routes = routes ?? Array.from({ length: m.V }, (_, v) => new Route(v));
    this.routeOf = routeOf ?? new Int32Array(m.J).fill(-1);
    this.unassigned = unassigned ?? [];
    // A new state's own routes may be changed in place until its first move begins.
    this.copiedIn = new Int32Array(this.routes.length).fill(routes ? 0 : 1);
  }

  /** A copy that shares the routes (they are never changed in place after a move). */
  snapshot(m: Model): State {
    const s = new State(m, this.routes.slice(), this.routeOf.slice(), this.unassigned.slice());
    s.cost = this.cost;
    return s;
  }

  /** Starts a move; returns the jobs unassigned before it (the state's list starts empty). */
  begin(): number[] {
    this.move++;
    this.replaced.length = 0;
    this.originals.length = 0;
    this.moved.length = 0;
    this.before = this.unassigned;
    this.unassigned = [];
    this.costBefore = this.cost;
    return this.before;
  }

  /** The change in the routes' cost since `begin`. */
  routesDelta(): number {
    let d = 0;
    for (let i = 0; i < this.replaced.length; i++)
      d += this.routes[this.replaced[i]].cost - this.originals[i].cost;
    return d;
  }

  /**
   * Whether every route changed since `begin` keeps its windows, shift and capacity. An
   * insertion is checked before it is made, but a removal is not, and where travel times break
   * the triangle inequality (a road matrix may, slightly) the leg that replaces a removed stop
   * can take longer than the two it replaces and make a later stop late; such a move is undone.
   */
  changedFeasible(): boolean {
    for (let i = 0; i < this.replaced.length; i++) if (!this.routes[this.replaced[i]].feasible) return false;
    return true;
  }

  /** Puts the state back as it was at `begin`. */
  undo(): void {
    for (let i = this.moved.length - 2; i >= 0; i -= 2) this.routeOf[this.moved[i]] = this.moved[i + 1];
    for (let i = 0; i < this.replaced.length; i++) {
      this.spare.push(this.routes[this.replaced[i]]);
      this.routes[this.replaced[i]] = this.originals[i];
    }
    this.unassigned = this.before;
    this.cost = this.costBefore;
  }

  /** Job `j` now on route `r` (-1: on none). */
  place(j: number, r: number): void {
    this.moved.push(j, this.routeOf[j]);
    this.routeOf[j] = r;
  }

  /** The route to modify, copied first in this move (the original is kept for `undo`). */
  writable(r: number): Route {
    if (this.copiedIn[r] !== this.move) {
      this.replaced.push(r);
      this.originals.push(this.routes[r]);
      this.routes[r] = this.routes[r].clone(this.spare.pop());
      this.copiedIn[r] = this.move;
    }
    return this.routes[r];
  }
}

/** Unassigned jobs cost more than any set of routes: assigning comes first, the objective second. */
export function penalty(m: Model): number {
  let max = 0;
  for (const x of m.cost) if (Number.isFinite(x) && x > max) max = x;
  return (max + 1) * 4 * (m.J + 2) + 1e6;
}

export function totalCost(m: Model, s: State, unassignedPenalty: number): number {
  let c = 0;
  let longest = 0;
  for (const r of s.routes) {
    c += r.cost;
    if (r.duration > longest) longest = r.duration;
  }
  // Balance: the longest route counts once more than the others (contract §16's `balance`).
  if (m.balance) c += longest * s.routes.length;
  return c + s.unassigned.length * unassignedPenalty;
}
