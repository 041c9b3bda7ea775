import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluate, solve } from "../../src/solver";
import type { Instance, Job, Vehicle } from "../../src/solver/types";
import { checkSolution } from "../../src/solver-check";
import { instanceArb } from "./arbitrary";

// Re-planning from now (contract §29), on the solver alone: fixed prefixes, pinned jobs, and a
// start place and time per vehicle, all part of the instance.

// Six points on a line, 10 apart: location i is at x = 10 i; travel time = distance.
const X = [0, 10, 20, 30, 40, 50];
const line = X.flatMap((a) => X.map((b) => Math.abs(a - b)));
const vehicle = (id: string, extra: Partial<Vehicle> = {}): Vehicle => ({
  id,
  start: 0,
  end: 0,
  shiftStart: 0,
  shiftEnd: 1000,
  capacity: [],
  ...extra,
});
const job = (id: string, location: number, extra: Partial<Job> = {}): Job => ({
  id,
  location,
  service: 1,
  demand: [],
  ...extra,
});
const instance = (vehicles: Vehicle[], jobs: Job[], shipments: Instance["shipments"] = []): Instance => ({
  locations: X.length,
  distances: line,
  durations: line,
  vehicles,
  jobs,
  shipments,
});
const order = (s: ReturnType<typeof solve>, v: string) =>
  s.routes.find((r) => r.vehicle === v)?.stops.map((x) => x.job) ?? [];

describe("solver: fixed prefixes (stops under way stay first, in their order)", () => {
  it("keeps the fixed stops first whatever the seed, and orders the rest after them", () => {
    // Far point first, then a near one: the worst order, yet it stays; b and d follow, best order
    // (an open route: it ends at its last stop).
    const inst = instance(
      [vehicle("v", { end: undefined, fixed: ["far", "near"] })],
      [job("b", 2), job("far", 5), job("near", 1), job("d", 3)],
    );
    for (const seed of [1, 2, 3, 4, 5]) {
      const s = solve(inst, { seed, iterations: 500 });
      expect(checkSolution(inst, s)).toEqual([]);
      const stops = order(s, "v");
      expect(stops.slice(0, 2)).toEqual(["far", "near"]);
      // After near (x = 10): b (20), then d (30), the cheaper of the two orders.
      expect(stops.slice(2)).toEqual(["b", "d"]);
      expect(s.distance).toBe(50 + 40 + 10 + 10);
    }
  });

  it("serves a fixed stop whose window has closed (it is under way), and waits for one not yet open", () => {
    const inst = instance(
      [vehicle("v", { shiftStart: 100, fixed: ["late", "early"] })],
      [job("late", 1, { timeWindow: [0, 5] }), job("early", 2, { timeWindow: [300, 400] }), job("c", 3)],
    );
    const s = solve(inst, { seed: 1, iterations: 200 });
    expect(s.unassigned).toEqual([]);
    const [late, early, c] = s.routes[0].stops;
    expect([late.job, early.job, c.job]).toEqual(["late", "early", "c"]);
    expect(late.start).toBe(110);
    expect(early.start).toBe(300);
    expect(c.arrival).toBe(311);
    expect(checkSolution(inst, s)).toEqual([]);
  });

  it("a job fits only after the fixed stops: one that cannot is unassigned, its reason counted from them", () => {
    // The fixed stop takes until 500; the window of w closes at 400: alone after it, too late.
    const inst = instance(
      [vehicle("v", { fixed: ["busy"] })],
      [job("busy", 1, { service: 490 }), job("w", 1, { timeWindow: [0, 400] })],
    );
    const s = solve(inst, { seed: 1, iterations: 100 });
    expect(order(s, "v")).toEqual(["busy"]);
    expect(s.unassigned).toEqual([{ job: "w", reason: "time_window" }]);
  });

  it("keeps a route of fixed stops only, even past its shift's end", () => {
    const inst = instance(
      [vehicle("v", { shiftEnd: 50, fixed: ["long"] })],
      [job("long", 5, { service: 100 })],
    );
    const s = solve(inst, { seed: 1, iterations: 50 });
    expect(order(s, "v")).toEqual(["long"]);
    expect(checkSolution(inst, s)).toEqual([]);
  });

  it("refuses a fixed job that is unknown, fixed twice, or part of a shipment", () => {
    const pair = [{ pickup: job("p", 1), delivery: job("q", 2), demand: [] }];
    expect(() => solve(instance([vehicle("v", { fixed: ["x"] })], [job("a", 1)]))).toThrow(/Unknown job x/);
    expect(() =>
      solve(instance([vehicle("v", { fixed: ["a"] }), vehicle("w", { fixed: ["a"] })], [job("a", 1)])),
    ).toThrow(/fixed twice/);
    expect(() => solve(instance([vehicle("v", { fixed: ["p"] })], [], pair))).toThrow(/shipment/);
  });
});

describe("solver: pinned jobs (a job that keeps its vehicle; its place on it is free)", () => {
  it("keeps a pinned job on its vehicle though another is nearer, and orders it there", () => {
    // v0 at x = 0, v1 at x = 50; "there" (x = 40) is pinned to v0, "here" (x = 10) free.
    const inst = instance(
      [vehicle("v0"), vehicle("v1", { start: 5, end: 5 })],
      [job("there", 4, { vehicle: "v0" }), job("mid", 2, { vehicle: "v0" }), job("here", 1), job("other", 5)],
    );
    for (const seed of [1, 2, 3]) {
      const s = solve(inst, { seed, iterations: 500 });
      expect(checkSolution(inst, s)).toEqual([]);
      const v0 = order(s, "v0");
      // The pinned two on v0 in the cheaper order out (the route is symmetric: either way, 80).
      expect(v0).toContain("there");
      expect(v0).toContain("mid");
      expect(s.routes.find((r) => r.vehicle === "v0")?.distance).toBe(80);
      expect(order(s, "v1")).not.toContain("there");
    }
  });

  it("pins a shipment's two jobs together; refuses them pinned apart, or to an unknown vehicle", () => {
    const pair = (pv?: string, qv?: string) => [
      { pickup: job("p", 5, { vehicle: pv }), delivery: job("q", 4, { vehicle: qv }), demand: [1] },
    ];
    const two = [vehicle("v0", { capacity: [1] }), vehicle("v1", { start: 5, end: 5, capacity: [1] })];
    const s = solve(instance(two, [], pair("v0", "v0")), { seed: 1, iterations: 200 });
    expect(order(s, "v0")).toEqual(["p", "q"]);
    expect(() => solve(instance(two, [], pair("v0", "v1")))).toThrow(/different vehicles/);
    expect(() => solve(instance(two, [job("a", 1, { vehicle: "nope" })]))).toThrow(/unknown vehicle nope/);
  });

  it("gives a pinned job's reason from its own vehicle (capacity there, though another has room)", () => {
    const inst = instance(
      [vehicle("small", { capacity: [1] }), vehicle("big", { capacity: [9] })],
      [job("heavy", 1, { demand: [5], vehicle: "small" })],
    );
    expect(solve(inst, { seed: 1, iterations: 50 }).unassigned).toEqual([
      { job: "heavy", reason: "capacity" },
    ]);
  });
});

describe("solver: a start place and time per vehicle", () => {
  it("starts where the worker is, when it may, and plans no arrival before that", () => {
    // The worker is at x = 30 at time 1000 ("now"); the route ends at x = 0.
    const inst = instance(
      [vehicle("v", { start: 3, shiftStart: 1000, shiftEnd: 2000 })],
      [
        job("a", 4),
        job("b", 1),
        job("gone", 5, { timeWindow: [0, 1015] }),
        job("open", 2, { timeWindow: [1000, 1500] }),
      ],
    );
    const s = solve(inst, { seed: 1, iterations: 300 });
    expect(checkSolution(inst, s)).toEqual([]);
    // x = 50 is 20 away: the window of "gone" has closed by the time the worker can be there.
    expect(s.unassigned).toEqual([{ job: "gone", reason: "time_window" }]);
    const stops = s.routes[0].stops;
    expect(stops.map((x) => x.job)).toEqual(["a", "open", "b"]);
    for (const x of stops) expect(x.arrival).toBeGreaterThanOrEqual(1000);
    expect(stops[0].arrival).toBe(1010);
    expect(s.routes[0].distance).toBe(10 + 20 + 10 + 10);
  });
});

describe("solver: evaluate (a given order through the same model)", () => {
  it("times given routes as solve times its own, whether or not the order is any good", () => {
    const inst = instance(
      [vehicle("v", { fixed: ["a"] }), vehicle("w", { start: 5, end: 5 })],
      [job("a", 1), job("b", 4), job("c", 2)],
    );
    const [v, w] = evaluate(inst, [
      { vehicle: "v", jobs: ["a", "b", "c"] },
      { vehicle: "w", jobs: [] },
    ]);
    expect(v.stops.map((x) => [x.job, x.arrival, x.distance])).toEqual([
      ["a", 10, 10],
      ["b", 41, 30],
      ["c", 62, 20],
    ]);
    expect(v.distance).toBe(10 + 30 + 20 + 20);
    expect(v.duration).toBe(83);
    expect(w).toEqual({ vehicle: "w", stops: [], distance: 0, duration: 0 });
    // The same order solved with everything fixed comes out the same.
    const fixed = instance([vehicle("v", { fixed: ["a", "b", "c"] })], inst.jobs);
    expect(solve(fixed, { seed: 1, iterations: 10 }).routes[0]).toEqual(v);
    expect(() => evaluate(inst, [{ vehicle: "v", jobs: ["zz"] }])).toThrow(/Unknown job zz/);
  });
});

describe("solver properties with fixed prefixes and pins (fast-check)", () => {
  it("the checker accepts every solution: fixed stops first and kept, pinned jobs on their vehicle", () => {
    const arb = fc
      .tuple(instanceArb, fc.array(fc.nat(), { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 6 }))
      .map(([inst, fixes, pins]) => {
        // No holes near a fixed stop: it is served whatever, the checker would see no path.
        const n = inst.locations;
        const matrix = Array.from(inst.distances, (x, i) =>
          Number.isFinite(x) ? x : Math.abs((i % n) - Math.floor(i / n)) * 7,
        );
        const jobs = inst.jobs.map((j) => ({ ...j }));
        const vehicles = inst.vehicles.map((v) => ({ ...v, fixed: [] as string[] }));
        const taken = new Set<number>();
        for (const f of fixes) {
          const j = f % jobs.length;
          if (taken.has(j)) continue;
          taken.add(j);
          const v = vehicles[f % vehicles.length];
          v.fixed.push(jobs[j].id);
          // Its load is on board already and not checked against the capacity: none here.
          jobs[j].demand = [];
        }
        for (const p of pins) {
          const j = p % jobs.length;
          if (!taken.has(j)) jobs[j].vehicle = vehicles[(p >> 3) % vehicles.length].id;
        }
        return { ...inst, distances: matrix, durations: matrix, jobs, vehicles } as Instance;
      });
    fc.assert(
      fc.property(arb, fc.integer({ min: 1, max: 1000 }), (inst, seed) => {
        const s = solve(inst, { seed, iterations: 150 });
        expect(checkSolution(inst, s)).toEqual([]);
        expect(s.stats.cost).toBeLessThanOrEqual(s.stats.initialCost);
        for (const v of inst.vehicles) {
          const stops = s.routes.find((r) => r.vehicle === v.id)?.stops.map((x) => x.job) ?? [];
          expect(stops.slice(0, v.fixed?.length ?? 0)).toEqual(v.fixed ?? []);
        }
      }),
      { numRuns: 150 },
    );
  });
});
