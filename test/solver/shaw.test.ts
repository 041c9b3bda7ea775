import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import { compile, type Model, NONE, PICKUP } from "../../src/solver/model";
import { Random } from "../../src/solver/random";
import { Route } from "../../src/solver/route";
import { Recreate, recreate } from "../../src/solver/search";
import { shawRuin } from "../../src/solver/shaw";
import { State } from "../../src/solver/state";
import type { Instance } from "../../src/solver/types";
import { checkSolution } from "../../src/solver-check";
import { lcg, randomDistances } from "./arbitrary";

/** 3–8 pick-up/drop-off pairs, 0–3 single visits, three identical vehicles; Euclidean or arbitrary matrices. */
function randomInstance(seed: number): Instance {
  const r = lcg(seed);
  const pairs = 3 + Math.floor(r() * 6);
  const visits = Math.floor(r() * 4);
  const n = 2 * pairs + visits;
  const distances = randomDistances(r, n + 1);
  const dims = 1 + Math.floor(r() * 2);
  const capacity = Array.from({ length: dims }, () => 10 + Math.floor(r() * 20));
  const width = r() < 0.5 ? 100 : 700;
  const window = () => {
    if (r() < 0.2) return undefined;
    const a = Math.floor(r() * 400);
    return [a, a + width * r()] as [number, number];
  };
  return {
    locations: n + 1,
    distances,
    durations: distances,
    vehicles: ["a", "b", "c"].map((id) => ({
      id,
      start: 0,
      end: 0,
      shiftStart: 0,
      shiftEnd: 1500,
      capacity,
    })),
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

function rebuilt(m: Model, v: number, seq: number[]): Route {
  const route = new Route(v);
  route.seq = seq;
  route.update(m);
  return route;
}

/**
 * Shaw removal by its definition (Ropke & Pisinger 2006, §4.1.1), from routes rebuilt from scratch:
 * the same draws of the same PRNG, every relatedness computed afresh, the candidates sorted whole.
 */
function bruteForce(m: Model, routes: number[][], seed: number, most: number): number[] {
  const rnd = new Random(seed);
  const start = new Map<number, number>();
  const requests: number[] = [];
  routes.forEach((seq, v) => {
    const route = rebuilt(m, v, seq);
    seq.forEach((j, i) => {
      start.set(j, route.es[i]);
      if (m.partner[j] === NONE || m.kind[j] === PICKUP) requests.push(j);
    });
  });
  if (!requests.length) return [];
  const jobs = Array.from({ length: m.J }, (_, j) => j);
  const dist = Math.max(...jobs.flatMap((i) => jobs.map((j) => m.cost[m.loc[i] * m.L + m.loc[j]])));
  const load = (j: number) =>
    Array.from({ length: m.D }, (_, d) => Math.abs(m.dem[j * m.D + d])).reduce((a, b) => a + b, 0);
  const lo = Math.min(...jobs.map((j) => m.twA[j]).filter(Number.isFinite));
  const hi = Math.max(...jobs.map((j) => m.twB[j]).filter(Number.isFinite));
  const time = hi > lo ? hi - lo : 1;
  const maxLoad = Math.max(...jobs.map(load)) || 1;
  const other = (j: number) => (m.partner[j] === NONE ? j : m.partner[j]);
  const related = (i: number, j: number) =>
    (9 * (m.cost[m.loc[i] * m.L + m.loc[j]] + m.cost[m.loc[other(i)] * m.L + m.loc[other(j)]])) /
      (dist || 1) +
    (3 * (Math.abs(start.get(i)! - start.get(j)!) + Math.abs(start.get(other(i))! - start.get(other(j))!))) /
      time +
    (2 * Math.abs(load(i) - load(j))) / maxLoad;
  const count = Math.min(requests.length, 1 + Math.floor(rnd.next() * Math.max(1, Math.floor(most))));
  const left = requests.slice();
  const taken = left.splice(Math.floor(rnd.next() * left.length), 1);
  while (taken.length < count) {
    const r = taken[Math.floor(rnd.next() * taken.length)];
    left.sort((x, y) => related(r, x) - related(r, y) || x - y);
    taken.push(left.splice(Math.floor(rnd.next() ** 6 * left.length), 1)[0]);
  }
  return taken.flatMap((j) => (m.partner[j] === NONE ? [j] : [j, m.partner[j]]));
}

describe("Shaw removal of related requests", () => {
  it("removes the requests its definition picks, whole, and leaves routes whose caches are a fresh computation's", () => {
    let checked = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const m = compile(randomInstance(seed));
      const s = new State(m);
      for (const route of s.routes) route.update(m);
      recreate(
        m,
        s,
        Array.from({ length: m.J }, (_, j) => j),
        new Recreate(m, null, 0),
      );
      const before = s.routes.map((x) => x.seq.slice());
      const most = 1 + (seed % 6);
      s.begin();
      const removed = shawRuin(m, s, new Random(seed), most);
      const expected = bruteForce(m, before, seed, most);
      expect(removed).toEqual(expected);
      if (!expected.length) continue;
      const requests = removed.filter((j) => m.partner[j] === NONE || m.kind[j] === PICKUP).length;
      expect(requests).toBeGreaterThanOrEqual(1);
      expect(requests).toBeLessThanOrEqual(most);
      const gone = new Set(removed);
      for (let v = 0; v < m.V; v++) {
        const route = s.routes[v];
        const fresh = rebuilt(
          m,
          v,
          before[v].filter((j) => !gone.has(j)),
        );
        expect(route.seq).toEqual(fresh.seq);
        const n = fresh.seq.length;
        expect(Array.from(route.es.subarray(0, n))).toEqual(Array.from(fresh.es.subarray(0, n)));
        expect(Array.from(route.ls.subarray(0, n))).toEqual(Array.from(fresh.ls.subarray(0, n)));
        expect(Array.from(route.edge.subarray(0, n + 1))).toEqual(Array.from(fresh.edge.subarray(0, n + 1)));
        expect(Array.from(route.pt.subarray(0, (n + 1) * m.D))).toEqual(
          Array.from(fresh.pt.subarray(0, (n + 1) * m.D)),
        );
        expect(route.cost).toBe(fresh.cost);
      }
      for (const j of removed) expect(s.routeOf[j]).toBe(-1);
      // Undone, the routes are as they were.
      s.undo();
      expect(s.routes.map((x) => x.seq)).toEqual(before);
      checked++;
    }
    expect(checked).toBeGreaterThan(250);
  });

  it("in solve, alone and with regret insertion: solutions pass the independent checker", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const instance = randomInstance(seed);
      const solution = solve(instance, { seed, iterations: 300, shaw: 0.5, regret: seed % 2 ? 0.5 : 0 });
      expect(checkSolution(instance, solution)).toEqual([]);
    }
  });
});
