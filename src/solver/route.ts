/**
 * One vehicle's route and the caches that make insertion checks constant-time (Savelsbergh's
 * forward/backward time slack): `es[i]`, the earliest service start at stop i given the stops
 * before it, and `ls[i]`, the latest start at stop i that keeps every later stop and the shift
 * end feasible; `pt`, the load after each stop, and `pm`, its prefix maximum; `edge[p]`, the
 * cost of the leg an insertion before position p replaces.
 */
import { DELIVERY, leg, type Model, NONE, PICKUP, VISIT } from "./model";

export class Route {
  seq: number[] = [];
  es: number[] = [];
  ls: number[] = [];
  edge: number[] = [];
  /** Load after i stops, per dimension: `(n + 1) × D` (index 0 = leaving the start). */
  pt: Float64Array = new Float64Array(0);
  pm: Float64Array = new Float64Array(0);
  cost = 0;
  duration = 0;
  feasible = true;

  constructor(readonly v: number) {}

  /**
   * A copy to modify: the sequence only, since a route is copied to be changed and every change
   * ends with `update`, which rebuilds the caches (copying them would be wasted).
   */
  clone(): Route {
    const r = new Route(this.v);
    r.seq = this.seq.slice();
    return r;
  }

  /** Recomputes every cache from `seq`. */
  update(m: Model): void {
    const n = this.seq.length;
    const D = m.D;
    const v = this.v;
    this.es.length = n;
    this.ls.length = n;
    this.edge.length = n + 1;
    let t = m.vShiftA[v];
    let prev = m.vStart[v];
    let cost = 0;
    let ok = true;
    for (let i = 0; i < n; i++) {
      const j = this.seq[i];
      const l = m.loc[j];
      const c = leg(m, m.cost, prev, l);
      this.edge[i] = c;
      cost += c;
      const arr = t + leg(m, m.time, prev, l);
      const start = Math.max(arr, m.twA[j]);
      if (start > m.twB[j]) ok = false;
      this.es[i] = start;
      t = start + m.svc[j];
      prev = l;
    }
    // An empty route replaces no leg: its first stop pays the way out and back.
    this.edge[n] = n ? leg(m, m.cost, prev, m.vEnd[v]) : 0;
    cost += this.edge[n];
    const endArrival = t + leg(m, m.time, prev, m.vEnd[v]);
    if (endArrival > m.vShiftB[v]) ok = false;
    this.cost = n ? cost : 0;
    this.duration = n ? endArrival - m.vShiftA[v] : 0;
    let latest = m.vShiftB[v];
    let next = m.vEnd[v];
    for (let i = n - 1; i >= 0; i--) {
      const j = this.seq[i];
      const l = m.loc[j];
      const byNext = latest - leg(m, m.time, l, next) - m.svc[j];
      this.ls[i] = Math.min(byNext, m.twB[j]);
      latest = this.ls[i];
      next = l;
    }
    const size = (n + 1) * D;
    if (this.pt.length < size) {
      // Grown with room to spare: a route's loads are not reallocated at every insertion.
      this.pt = new Float64Array(size * 2);
      this.pm = new Float64Array(size * 2);
    }
    for (let d = 0; d < D; d++) {
      let load = 0;
      for (let i = 0; i < n; i++) {
        const j = this.seq[i];
        if (m.kind[j] === VISIT) load += m.dem[j * D + d];
      }
      this.pt[d] = load;
      for (let i = 0; i < n; i++) {
        const j = this.seq[i];
        const change = m.kind[j] === VISIT ? -m.dem[j * D + d] : m.dem[j * D + d];
        load += change;
        this.pt[(i + 1) * D + d] = load;
      }
      let max = Number.NEGATIVE_INFINITY;
      for (let i = 0; i <= n; i++) {
        const x = this.pt[i * D + d];
        if (x > max) max = x;
        this.pm[i * D + d] = max;
        if (x > m.vCap[v * D + d] + 1e-9) ok = false;
      }
    }
    this.feasible = ok;
  }

  /**
   * The added cost of visit `u` before position `p` (0..n), or Infinity when the visit does not
   * fit there (window, shift, capacity, or inside the fixed prefix): O(D).
   */
  insertionCost(m: Model, u: number, p: number): number {
    const v = this.v;
    const n = this.seq.length;
    const D = m.D;
    // Nothing goes before a fixed prefix (stops under way).
    if (p < m.fixedCount[v]) return Number.POSITIVE_INFINITY;
    for (let d = 0; d < D; d++) {
      if (this.pm[p * D + d] + m.dem[u * D + d] > m.vCap[v * D + d] + 1e-9) return Number.POSITIVE_INFINITY;
    }
    const prevLoc = p === 0 ? m.vStart[v] : m.loc[this.seq[p - 1]];
    const prevDep = p === 0 ? m.vShiftA[v] : this.es[p - 1] + m.svc[this.seq[p - 1]];
    const nextLoc = p === n ? m.vEnd[v] : m.loc[this.seq[p]];
    const latestNext = p === n ? m.vShiftB[v] : this.ls[p];
    const ul = m.loc[u];
    const arr = prevDep + leg(m, m.time, prevLoc, ul);
    const start = Math.max(arr, m.twA[u]);
    if (start > m.twB[u]) return Number.POSITIVE_INFINITY;
    if (start + m.svc[u] + leg(m, m.time, ul, nextLoc) > latestNext) return Number.POSITIVE_INFINITY;
    // An empty route pays its legs from the start and back to the end, and replaces none.
    return (
      leg(m, m.cost, prevLoc, ul) +
      leg(m, m.cost, ul, nextLoc) -
      (n === 0 ? 0 : leg(m, m.cost, prevLoc, nextLoc))
    );
  }
}

export const isPaired = (m: Model, j: number) => m.kind[j] === PICKUP || m.kind[j] === DELIVERY;
export { NONE };
