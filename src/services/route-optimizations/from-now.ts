/**
 * Re-planning from now and keeping assignees (contract §29), as the solver's instance sees them:
 * where and when each route starts, the stops under way it starts with, the vehicle each task
 * that keeps its assignee is pinned to, and each route's current order (the "before" figures).
 * Pure: rows in, maps out; services/route-optimizations/run.ts reads the rows.
 */
import { byPosition } from "../../domain/route-order";
import type { RouteRow } from "../routes";
import type { Point } from "../routing";
import { parseJson, type TaskRow } from "../tasks/types";

/** A finished task on one of the routes: it leaves the problem, its place stays. */
export type FinishedTask = Pick<TaskRow, "id" | "route_id" | "position" | "address" | "state" | "updated_at">;
/** A worker's latest position (D1's `worker_positions`, contract §28), `time` in epoch ms. */
export type LatestPosition = { lon: number; lat: number; time: number };

/** Tasks under way, in the order they stay first on their route: `active` (being done), then `transit`. */
const UNDER_WAY = ["active", "transit"] as const;

export const pointOf = (json: string | null): Point | null => {
  const a = parseJson<{ location?: { coordinates?: [number, number] } | null } | null>(json, null);
  const c = a?.location?.coordinates;
  return c && Number.isFinite(c[0]) && Number.isFinite(c[1]) ? [c[0], c[1]] : null;
};

/**
 * Where each route starts from now: its assignee's latest position when younger than `freshMs`,
 * else its last finished stop (the one finished last; a cancelled task was not necessarily
 * visited, so only completed and failed ones count), else undefined (its start address, as
 * without `from_now`).
 */
export function startsFromNow(
  routes: RouteRow[],
  finished: FinishedTask[],
  positions: Map<string, LatestPosition>,
  now: number,
  freshMs: number,
): Map<string, Point> {
  const out = new Map<string, Point>();
  for (const r of routes) {
    const fix = r.assignee_id ? positions.get(r.assignee_id) : undefined;
    if (fix && fix.time > now - freshMs) {
      out.set(r.id, [fix.lon, fix.lat]);
      continue;
    }
    const visited = finished
      .filter((t) => t.route_id === r.id && t.state !== "cancelled" && pointOf(t.address))
      .sort((a, b) => b.updated_at - a.updated_at || (b.position ?? 0) - (a.position ?? 0));
    if (visited.length) out.set(r.id, pointOf(visited[0].address)!);
  }
  return out;
}

/** Per route, the last position of its finished tasks: the re-planned stops are numbered after it. */
export function finishedOffsets(finished: FinishedTask[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of finished) {
    if (!t.route_id || t.position === null) continue;
    out.set(t.route_id, Math.max(out.get(t.route_id) ?? 0, t.position));
  }
  return out;
}

/** Per route, the ids of its tasks under way, in the order they stay first: active, then transit, each by position. */
export function fixedStops(routes: RouteRow[], tasks: TaskRow[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of routes) {
    const mine = tasks.filter((t) => t.route_id === r.id);
    const ids = UNDER_WAY.flatMap((state) =>
      mine
        .filter((t) => t.state === state)
        .sort(byPosition)
        .map((t) => t.id),
    );
    if (ids.length) out.set(r.id, ids);
  }
  return out;
}

/**
 * With `reassign: false`, the route each assigned task is pinned to (it keeps its assignee):
 * its own route when that is its assignee's, else the first given route of its assignee, else
 * its own route (given, with another or no assignee: the task keeps its assignee there, since
 * nothing is reassigned). Null: none of the given routes can keep its assignee (it is left out).
 */
export function pinnedRoutes(routes: RouteRow[], tasks: TaskRow[]): Map<string, string | null> {
  const out = new Map<string, string | null>();
  const given = new Set(routes.map((r) => r.id));
  for (const t of tasks) {
    if (!t.assignee_id) continue;
    const theirs = routes.filter((r) => r.assignee_id === t.assignee_id).map((r) => r.id);
    const own = t.route_id && given.has(t.route_id) ? t.route_id : null;
    out.set(t.id, own && theirs.includes(own) ? own : (theirs[0] ?? own));
  }
  return out;
}

/**
 * Each route's current order, the "before" of a proposal: the route's tasks of the problem and
 * its assignee's that are on no route (the worker's day as it stands, as a dispatcher sees it;
 * on the first given route of that assignee), its stops under way first (when planning from
 * now: the worker does them first whatever their positions), the others in `position` order.
 */
export function currentOrders(
  routes: RouteRow[],
  tasks: TaskRow[],
  fixed: Map<string, string[]>,
): { vehicle: string; jobs: string[] }[] {
  const firstOf = new Map<string, string>();
  for (const r of routes) if (r.assignee_id && !firstOf.has(r.assignee_id)) firstOf.set(r.assignee_id, r.id);
  const home = (t: TaskRow) => t.route_id ?? (t.assignee_id ? firstOf.get(t.assignee_id) : undefined);
  return routes.map((r) => {
    const first = fixed.get(r.id) ?? [];
    const rest = tasks
      .filter((t) => home(t) === r.id && !first.includes(t.id))
      .sort(byPosition)
      .map((t) => t.id);
    return { vehicle: r.id, jobs: [...first, ...rest] };
  });
}
