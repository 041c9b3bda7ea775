/**
 * Auto-assign (contract §29): a task goes to the on-duty worker's route of today where inserting
 * it adds the least travel time while every task of that route still fits (windows, capacity,
 * shift, pick-up before drop-off), at that place, by an `assign` command the system issues
 * (`user` null, `notes` `auto_assign`) that also writes `route` and `position`. When nothing fits
 * the task stays unassigned and `task.auto_assign_failed` says why (§16's reasons).
 *
 * The insertion itself is the solver's (src/solver/insert.ts); this reads the day, builds one
 * small instance per route, and writes the outcome. It runs inside the account's stream object
 * (durable-objects/account-stream), one call at a time per account, so two tasks arriving
 * together never both take the last room of one route: the second is placed against the route
 * as the first left it.
 */
import { accountEnv } from "../../db/shards";
import { taskWriter } from "../../durable-objects/task/client";
import { reverse } from "../../http/urls";
import { uuidv7 } from "../../lib/ids";
import { bestPlacement, cheapestInsertion, type InsertionRoute } from "../../solver/insert";
import type { UnassignedReason } from "../../solver/types";
import { bulkEventStatements } from "../events/outbox";
import { clockOn } from "../route-optimizations/build";
import { insertRoute, type RouteRow } from "../routes";
import { matrixFromEnv } from "../routing";
import type { Actor } from "../task-commands/types";
import {
  type DayCache,
  keepWritten,
  type Lane,
  type LaneRoute,
  type LatestPositions,
  newDayCache,
  OPEN,
  pt,
  readDay,
  type StopRow,
} from "./day";
import {
  chainsOf,
  keepLanes,
  laneInstance,
  laneSignature,
  type Shift,
  slotIn,
  type Travel,
  travelOf,
} from "./lanes";

export { type DayCache, type LatestPositions, newDayCache } from "./day";

export type AutoAssignResult = {
  taskId: string;
  assigneeId: string | null;
  routeId: string | null;
  position: number | null;
  reason: UnassignedReason | null;
};

/** The route order's numbers around index `at` of the located stops: a position between them. */
function positionAt(lane: Lane, order: string[], at: number): number {
  const pos = (id: string | undefined) => lane.stops.find((t) => t.id === id)?.position ?? null;
  const before = at > 0 ? pos(order[at - 1]) : null;
  const after = at < order.length ? pos(order[at]) : null;
  if (before !== null && after !== null) return (before + after) / 2;
  if (after !== null) return before === null && at === 0 ? after - 1 : after;
  if (before !== null) return Math.max(before, lane.lastPosition ?? before) + 1;
  return (lane.lastPosition ?? 0) + 1;
}

const SYSTEM: Omit<Actor, "accountId"> = {
  userId: null,
  role: "system",
  allowWorkerReordering: true,
  transitActiveLimit: null,
  failedReasons: [],
};

/**
 * Inserts `taskIds` in the order given (contract §29), each against the routes as the ones
 * before it left them. A task that is not unassigned is reported as it stands (a repeated call
 * changes nothing); one that fits nowhere keeps its state and, with `announce`, gets its
 * `task.auto_assign_failed` event.
 */
export async function autoAssign(
  env: Env,
  accountId: string,
  taskIds: string[],
  baseUrl: string,
  opts: {
    now?: number;
    announce?: boolean;
    cache?: DayCache;
    strict?: boolean;
    /** The workers' latest positions (the account's stream object holds them). */
    latest: LatestPositions;
  },
): Promise<AutoAssignResult[] | { missing: number[] }> {
  const now = opts.now ?? Date.now();
  env = await accountEnv(env, accountId);
  const {
    account,
    today,
    lanes,
    asked: rows,
    cache,
  } = await readDay(env, accountId, taskIds, now, opts.cache ?? newDayCache(), opts.latest);
  const byId = new Map(rows.map((t) => [t.id, t]));
  // Asked for by a list (`strict`): a task that is not the account's places nothing (400).
  if (opts.strict && taskIds.some((id) => !byId.has(id)))
    return { missing: taskIds.flatMap((id, i) => (byId.has(id) ? [] : [i])) };
  const waiting = taskIds.map((id) => byId.get(id)).filter((t): t is StopRow => t?.state === "unassigned");
  // One shift for every lane (the account's), in epoch seconds: from now, since nothing is
  // planned in the past (contract §29). Read once per call, not per lane: a zone's offset costs
  // an `Intl` formatting.
  const shift: Shift = {
    start: Math.max(now / 1000, clockOn(today, account.optimize_earliest_start, account.timezone)),
    end: clockOn(today, account.optimize_latest_end, account.timezone),
  };
  const instances = new Map<Lane, InsertionRoute>();
  let travel: Promise<Travel> | null = null;
  const instanceOf = async (lane: Lane) => {
    let inst = instances.get(lane);
    if (!inst) {
      travel ??= travelOf(env, lanes, waiting);
      inst = laneInstance(lane, await travel, account, shift);
      instances.set(lane, inst);
    }
    return inst;
  };
  // Single stops (no order's two halves among the tasks or on a route) go into each lane's kept
  // instance (lanes.ts `KeptLane`); a call with a pair builds its instances afresh, both halves in.
  const pairs = waiting.some(
    (t) =>
      t.order_id &&
      (waiting.some((o) => o !== t && o.order_id === t.order_id) ||
        lanes.some((l) => l.stops.some((s) => s.order_id === t.order_id))),
  );
  const laneKey = (lane: Lane) => lane.route?.id ?? `worker:${lane.worker.user_id}`;
  const live = new Set(lanes.map(laneKey));
  for (const k of cache.lanes.keys()) if (!live.has(k)) cache.lanes.delete(k);
  /** The kept lanes, built again where their signature moved, and `task` in each one's slot. */
  const slotted = async (task: StopRow) => {
    const { chains, flat } = chainsOf(lanes);
    const signed = lanes.map((lane) => ({
      lane,
      sig: laneSignature(lane, cache.routes.get(lane.route?.id ?? "")?.key ?? "", account, shift),
    }));
    const stale = signed.filter(({ lane, sig }) => cache.lanes.get(laneKey(lane))?.sig !== sig);
    await keepLanes(env, stale, chains, account, shift, cache.lanes, laneKey);
    const star = await matrixFromEnv(env).star(pt(task)!, flat);
    return lanes.map((lane) => {
      const k = cache.lanes.get(laneKey(lane))!;
      return { kept: k, item: slotIn(k, task, star, chains.get(lane)!.offset, account, shift) };
    });
  };
  const out: AutoAssignResult[] = [];
  const failed: { id: string; reason: UnassignedReason }[] = [];
  const done = new Map<string, AutoAssignResult>();
  for (const id of taskIds) {
    const task = byId.get(id);
    const already = done.get(id);
    if (already) {
      out.push(already);
      continue;
    }
    if (task?.state !== "unassigned") {
      out.push({
        taskId: id,
        assigneeId: task?.assignee_id ?? null,
        routeId: task?.route_id ?? null,
        position: task?.position ?? null,
        reason: null,
      });
      continue;
    }
    const placed = await place(task);
    for (const r of placed) {
      done.set(r.taskId, r);
      if (r.reason) failed.push({ id: r.taskId, reason: r.reason });
    }
    out.push(placed.find((r) => r.taskId === id)!);
  }
  if (opts.announce && failed.length)
    await env.DB.batch(
      bulkEventStatements(
        env.DB,
        accountId,
        failed.map((f) => ({
          type: "task.auto_assign_failed" as const,
          objectId: f.id,
          data: { task: reverse(baseUrl, "tasks", f.id), reason: f.reason },
        })),
        { now, onlyIfExistsIn: "tasks" },
      ),
    );
  return out;

  /** One task (with its order's other half when both wait): its placement, written. */
  async function place(task: StopRow): Promise<AutoAssignResult[]> {
    const none = (reason: UnassignedReason): AutoAssignResult => ({
      taskId: task.id,
      assigneeId: null,
      routeId: null,
      position: null,
      reason,
    });
    if (!pt(task)) return [none("unreachable")];
    // The order's other half on a route already: only that route may take it.
    const partnerLane = task.order_id
      ? lanes.find((l) => l.stops.some((s) => s.order_id === task.order_id && s.id !== task.id))
      : undefined;
    const partnerOpenElsewhere =
      !partnerLane && task.order_id
        ? rows.some((t) => t.order_id === task.order_id && t.id !== task.id && OPEN.includes(t.state))
        : false;
    if (partnerOpenElsewhere) return [none("shift")];
    const candidates = partnerLane ? [partnerLane] : lanes;
    let best: ReturnType<typeof cheapestInsertion>;
    let order: string[];
    if (pairs) {
      const built = await Promise.all(candidates.map(instanceOf));
      best = cheapestInsertion(built, task.id);
      if ("reason" in best) return [none(best.reason)];
      order = built[best.route].order;
    } else {
      const slots = await slotted(task);
      best = bestPlacement(slots.map((s) => s.item));
      if ("reason" in best) return [none(best.reason)];
      order = slots[best.route].kept.order;
    }
    const lane = candidates[best.route];
    const partner =
      best.pickupPosition !== undefined
        ? waiting.find((t) => t.order_id === task.order_id && t.id !== task.id && t.state === "unassigned")
        : undefined;
    const route = lane.route ?? (await newRoute(lane));
    const placements: [StopRow, number][] = [];
    if (partner && best.pickupPosition !== undefined) {
      // The pick-up at its place, then the drop-off at its place in the order as it then is.
      const [up, down] = task.category === "pick_up" ? [task, partner] : [partner, task];
      const p = best.pickupPosition;
      placements.push([up, p], [down, best.position]);
    } else placements.push([task, best.position]);
    const results: AutoAssignResult[] = [];
    for (const [t, at] of placements) {
      const position = positionAt(lane, order, at);
      const written = await assign(t, lane.worker.user_id, route.id, position);
      const ok = written !== null;
      if (written) {
        // The lane as it now is: the next task is placed against it (its kept instance built again).
        order.splice(at, 0, t.id);
        cache.lanes.delete(laneKey(lane));
        const row = {
          ...t,
          state: "assigned" as const,
          assignee_id: lane.worker.user_id,
          route_id: route.id,
          position,
        };
        lane.stops.splice(lane.stops.length, 0, row);
        if (written.version !== undefined && written.updatedAt !== undefined)
          keepWritten(cache, route.id, { ...row, version: written.version, updated_at: written.updatedAt });
        else cache.routes.delete(route.id);
        lane.stops.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
        t.state = "assigned";
      }
      results.push(
        ok
          ? { taskId: t.id, assigneeId: lane.worker.user_id, routeId: route.id, position, reason: null }
          : { taskId: t.id, assigneeId: null, routeId: null, position: null, reason: null },
      );
    }
    return results;
  }

  async function newRoute(lane: Lane): Promise<LaneRoute> {
    const row: RouteRow = {
      id: uuidv7(now),
      account_id: accountId,
      name: `${lane.worker.name} ${today}`,
      assignee_id: lane.worker.user_id,
      date: today,
      state: "active",
      objective: "duration",
      start_address: null,
      end_address: null,
      metafields: "{}",
      distance_m: null,
      duration_s: null,
      created_at: now,
      updated_at: now,
    };
    await insertRoute(env.DB, row);
    lane.route = { id: row.id, start: null, end: null };
    return lane.route;
  }

  /**
   * The system's `assign` with the route and position (contract §29): the task's version and last
   * change after it (unknown: undefined), or null when the task moved meanwhile.
   */
  async function assign(
    t: StopRow,
    worker: string,
    routeId: string,
    position: number,
  ): Promise<{ version?: number; updatedAt?: number } | null> {
    const r = await taskWriter(env, t.id).applyOne({
      actor: { ...SYSTEM, accountId },
      taskId: t.id,
      command: {
        id: uuidv7(now),
        // One per task and version: a retried insertion applies nothing twice (contract §6).
        externalId: `system:auto_assign:${t.id}:${t.version}`,
        taskId: t.id,
        action: "assign",
        time: now,
        assigneeId: worker,
        taskData: { route: reverse(baseUrl, "routes", routeId), position },
        routeId,
        notes: "auto_assign",
        location: null,
        places: true,
      },
      baseUrl,
    });
    if (r.error || r.outcome?.row.state !== "accepted") return null;
    return r.outcome.written ?? {};
  }
}
