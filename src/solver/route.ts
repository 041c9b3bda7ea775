/**
 * One vehicle's route and the caches that make insertion checks constant-time (Savelsbergh's
 * forward/backward time slack): `es[i]`, the earliest service start at stop i given the stops
 * before it, and `ls[i]`, the latest start at stop i that keeps every later stop and the shift
 * end feasible; `pt`, the load after each stop, and `pm`, its prefix maximum; `edge[p]`, the
 * cost of the leg an insertion before position p replaces.
 */
import { DELIVERY, leg, type Model, NONE, PICKUP, VISIT } from "./model";
import { SEG, segments } from "./warp";

export class Route {
  seq: number[] = [];
  /** Per stop (`es`, `ls`) and per leg (`edge`, n + 1 of them); typed arrays with room to grow. */
  es: Float64Array = EMPTY;
  ls: Float64Array = EMPTY;
  edge: Float64Array = EMPTY;
  /** Load after i stops, per dimension: `(n + 1) × D` (index 0 = leaving the start). */
  pt: Float64Array = EMPTY;
  pm: Float64Array = EMPTY;
  cost = 0;
  duration = 0;
  feasible = true;
  /**
   * With penalised time windows only (`Model.warp`, warp.ts): each prefix's and suffix's
   * segment data, the route's time warp, and its distance (`cost` is then the distance plus
   * `Model.warpWeight` × the warp).
   */
  seg: Float64Array = EMPTY;
  warp = 0;
  dist = 0;
  segOk = false;
  /** The sequence length the caches were computed for, and the arrival at the end then. */
  private n = 0;
  private end = 0;
  /** The model's capacity dimensions when the caches were computed (`pt`, `pm` hold (n + 1) × D). */
  private D = 0;

  constructor(public v: number) {}

  /**
   * A copy to modify, caches included: a change then recomputes only what it affects
   * (`update`'s range), and copying the caches costs less than rebuilding them. `into`: a route
   * no longer used, whose arrays are reused (allocating typed arrays for every copy would cost
   * more than the copy).
   */
  clone(into?: Route): Route {
    const r = into ?? new Route(this.v);
    r.v = this.v;
    const seq = this.seq;
    const out = r.seq;
    out.length = seq.length;
    for (let i = 0; i < seq.length; i++) out[i] = seq[i];
    r.n = this.n;
    r.end = this.end;
    r.cost = this.cost;
    r.duration = this.duration;
    r.feasible = this.feasible;
    r.segOk = this.segOk;
    // Only the entries of the `n` stops the caches hold are copied (the arrays have room to grow
    // beyond them, and nothing reads past them: `update` rewrites what it extends).
    const n = this.n;
    const D = this.D;
    if (this.seg.length) {
      r.warp = this.warp;
      r.dist = this.dist;
      if (r.seg.length < this.seg.length) r.seg = new Float64Array(this.seg.length);
      copyInto(r.seg, this.seg, (n + 1) * SEG);
    } else if (r.seg.length) r.seg = EMPTY;
    if (r.es.length < this.es.length) r.es = new Float64Array(this.es.length);
    if (r.ls.length < this.ls.length) r.ls = new Float64Array(this.ls.length);
    if (r.edge.length < this.edge.length) r.edge = new Float64Array(this.edge.length);
    if (r.pt.length < this.pt.length) r.pt = new Float64Array(this.pt.length);
    if (r.pm.length < this.pm.length) r.pm = new Float64Array(this.pm.length);
    copyInto(r.es, this.es, n);
    copyInto(r.ls, this.ls, n);
    copyInto(r.edge, this.edge, n + 1);
    copyInto(r.pt, this.pt, (n + 1) * D);
    copyInto(r.pm, this.pm, (n + 1) * D);
    r.D = D;
    return r;
  }

  /**
   * Recomputes the caches after `seq` changed in positions `lo` … `hi` − 1 only (positions of
   * the new sequence; before `lo` and from `hi` on it is the sequence the caches were computed
   * for, the latter shifted by the change in length). Without a range: everything. The earliest
   * starts are recomputed from `lo` on until one comes out as it was (every later one then
   * does too), the latest starts from `hi` − 1 down until one before `lo` comes out as it was;
   * the results are the same numbers a full recomputation gives. A route that was infeasible
   * is recomputed whole (its feasibility is not known stop by stop). Loads are recomputed
   * whole: a visit's demand changes every load before it.
   */
  update(m: Model, lo = 0, hi = this.seq.length): void {
    const n = this.seq.length;
    const D = m.D;
    const v = this.v;
    const seq = this.seq;
    const oldN = this.n;
    if (!this.feasible || oldN === 0 || n === 0) {
      lo = 0;
      hi = n;
    }
    this.grow(n, D);
    const es = this.es;
    const ls = this.ls;
    const edge = this.edge;
    const shift = n - oldN;
    // The unchanged tail moved to its new positions (its legs after the first of them too).
    if (hi < n && shift !== 0) {
      es.copyWithin(hi, hi - shift, oldN);
      ls.copyWithin(hi, hi - shift, oldN);
      edge.copyWithin(hi + 1, hi + 1 - shift, oldN + 1);
    }
    let t = lo === 0 ? m.vShiftA[v] : es[lo - 1] + m.svc[seq[lo - 1]];
    let prev = lo === 0 ? m.vStart[v] : m.loc[seq[lo - 1]];
    let ok = true;
    let settled = false;
    for (let i = lo; i < n; i++) {
      const j = seq[i];
      const l = m.loc[j];
      edge[i] = leg(m, m.cost, prev, l);
      const arr = t + leg(m, m.time, prev, l);
      const start = Math.max(arr, m.twA[j]);
      if (start > m.twB[j]) ok = false;
      if (i >= hi && start === es[i]) {
        settled = true;
        break;
      }
      es[i] = start;
      t = start + m.svc[j];
      prev = l;
    }
    if (!settled) {
      // An empty route replaces no leg: its first stop pays the way out and back.
      edge[n] = n ? leg(m, m.cost, prev, m.vEnd[v]) : 0;
      this.end = t + leg(m, m.time, prev, m.vEnd[v]);
    }
    if (this.end > m.vShiftB[v]) ok = false;
    let cost = 0;
    for (let i = 0; i < n; i++) cost += edge[i];
    cost += edge[n];
    this.cost = n ? cost : 0;
    this.duration = n ? this.end - m.vShiftA[v] : 0;
    let latest = hi === n ? m.vShiftB[v] : ls[hi];
    let next = hi === n ? m.vEnd[v] : m.loc[seq[hi]];
    for (let i = hi - 1; i >= 0; i--) {
      const j = seq[i];
      const l = m.loc[j];
      const x = Math.min(latest - leg(m, m.time, l, next) - m.svc[j], m.twB[j]);
      if (i < lo && x === ls[i]) break;
      ls[i] = x;
      latest = x;
      next = l;
    }
    this.n = n;
    this.D = D;
    // The loads and their prefix maxima in one pass after the starting load (the same additions
    // in the same order as three passes: the same numbers).
    const kind = m.kind;
    const dem = m.dem;
    const pt = this.pt;
    const pm = this.pm;
    for (let d = 0; d < D; d++) {
      let load = 0;
      for (let i = 0; i < n; i++) {
        const j = seq[i];
        if (kind[j] === VISIT) load += dem[j * D + d];
      }
      const cap = m.vCap[v * D + d] + 1e-9;
      pt[d] = load;
      let max = Number.NEGATIVE_INFINITY;
      if (load > max) max = load;
      pm[d] = max;
      if (load > cap) ok = false;
      for (let i = 0; i < n; i++) {
        const j = seq[i];
        load += kind[j] === VISIT ? -dem[j * D + d] : dem[j * D + d];
        pt[(i + 1) * D + d] = load;
        if (load > max) max = load;
        pm[(i + 1) * D + d] = max;
        if (load > cap) ok = false;
      }
    }
    this.feasible = ok;
    if (m.warp) {
      // A route's segments are valid only when it had them for its old sequence (`segOk`).
      if (this.seg.length < (n + 1) * SEG)
        this.seg = copy(this.seg, (oldN + 1) * SEG, Math.max(8, n * 2 + 1) * SEG);
      const whole = !this.segOk;
      this.warp = whole ? segments(m, v, seq, this.seg) : segments(m, v, seq, this.seg, lo, hi, oldN);
      this.segOk = true;
      this.dist = this.cost;
      this.cost = n ? this.dist + m.warpWeight * this.warp : 0;
    } else this.segOk = false;
  }

  /** Room for `n` stops, grown with room to spare and the old contents kept (a route is not reallocated at every insertion). */
  private grow(n: number, D: number): void {
    // The arrays keep one capacity (a copy's arrays are filled from another route's whole).
    if (this.es.length >= n && this.pt.length >= (this.es.length + 1) * D) return;
    const cap = Math.max(8, n * 2, this.es.length);
    const keep = this.n;
    this.es = copy(this.es, keep, cap);
    this.ls = copy(this.ls, keep, cap);
    this.edge = copy(this.edge, keep + 1, cap + 1);
    this.pt = copy(this.pt, (keep + 1) * D, (cap + 1) * D);
    this.pm = copy(this.pm, (keep + 1) * D, (cap + 1) * D);
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

const EMPTY = new Float64Array(0);

/** `a[0..count)` = `b[0..count)`: a loop, not `set` on a `subarray` view (an object per call). */
function copyInto(a: Float64Array, b: Float64Array, count: number): void {
  for (let i = 0; i < count; i++) a[i] = b[i];
}

/** The first `count` entries of `a` in a new array of `size` (default: as large as `a`). */
function copy(a: Float64Array, count: number, size = a.length): Float64Array {
  const b = new Float64Array(size);
  b.set(a.subarray(0, Math.min(count, a.length)));
  return b;
}

export const isPaired = (m: Model, j: number) => m.kind[j] === PICKUP || m.kind[j] === DELIVERY;
export { NONE };
