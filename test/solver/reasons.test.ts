import { describe, expect, it } from "vitest";
import { solve } from "../../src/solver";
import type { Instance } from "../../src/solver/types";

// Three points: depot 0, a near point 1 (10 away), a point 2 with no path to or from it.
const INF = Number.POSITIVE_INFINITY;
const matrix = [0, 10, INF, 10, 0, INF, INF, INF, 0];
const base = (jobs: Instance["jobs"], vehicle: Partial<Instance["vehicles"][number]> = {}): Instance => ({
  locations: 3,
  distances: matrix,
  durations: matrix,
  vehicles: [{ id: "v", start: 0, end: 0, shiftStart: 0, shiftEnd: 100, capacity: [10], ...vehicle }],
  jobs,
});
const job = (id: string, extra: Partial<Instance["jobs"][number]> = {}) => ({
  id,
  location: 1,
  service: 5,
  demand: [1],
  ...extra,
});
const reasons = (inst: Instance) =>
  Object.fromEntries(solve(inst, { seed: 3, iterations: 50 }).unassigned.map((u) => [u.job, u.reason]));

describe("unassigned reasons (contract §16: the first that holds)", () => {
  it("unreachable: no path to the stop", () => {
    expect(reasons(base([job("far", { location: 2 })]))).toEqual({ far: "unreachable" });
  });

  it("capacity: a demand above every vehicle's capacity", () => {
    expect(reasons(base([job("heavy", { demand: [11] })]))).toEqual({ heavy: "capacity" });
  });

  it("time_window: alone it cannot start inside its window", () => {
    // The window closes before the vehicle can get there (10 after the shift starts at 0).
    expect(reasons(base([job("early", { timeWindow: [0, 5] })]))).toEqual({ early: "time_window" });
  });

  it("shift: alone it does not fit the shift", () => {
    expect(reasons(base([job("long", { service: 95 })]))).toEqual({ long: "shift" });
  });

  it("shift: the shift has no room left for it", () => {
    const r = reasons(base([job("a", { service: 45 }), job("b", { service: 45 })]));
    expect(Object.values(r)).toEqual(["shift"]);
  });

  it("the one that can be served is", () => {
    const s = solve(base([job("ok"), job("far", { location: 2 })]), { seed: 1, iterations: 50 });
    expect(s.routes.map((r) => r.stops.map((x) => x.job))).toEqual([["ok"]]);
    expect(s.routes[0]).toMatchObject({ distance: 20, duration: 25 });
  });
});
