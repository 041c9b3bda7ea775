import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import { compile, type Model, PICKUP } from "../../src/solver/model";
import { Random } from "../../src/solver/random";
import { regretRecreate } from "../../src/solver/regret";
import { Route } from "../../src/solver/route";
import { Recreate, recreate } from "../../src/solver/search";
import { State } from "../../src/solver/state";
import type { Instance } from "../../src/solver/types";
import { checkSolution } from "../../src/solver-check";
import { lcg, randomDistances } from "./arbitrary";

/**
 * 3–7 pick-up/drop-off pairs and a few single visits now and then, three identical vehicles;
 * Euclidean or arbitrary matrices, windows tight or loose, 1–2 capacity dimensions.
 */
function randomInstance(seed: number, singles: boolean): Instance {
  const r = lcg(seed);
  const pairs = 3 + Math.floor(r() * 5);
  const visits = singles ? Math.floor(r() * 3) : 0;
  const n = 2 * pairs + visits;
  const distances = randomDistances(r, n + 1);
  const dims = 1 + Math.floor(r() * 2);
  const capacity = Array.from({ length: dims }, () => 8 + Math.floor(r() * 20));
  const width = r() < 0.5 ? 80 : 600;
  const shiftEnd = 500 + r() * 600;
  const window = () => {
    if (r() < 0.2) return undefined;
    const a = Math.floor(r() * 400);
    return [a, a + width * r()] as [number, number];
  };
  return {
    locations: n + 1,
    distances,
    durations: distances,
    vehicles: ["a", "b", "c"].map((id) => ({ id, start: 0, end: 0, shiftStart: 0, shiftEnd, capacity })),
    jobs: Array.from({ length: visits }, (_, i) => ({
      id: `v${i}`,
      location: 2 * pairs + i + 1,
      service: Math.floor(r() * 10),
      timeWindow: window(),
      demand: Array.from({ length: dims }, () => Math.floor(r() * 5)),
    })),
    shipments: Array.from({ length: pairs }, (_, i) => ({
      pickup: {
        id: `p${i}`,
        location: 2 * i + 1,
        service: Math.floor(r() * 10),
        timeWindow: window(),
        demand: [],
      },
      delivery: {
        id: `d${i}`,
        location: 2 * i + 2,
        service: Math.floor(r() * 10),
        timeWindow: window(),
        demand: [],
      },
      demand: Array.from({ length: dims }, () => Math.floor(r() * 8)),
    })),
  };
}

/** A state with every route empty and its caches computed (as solve's construction starts). */
function fresh(m: Model): State {
  const s = new State(m);
  for (const route of s.routes) route.update(m);
  return s;
}

function rebuilt(m: Model, v: number, seq: number[]): Route {
  const route = new Route(v);
  route.seq = seq;
  route.update(m);
  return route;
}

/**
 * Regret-2/3 insertion by brute force: at each step every remaining pair is put, in every route
 * with stops and the first empty vehicle, at every pair of positions, each route rebuilt from
 * scratch; the pair whose 2nd … k-th best routes cost most more than its best goes in first (a
 * missing route counts above any cost; ties: the cheaper best, then the first pair).
 */
function bruteForce(
  m: Model,
  start: number[][],
  pick: number[],
  k: number,
): { routes: number[][]; left: number[] } {
  const routes = start.map((s) => s.slice());
  const left = pick.slice();
  for (;;) {
    const cands = routes.flatMap((s, v) => (s.length ? [v] : []));
    const empty = routes.findIndex((s) => !s.length);
    if (empty >= 0) cands.push(empty);
    let chosen = -1;
    let chosenRegret = Number.NEGATIVE_INFINITY;
    let chosenCost = Number.POSITIVE_INFINITY;
    let chosenSeq: number[] = [];
    let chosenRoute = -1;
    left.forEach((p, i) => {
      const q = m.partner[p];
      const perRoute: { cost: number; v: number; seq: number[] }[] = [];
      for (const v of cands) {
        const base = rebuilt(m, v, routes[v]);
        let best: { cost: number; v: number; seq: number[] } | null = null;
        for (let a = 0; a <= routes[v].length; a++)
          for (let b = a; b <= routes[v].length; b++) {
            const seq = routes[v].slice();
            seq.splice(b, 0, q);
            seq.splice(a, 0, p);
            const r = rebuilt(m, v, seq);
            if (r.feasible && (!best || r.cost - base.cost < best.cost - 1e-9))
              best = { cost: r.cost - base.cost, v, seq };
          }
        if (best) perRoute.push(best);
      }
      if (!perRoute.length) return;
      perRoute.sort((x, y) => x.cost - y.cost);
      let regret = 0;
      for (let h = 1; h < k; h++) regret += h < perRoute.length ? perRoute[h].cost - perRoute[0].cost : 1e15;
      if (
        regret > chosenRegret + 1e-7 ||
        (Math.abs(regret - chosenRegret) <= 1e-7 && perRoute[0].cost < chosenCost)
      ) {
        chosen = i;
        chosenRegret = regret;
        chosenCost = perRoute[0].cost;
        chosenSeq = perRoute[0].seq;
        chosenRoute = perRoute[0].v;
      }
    });
    if (chosen < 0) return { routes, left };
    routes[chosenRoute] = chosenSeq;
    left.splice(chosen, 1);
  }
}

describe("regret-k insertion of pairs", () => {
  it("inserts the pairs in the order and at the positions brute force finds, and leaves out exactly what fits nowhere", () => {
    let compared = 0;
    let unplaced = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const k = 2 + (seed % 2);
      const m = compile(randomInstance(seed, false));
      const r = lcg(seed * 7);
      // Some pairs already on routes (greedy, no blinks), the rest to insert.
      const pickups = Array.from({ length: m.J }, (_, j) => j).filter((j) => m.kind[j] === PICKUP);
      const first = pickups.filter(() => r() < 0.4);
      const rest = pickups.filter((p) => !first.includes(p));
      const s = fresh(m);
      recreate(m, s, first, new Recreate(m, null, 0));
      const start = s.routes.map((x) => x.seq.slice());
      const pick = rest.concat(s.unassigned.filter((j) => m.kind[j] === PICKUP));
      s.unassigned = [];
      const expected = bruteForce(m, start, pick, k);
      regretRecreate(m, s, pick, new Recreate(m, null, 0), k);
      for (let v = 0; v < m.V; v++) {
        expect(s.routes[v].seq).toEqual(expected.routes[v]);
        expect(s.routes[v].feasible).toBe(true);
      }
      const out = s.unassigned.filter((j) => m.kind[j] === PICKUP).sort((a, b) => a - b);
      expect(out).toEqual(expected.left.slice().sort((a, b) => a - b));
      unplaced += out.length;
      compared++;
    }
    expect(compared).toBe(300);
    // The instances leave some pairs out, so refusals are checked too.
    expect(unplaced).toBeGreaterThan(0);
  });

  it("with blinks and single visits, as solve's recreate: solutions pass the independent checker", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const instance = randomInstance(seed, true);
      const solution = solve(instance, { seed, iterations: 300, regret: 0.5, regretK: 2 + (seed % 2) });
      expect(checkSolution(instance, solution)).toEqual([]);
      // Blinks: the recreate runs with the search's PRNG.
      const m = compile(instance);
      const s = fresh(m);
      const jobs = Array.from({ length: m.J }, (_, j) => j);
      regretRecreate(m, s, jobs, new Recreate(m, new Random(seed), 30), 2);
      for (const route of s.routes) expect(route.feasible).toBe(true);
      expect(s.routes.reduce((x, route) => x + route.seq.length, 0) + s.unassigned.length).toBe(m.J);
    }
  });
});
