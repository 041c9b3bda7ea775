import { describe, expect, it } from "vitest";
import { cheapestInsertion, type InsertionRoute } from "../../src/solver/insert";
import type { Instance, Job } from "../../src/solver/types";

// Points on a line, 10 apart: 0, 10, 20, … (travel = distance, one unit a second).
const line = (n: number) => {
  const m: number[] = [];
  for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) m.push(Math.abs(a - b) * 10);
  return m;
};
const job = (id: string, location: number, extra: Partial<Job> = {}): Job => ({
  id,
  location,
  service: 0,
  demand: [1],
  ...extra,
});
const route = (
  jobs: Job[],
  order: string[],
  vehicle: Partial<Instance["vehicles"][number]> = {},
  fixed = 0,
  shipments: Instance["shipments"] = [],
): InsertionRoute => ({
  instance: {
    locations: 8,
    distances: line(8),
    durations: line(8),
    vehicles: [{ id: "v", start: 0, end: 0, shiftStart: 0, shiftEnd: 1000, capacity: [10], ...vehicle }],
    jobs,
    shipments,
    objective: "duration",
  },
  order,
  fixed,
});

describe("cheapest insertion into fixed routes (contract §29)", () => {
  it("goes where it adds the least travel, between the stops it lies between", () => {
    const a = job("a", 1);
    const c = job("c", 3);
    const near = route([a, c, job("new", 2)], ["a", "c"]);
    const far = route([job("x", 6), job("new", 2)], ["x"], { start: 7, end: 7 });
    expect(cheapestInsertion([far, near], "new")).toEqual({ route: 1, position: 1, added: 0 });
  });

  it("keeps the fixed stops first: a stop being done is not preceded", () => {
    // Alone, the new stop (location 1) would go first; the route's first stop is active.
    const r = route([job("active", 5), job("new", 1)], ["active"], {}, 1);
    expect(cheapestInsertion([r], "new")).toMatchObject({ route: 0, position: 1 });
  });

  it("keeps every stop of the route in its window: a place that would make one late is refused", () => {
    // b must start by 30; putting the new stop (location 5) before it makes b start at 80.
    const r = route([job("b", 3, { timeWindow: [0, 30] }), job("new", 5)], ["b"]);
    expect(cheapestInsertion([r], "new")).toMatchObject({ position: 1 });
    const tight = route(
      [job("b", 3, { timeWindow: [0, 30] }), job("new", 5, { timeWindow: [0, 40] })],
      ["b"],
    );
    expect(cheapestInsertion([tight], "new")).toEqual({ reason: "time_window" });
  });

  it("respects capacity and the shift, naming §16's reason when nothing fits", () => {
    const full = route([job("a", 1, { demand: [10] }), job("new", 2)], ["a"]);
    expect(cheapestInsertion([full], "new")).toEqual({ reason: "shift" });
    const heavy = route([job("new", 2, { demand: [11] })], []);
    expect(cheapestInsertion([heavy], "new")).toEqual({ reason: "capacity" });
    const short = route([job("new", 7)], [], { shiftEnd: 100 });
    expect(cheapestInsertion([short], "new")).toEqual({ reason: "shift" });
    expect(cheapestInsertion([], "new")).toEqual({ reason: "shift" });
  });

  it("puts a drop-off after its pick-up already on the route, and only on that route", () => {
    const pickup = job("up", 4, { demand: [] });
    const delivery = job("down", 1, { demand: [] });
    const r = route([job("a", 2)], ["up", "a"], {}, 0, [{ pickup, delivery, demand: [1] }]);
    // Nearest would be before `up` (location 1 is on the way out): after it is the rule.
    const placed = cheapestInsertion([r], "down");
    expect(placed).toMatchObject({ route: 0 });
    expect((placed as { position: number }).position).toBeGreaterThan(0);
  });

  it("inserts a new pick-up and drop-off together, pick-up first", () => {
    const pickup = job("up", 2, { demand: [] });
    const delivery = job("down", 4, { demand: [] });
    const r = route([job("a", 5)], ["a"], {}, 0, [{ pickup, delivery, demand: [1] }]);
    // 0 → up (2) → down (4) → a (5) → 0: on the way, nothing added.
    expect(cheapestInsertion([r], "up")).toEqual({ route: 0, position: 0, added: 0 });
    expect(cheapestInsertion([r], "down")).toEqual({ route: 0, pickupPosition: 0, position: 1, added: 0 });
  });
});
