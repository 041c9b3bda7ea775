import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import { isLiLim, parseLiLim } from "../../src/solver/lilim";
import { compile, type Model } from "../../src/solver/model";
import { Route } from "../../src/solver/route";
import { Recreate, scanPair, scanRoute } from "../../src/solver/search";
import type { Instance } from "../../src/solver/types";
import { checkSolution } from "../../src/solver-check";
import { lcg } from "./arbitrary";

/**
 * Random small instances: 4–9 locations; the matrices Euclidean, or asymmetric and without the
 * triangle inequality; windows, service times, 1–2 capacity dimensions, visits and pairs; start
 * and end depots, or none.
 */
function randomInstance(seed: number): Instance {
  const r = lcg(seed);
  const n = 4 + Math.floor(r() * 6);
  const pts = Array.from({ length: n }, () => [r() * 50, r() * 50]);
  const metric = r() < 0.5;
  const distances = pts.flatMap((a, i) =>
    pts.map((b, k) => (i === k ? 0 : metric ? Math.hypot(a[0] - b[0], a[1] - b[1]) : 1 + r() * 60)),
  );
  const durations = r() < 0.5 ? distances : distances.map((d) => d * (0.5 + r()));
  const dims = 1 + Math.floor(r() * 2);
  const cap = () => Array.from({ length: dims }, () => 5 + Math.floor(r() * 15));
  const window = (): [number, number] | undefined => {
    if (r() < 0.3) return undefined;
    const a = Math.floor(r() * 150);
    return [a, a + 10 + Math.floor(r() * 150)];
  };
  const job = (id: string) => ({
    id,
    location: Math.floor(r() * n),
    service: Math.floor(r() * 8),
    timeWindow: window(),
    demand: Array.from({ length: dims }, () => Math.floor(r() * 6)),
  });
  return {
    locations: n,
    distances,
    durations,
    vehicles: [
      {
        id: "v",
        start: r() < 0.8 ? 0 : undefined,
        end: r() < 0.7 ? Math.floor(r() * n) : undefined,
        shiftStart: 0,
        shiftEnd: 250 + r() * 250,
        capacity: cap(),
      },
    ],
    jobs: Array.from({ length: 2 + Math.floor(r() * 5) }, (_, i) => job(`j${i}`)),
    shipments: Array.from({ length: 1 + Math.floor(r() * 3) }, (_, i) => ({
      pickup: job(`p${i}`),
      delivery: job(`d${i}`),
      demand: Array.from({ length: dims }, () => Math.floor(r() * 8)),
    })),
  };
}

/** A feasible route of some of the jobs, the pair (p, q) left out; null if none came out feasible. */
function randomRoute(m: Model, seed: number, p: number, q: number): Route | null {
  const r = lcg(seed * 7919 + 1);
  for (let attempt = 0; attempt < 40; attempt++) {
    const seq: number[] = [];
    for (let j = 0; j < m.J; j++) {
      if (j === p || j === q || m.kind[j] === 2) continue;
      if (r() < 0.6) continue;
      if (m.kind[j] === 0) seq.splice(Math.floor(r() * (seq.length + 1)), 0, j);
      else {
        // A pair: its drop-off somewhere after its pick-up.
        const a = Math.floor(r() * (seq.length + 1));
        seq.splice(a, 0, j);
        seq.splice(a + 1 + Math.floor(r() * (seq.length - a)), 0, m.partner[j]);
      }
    }
    const route = new Route(0);
    route.seq = seq;
    route.update(m);
    if (route.feasible) return route;
  }
  return null;
}

/** Every pair of positions, each route rebuilt from scratch: the cheapest feasible added cost. */
function bruteForce(m: Model, route: Route, p: number, q: number) {
  let best = Number.POSITIVE_INFINITY;
  const n = route.seq.length;
  for (let a = 0; a <= n; a++) {
    for (let b = a; b <= n; b++) {
      const seq = route.seq.slice();
      seq.splice(b, 0, q);
      seq.splice(a, 0, p);
      const x = new Route(0);
      x.seq = seq;
      x.update(m);
      if (x.feasible && x.cost - route.cost < best) best = x.cost - route.cost;
    }
  }
  return best;
}

describe("pair insertion (scanPair) against a brute-force check", () => {
  it("finds the cheapest feasible positions of a pick-up and its drop-off on 600 random routes", () => {
    let compared = 0;
    let feasible = 0;
    for (let seed = 1; compared < 600 && seed < 5000; seed++) {
      const m = compile(randomInstance(seed));
      const pairs = [];
      for (let j = 0; j < m.J; j++) if (m.kind[j] === 1) pairs.push(j);
      const p = pairs[seed % pairs.length];
      const q = m.partner[p];
      const route = randomRoute(m, seed, p, q);
      if (!route) continue;
      compared++;
      const expected = bruteForce(m, route, p, q);
      const g = new Recreate(m, null, 0);
      g.reset();
      scanPair(m, route, 0, p, q, g);
      if (expected === Number.POSITIVE_INFINITY) {
        expect(g.route, `seed ${seed}`).toBe(-1);
        continue;
      }
      feasible++;
      expect(g.route, `seed ${seed}`).toBe(0);
      expect(g.cost, `seed ${seed}`).toBeCloseTo(expected, 6);
      // The positions it names give that cost, feasibly.
      const seq = route.seq.slice();
      seq.splice(g.pos2, 0, q);
      seq.splice(g.pos, 0, p);
      const x = new Route(0);
      x.seq = seq;
      x.update(m);
      expect(x.feasible, `seed ${seed}`).toBe(true);
      expect(x.cost - route.cost, `seed ${seed}`).toBeCloseTo(expected, 6);
    }
    expect(compared).toBe(600);
    // Both outcomes are exercised: routes that can take the pair and routes that cannot.
    expect(feasible).toBeGreaterThan(100);
    expect(compared - feasible).toBeGreaterThan(50);
  });

  it("beats nothing it should not: with a bound already set, it finds only cheaper positions", () => {
    for (let seed = 1; seed < 300; seed++) {
      const m = compile(randomInstance(seed));
      let p = 0;
      while (m.kind[p] !== 1) p++;
      const q = m.partner[p];
      const route = randomRoute(m, seed, p, q);
      if (!route) continue;
      const expected = bruteForce(m, route, p, q);
      const g = new Recreate(m, null, 0);
      g.reset();
      g.cost = expected + 1e-3;
      scanPair(m, route, 0, p, q, g);
      if (expected < Number.POSITIVE_INFINITY) expect(g.cost).toBeCloseTo(expected, 6);
      g.reset();
      g.cost = expected - 1e-3;
      scanPair(m, route, 0, p, q, g);
      expect(g.route).toBe(-1);
    }
  });
});

describe("single-stop insertion (scanRoute, its start found by bisection on the latest starts) against a brute-force check", () => {
  it("finds the cheapest feasible position of a visit on 600 random routes", () => {
    let compared = 0;
    let feasible = 0;
    for (let seed = 1; compared < 600 && seed < 5000; seed++) {
      const m = compile(randomInstance(seed));
      const visits = [];
      for (let j = 0; j < m.J; j++) if (m.kind[j] === 0) visits.push(j);
      const u = visits[seed % visits.length];
      // The route leaves u (and one pair) out.
      let p = 0;
      while (m.kind[p] !== 1) p++;
      const route = randomRoute(m, seed, p, m.partner[p]);
      if (!route) continue;
      const at = route.seq.indexOf(u);
      if (at >= 0) {
        route.seq.splice(at, 1);
        route.update(m);
        if (!route.feasible) continue;
      }
      compared++;
      let expected = Number.POSITIVE_INFINITY;
      for (let k = 0; k <= route.seq.length; k++) {
        const x = new Route(0);
        x.seq = route.seq.slice();
        x.seq.splice(k, 0, u);
        x.update(m);
        if (x.feasible && x.cost - route.cost < expected) expected = x.cost - route.cost;
      }
      const g = new Recreate(m, null, 0);
      g.reset();
      scanRoute(m, route, 0, u, g);
      if (expected === Number.POSITIVE_INFINITY) {
        expect(g.route, `seed ${seed}`).toBe(-1);
        continue;
      }
      feasible++;
      expect(g.cost, `seed ${seed}`).toBeCloseTo(expected, 6);
      const x = new Route(0);
      x.seq = route.seq.slice();
      x.seq.splice(g.pos, 0, u);
      x.update(m);
      expect(x.feasible, `seed ${seed}`).toBe(true);
      expect(x.cost - route.cost, `seed ${seed}`).toBeCloseTo(expected, 6);
    }
    expect(compared).toBe(600);
    expect(feasible).toBeGreaterThan(100);
    expect(compared - feasible).toBeGreaterThan(50);
  });
});

/** Li & Lim's format, four requests: `K Q S`, then `id x y demand ready due service pickup delivery`. */
const LI_LIM = `3\t20\t1
0\t0\t0\t0\t0\t400\t0\t0\t0
1\t10\t0\t10\t0\t100\t5\t0\t2
2\t20\t0\t-10\t0\t200\t5\t1\t0
3\t0\t10\t15\t0\t100\t5\t0\t4
4\t0\t20\t-15\t0\t200\t5\t3\t0
5\t-10\t0\t-5\t0\t300\t5\t7\t0
6\t0\t-10\t8\t0\t300\t5\t0\t8
7\t-20\t0\t5\t0\t300\t5\t0\t5
8\t0\t-20\t-8\t50\t300\t5\t6\t0
`;

describe("Li & Lim's pick-up-and-delivery format", () => {
  it("reads each request as a shipment (pick-up first) and is told apart from Solomon's", () => {
    expect(isLiLim(LI_LIM)).toBe(true);
    expect(isLiLim("C101\n\nVEHICLE\nNUMBER CAPACITY\n 25 200\n")).toBe(false);
    const inst = parseLiLim(LI_LIM);
    expect(inst.vehicles).toHaveLength(3);
    expect(inst.vehicles[0]).toMatchObject({
      start: 0,
      end: 0,
      shiftStart: 0,
      shiftEnd: 400,
      capacity: [20],
    });
    expect(inst.jobs).toEqual([]);
    expect(inst.shipments?.map((s) => [s.pickup.id, s.delivery.id, s.demand[0]])).toEqual([
      ["1", "2", 10],
      ["3", "4", 15],
      ["6", "8", 8],
      ["7", "5", 5],
    ]);
    expect(inst.shipments?.[2].delivery.timeWindow).toEqual([50, 300]);
    expect(inst.distances[1 * inst.locations + 2]).toBe(10);
  });

  it("is solved feasibly: every pair on one route, pick-up first, within capacity and windows", () => {
    const inst = parseLiLim(LI_LIM);
    const solution = solve(inst, { seed: 3, iterations: 300 });
    expect(checkSolution(inst, solution)).toEqual([]);
    expect(solution.unassigned).toEqual([]);
    // Capacity 20: the requests of 10 and 15 cannot ride together.
    const together = solution.routes.some((r) => {
      const ids = r.stops.map((s) => s.job);
      return (
        ids.indexOf("3") >= 0 &&
        ids.indexOf("1") >= 0 &&
        ids.indexOf("1") < ids.indexOf("4") &&
        ids.indexOf("3") < ids.indexOf("2")
      );
    });
    expect(together).toBe(false);
  });
});
