/**
 * Regret-k insertion of pick-up/drop-off pairs, a second recreate beside SISR's greedy one
 * (Ropke & Pisinger, "An adaptive large neighborhood search heuristic for the pickup and delivery
 * problem with time windows", Transportation Science 40(4), 2006, §4.2.2). Greedy insertion puts
 * the cheapest request in first; regret-k puts in first the request that loses most by waiting:
 * the largest sum, over its 2nd … k-th best routes, of how much more it costs there than in its
 * best route. A request that fits in fewer than k routes comes before every one that fits in more
 * (the paper's tie rule: fewer routes left, fewer chances). Each request's cheapest insertion in
 * each route is cached and only the route that changed is scanned again after an insertion (the
 * paper's implementation note), each scan by the recreate's own O(1)-per-position `scanPair`.
 * The paper's noise is replaced by SISR's blinks (drawn inside `scanPair`), which the annealing
 * already relies on to diversify.
 */
import { type Model, NONE, PICKUP, VISIT } from "./model";
import { type Recreate, recreate, scanPair } from "./search";
import type { State } from "./state";

/** Above any route set's cost difference: a missing k-th route outweighs any regret. */
const MISSING = 1e15;

/**
 * Inserts `jobs` (pairs by regret-k, then single visits by the greedy recreate); what fits
 * nowhere stays unassigned.
 */
export function regretRecreate(m: Model, s: State, jobs: number[], g: Recreate, k: number): void {
  const pick: number[] = [];
  const singles: number[] = [];
  const seen = new Set<number>();
  for (const j of jobs) {
    if (s.routeOf[j] >= 0) continue;
    if (m.kind[j] === VISIT) {
      singles.push(j);
      continue;
    }
    const p = m.kind[j] === PICKUP ? j : m.partner[j];
    if (seen.has(p)) continue;
    seen.add(p);
    pick.push(p);
  }
  if (pick.length) insertPairs(m, s, pick, g, k);
  if (singles.length) recreate(m, s, singles, g);
}

/** The routes a request may be tried in: every route with stops and each class's first empty vehicle. */
function candidates(m: Model, s: State, g: Recreate): number[] {
  const out: number[] = [];
  for (let r = 0; r < s.routes.length; r++) if (s.routes[r].seq.length) out.push(r);
  if (g.open)
    for (let c = 0; c < m.classes.length; c++) {
      const i = g.firstEmpty[c];
      if (i < m.classes[c].length) out.push(m.classes[c][i]);
    }
  return out;
}

function insertPairs(m: Model, s: State, pick: number[], g: Recreate, k: number): void {
  g.findEmpty(s);
  const V = s.routes.length;
  const R = pick.length;
  // Per request and route: the cheapest insertion's cost (Infinity: none) and its positions.
  const cost = new Float64Array(R * V).fill(Number.POSITIVE_INFINITY);
  const posA = new Int32Array(R * V);
  const posB = new Int32Array(R * V);
  const done = new Uint8Array(R);
  const scan = (i: number, r: number) => {
    const p = pick[i];
    const only = m.only[p];
    const at = i * V + r;
    if (only !== NONE && only !== r) {
      cost[at] = Number.POSITIVE_INFINITY;
      return;
    }
    g.reset();
    scanPair(m, s.routes[r], r, p, m.partner[p], g);
    cost[at] = g.cost;
    posA[at] = g.pos;
    posB[at] = g.pos2;
  };
  // Routes whose column has been scanned (an empty vehicle's only once it is its class's first).
  const known = new Uint8Array(V);
  let routes = candidates(m, s, g);
  for (const r of routes) {
    known[r] = 1;
    for (let i = 0; i < R; i++) scan(i, r);
  }
  const best = new Float64Array(k);
  for (let left = R; left > 0; left--) {
    // The request with the largest regret (ties: the cheaper best insertion, then the lower index).
    let chosen = -1;
    let chosenRegret = Number.NEGATIVE_INFINITY;
    let chosenCost = Number.POSITIVE_INFINITY;
    let chosenRoute = -1;
    for (let i = 0; i < R; i++) {
      if (done[i]) continue;
      best.fill(Number.POSITIVE_INFINITY);
      let bestRoute = -1;
      for (const r of routes) {
        const c = cost[i * V + r];
        if (!(c < best[k - 1])) continue;
        let h = k - 1;
        while (h > 0 && best[h - 1] > c) {
          best[h] = best[h - 1];
          h--;
        }
        best[h] = c;
        if (h === 0) bestRoute = r;
      }
      if (bestRoute < 0) continue;
      let regret = 0;
      for (let h = 1; h < k; h++)
        regret += best[h] === Number.POSITIVE_INFINITY ? MISSING : best[h] - best[0];
      if (regret > chosenRegret || (regret === chosenRegret && best[0] < chosenCost)) {
        chosen = i;
        chosenRegret = regret;
        chosenCost = best[0];
        chosenRoute = bestRoute;
      }
    }
    if (chosen < 0) break;
    done[chosen] = 1;
    const p = pick[chosen];
    const q = m.partner[p];
    const r = chosenRoute;
    const at = chosen * V + r;
    const route = s.writable(r);
    route.seq.splice(posB[at], 0, q);
    route.seq.splice(posA[at], 0, p);
    route.update(m, posA[at], posB[at] + 2);
    s.place(p, r);
    s.place(q, r);
    // Only route r changed: its column again; a vehicle just opened brings its class's next empty one.
    if (route.seq.length === 2) g.moveOn(s, m.vClass[r]);
    routes = candidates(m, s, g);
    for (const x of routes) {
      if (x !== r && known[x]) continue;
      known[x] = 1;
      for (let i = 0; i < R; i++) if (!done[i]) scan(i, x);
    }
  }
  for (let i = 0; i < R; i++) if (!done[i]) s.unassigned.push(pick[i], m.partner[pick[i]]);
}
