import { describe, expect, it } from "vitest";
import {
  currentOrders,
  type FinishedTask,
  finishedOffsets,
  fixedStops,
  pinnedRoutes,
  startsFromNow,
} from "../../src/services/route-optimizations/from-now";
import type { RouteRow } from "../../src/services/routes";
import type { TaskRow } from "../../src/services/tasks/types";

// The pure rules of re-planning from now (contract §29), row by row.

const address = (lon: number, lat: number) =>
  JSON.stringify({ location: { type: "Point", coordinates: [lon, lat] } });
const route = (id: string, assignee_id: string | null) => ({ id, assignee_id }) as RouteRow;
const task = (id: string, extra: Partial<TaskRow>) =>
  ({
    id,
    state: "assigned",
    position: null,
    created_at: 0,
    route_id: null,
    assignee_id: null,
    ...extra,
  }) as TaskRow;
const finished = (id: string, extra: Partial<FinishedTask>) =>
  ({
    id,
    route_id: "r",
    position: null,
    address: address(1, 1),
    state: "completed",
    updated_at: 0,
    ...extra,
  }) as FinishedTask;

describe("re-planning from now: the rules (services/route-optimizations/from-now.ts)", () => {
  const NOW = 1_000_000_000;
  const FRESH = 15 * 60_000;

  it("starts at a fresh position, else at the stop finished last (a cancelled one was not visited), else nowhere given", () => {
    const routes = [route("r", "w"), route("s", "x"), route("t", null)];
    const done = [
      finished("a", { route_id: "r", address: address(1, 1), updated_at: 10 }),
      finished("b", { route_id: "r", address: address(2, 2), updated_at: 20 }),
      finished("c", { route_id: "r", address: address(3, 3), updated_at: 30, state: "cancelled" }),
      finished("d", { route_id: "s", address: address(4, 4), updated_at: 5, state: "failed" }),
    ];
    const fresh = new Map([["w", { lon: 9, lat: 9, time: NOW - FRESH + 1 }]]);
    expect(startsFromNow(routes, done, fresh, NOW, FRESH)).toEqual(
      new Map([
        ["r", [9, 9]],
        ["s", [4, 4]],
      ]),
    );
    const stale = new Map([["w", { lon: 9, lat: 9, time: NOW - FRESH }]]);
    expect(startsFromNow(routes, done, stale, NOW, FRESH).get("r")).toEqual([2, 2]);
  });

  it("numbers the new plan after each route's last finished position", () => {
    expect(
      finishedOffsets([
        finished("a", { route_id: "r", position: 2 }),
        finished("b", { route_id: "r", position: 5 }),
        finished("c", { route_id: "s", position: null }),
      ]),
    ).toEqual(new Map([["r", 5]]));
  });

  it("fixes the tasks under way first: active, then transit, each by position", () => {
    const tasks = [
      task("t2", { route_id: "r", state: "transit", position: 2 }),
      task("a", { route_id: "r", state: "active", position: 9 }),
      task("t1", { route_id: "r", state: "transit", position: 1 }),
      task("x", { route_id: "r", state: "assigned", position: 0 }),
    ];
    expect(fixedStops([route("r", "w")], tasks)).toEqual(new Map([["r", ["a", "t1", "t2"]]]));
    expect(currentOrders([route("r", "w")], tasks, new Map([["r", ["a", "t1", "t2"]]]))).toEqual([
      { vehicle: "r", jobs: ["a", "t1", "t2", "x"] },
    ]);
    // The worker's tasks on no route count on its first route, in position order; others' do not.
    const loose = [
      task("y", { assignee_id: "w", position: 1 }),
      task("z", { assignee_id: "v", position: 0 }),
      task("u", {}),
    ];
    expect(currentOrders([route("r", "w"), route("s", "w")], [...tasks, ...loose], new Map())).toEqual([
      { vehicle: "r", jobs: ["x", "t1", "y", "t2", "a"] },
      { vehicle: "s", jobs: [] },
    ]);
  });

  it("pins an assigned task to a route of its assignee, its own first; none: null (left out, reason shift)", () => {
    const routes = [route("r", "w"), route("s", "w"), route("u", null)];
    const tasks = [
      task("own", { assignee_id: "w", route_id: "s" }),
      task("elsewhere", { assignee_id: "w", route_id: "other" }),
      task("on-unowned", { assignee_id: "z", route_id: "u" }),
      task("nowhere", { assignee_id: "z" }),
      task("free", {}),
    ];
    expect(pinnedRoutes(routes, tasks)).toEqual(
      new Map([
        ["own", "s"],
        ["elsewhere", "r"],
        ["on-unowned", "u"],
        ["nowhere", null],
      ]),
    );
  });
});
