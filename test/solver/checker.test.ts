import { describe, expect, it } from "vitest";
import { type CheckedInstance, type CheckedSolution, checkSolution } from "../../src/solver-check";

// Four points on a line, 10 apart: 0 (depot), 1, 2, 3. Travel time = distance.
const pts = [0, 10, 20, 30];
const m = pts.flatMap((a) => pts.map((b) => Math.abs(a - b)));
const inst: CheckedInstance = {
  distances: m,
  durations: m,
  locations: 4,
  vehicles: [
    { id: "v1", start: 0, end: 0, shiftStart: 0, shiftEnd: 100, capacity: [10] },
    { id: "v2", start: 0, end: 0, shiftStart: 0, shiftEnd: 100, capacity: [10] },
  ],
  jobs: [
    { id: "a", location: 1, service: 0, timeWindow: [0, 50], demand: [4] },
    { id: "b", location: 2, service: 0, timeWindow: [0, 50], demand: [4] },
  ],
  shipments: [
    {
      pickup: { id: "p", location: 3, service: 0, demand: [5] },
      delivery: { id: "d", location: 1, service: 0, demand: [5] },
      demand: [5],
    },
  ],
};

const stop = (job: string, t: number) => ({ job, arrival: t, start: t, departure: t });
/** A valid solution: v1 serves a, b; v2 picks up at 3 and drops off at 1. */
const good = (): CheckedSolution => ({
  routes: [
    { vehicle: "v1", stops: [stop("a", 10), stop("b", 20)], distance: 40 },
    { vehicle: "v2", stops: [stop("p", 30), stop("d", 50)], distance: 60 },
  ],
  unassigned: [],
  distance: 100,
});

describe("the feasibility checker (shares no code with the solver)", () => {
  it("accepts a valid solution", () => {
    expect(checkSolution(inst, good())).toEqual([]);
  });

  const broken: [string, (s: CheckedSolution) => void, RegExp][] = [
    ["a job twice", (s) => s.routes[1].stops.push(stop("a", 60)), /job a: appears 2 times/],
    ["a job missing", (s) => s.routes[0].stops.splice(1, 1), /job b: appears 0 times/],
    ["assigned and unassigned", (s) => s.unassigned.push({ job: "a" }), /job a: appears 2 times/],
    [
      "capacity",
      (s) => {
        // 8 on board for a and b, then 5 more picked up before they are delivered: 13 > 10.
        s.routes[0].stops = [stop("p", 30), stop("b", 40), stop("a", 50), stop("d", 50)];
        s.routes[0].distance = 60;
        s.routes.pop();
        s.distance = 60;
      },
      /over capacity after job p/,
    ],
    ["a window", (s) => s.routes[0].stops.splice(0, 2, stop("a", 60), stop("b", 70)), /outside \[0, 50\]/],
    [
      "the shift",
      (s) => {
        s.routes[1].stops[1] = stop("d", 95);
      },
      /after its shift ends/,
    ],
    [
      "arriving too early",
      (s) => {
        s.routes[0].stops[1] = stop("b", 12);
      },
      /before it can/,
    ],
    [
      "drop-off before pick-up",
      (s) => {
        s.routes[1].stops = [stop("d", 10), stop("p", 30)];
      },
      /before its pick-up/,
    ],
    [
      "a pair split over two routes",
      (s) => {
        s.routes[1].stops = [stop("p", 30)];
        s.routes[0].stops.push(stop("d", 30));
      },
      /not on the same route/,
    ],
    [
      "a wrong route total",
      (s) => {
        s.routes[0].distance = 39;
      },
      /distance 39, recomputed 40/,
    ],
    [
      "a wrong grand total",
      (s) => {
        s.distance = 99;
      },
      /total distance 99/,
    ],
    [
      "an unknown vehicle",
      (s) => {
        s.routes[0].vehicle = "v9";
      },
      /unknown vehicle v9/,
    ],
  ];
  for (const [what, breakIt, message] of broken) {
    it(`catches ${what}`, () => {
      const s = good();
      breakIt(s);
      const problems = checkSolution(inst, s);
      expect(
        problems.some((p) => message.test(p)),
        problems.join("\n"),
      ).toBe(true);
    });
  }
});

describe("the checker, re-planning from now (fixed stops, pinned jobs)", () => {
  const fixedInst = (): CheckedInstance => ({
    ...inst,
    vehicles: [{ ...inst.vehicles[0], fixed: ["b"] }, inst.vehicles[1]],
    jobs: [
      { ...inst.jobs[0], vehicle: "v2" },
      { ...inst.jobs[1], timeWindow: [0, 5] },
    ],
  });
  const valid = (): CheckedSolution => ({
    routes: [
      { vehicle: "v1", stops: [stop("b", 20)], distance: 40 },
      { vehicle: "v2", stops: [stop("p", 30), stop("a", 50), stop("d", 50)], distance: 60 },
    ],
    unassigned: [],
    distance: 100,
  });

  it("accepts a fixed stop served after its window closed (it is under way)", () => {
    expect(checkSolution(fixedInst(), valid())).toEqual([]);
  });

  it("catches a fixed stop not first, one left unassigned, and a pinned job on another vehicle", () => {
    const notFirst = valid();
    notFirst.routes[0].stops.unshift(stop("a", 10));
    notFirst.routes[1].stops.splice(1, 1);
    expect(checkSolution(fixedInst(), notFirst).join("\n")).toMatch(/does not start with its fixed stops b/);
    expect(checkSolution(fixedInst(), notFirst).join("\n")).toMatch(/job a: on vehicle v1, pinned to v2/);
    const dropped = valid();
    dropped.routes.shift();
    dropped.unassigned.push({ job: "b" });
    dropped.distance = 60;
    expect(checkSolution(fixedInst(), dropped).join("\n")).toMatch(/job b: fixed, yet unassigned/);
  });
});
