/**
 * The fd-route-optimizations job (contract §16). Re-running it after a crash is safe: the solve
 * is deterministic (the seed is derived from the optimization's id), and the tasks are written
 * through task commands whose `external_id`s are derived from the optimization and the task,
 * so a command applied before the crash is answered from what is stored, never applied twice.
 * Re-planning from now (contract §29) reads the clock and the workers' positions as it starts:
 * a re-run plans from its own now.
 */
import { accountEnv } from "../../db/shards";
import { uuidBytes, uuidText } from "../../db/uuid-bytes";
import { nonFieldError } from "../../http/errors";
import { link } from "../../http/serialize";
import type { OptimizationMessage } from "../../queues/route-optimizations/message";
import { evaluate, solve } from "../../solver";
import type { Instance, RouteSolution, Solution } from "../../solver/types";
import { jobPrincipal } from "../auth/job-principal";
import type { Principal } from "../auth/principal";
import { CANCELLED, leaseUntil } from "../jobs/lease";
import { positionFreshMs } from "../positions";
import type { RouteRow } from "../routes";
import { type MatrixProvider, matrixFromEnv } from "../routing";
import { MAX_COMMANDS_PER_REQUEST, submitCommands } from "../task-commands";
import { eventRender } from "../tasks/serialize";
import type { TaskRow } from "../tasks/types";
import {
  type AccountShift,
  type Assignee,
  buildInstance,
  collectPoints,
  dayIn,
  type FromNow,
  memoryLimitMb,
  optimizationBytes,
  SOLVE_OPTIONS,
  seedOf,
  tooBigMessage,
} from "./build";
import {
  currentOrders,
  type FinishedTask,
  finishedOffsets,
  fixedStops,
  type LatestPosition,
  pinnedRoutes,
  startsFromNow,
} from "./from-now";
import { FINAL_TASK_STATES, getOptimization, type OptimizationRow } from "./index";

export async function runOptimization(
  env: Env,
  msg: OptimizationMessage,
  deps: { matrix?: MatrixProvider } = {},
): Promise<void> {
  env = await accountEnv(env, msg.accountId);
  const db = env.DB;
  const row = await db
    .prepare("SELECT * FROM route_optimizations WHERE id = ? AND account_id = ?")
    .bind(msg.optimizationId, msg.accountId)
    .first<OptimizationRow>();
  if (!row || row.state === "completed" || row.state === "failed") return;
  // One step: its start renews the lease for the whole solve (services/jobs).
  await db
    .prepare(
      "UPDATE route_optimizations SET state = 'running', lease_expires_at = ?, lease_attempts = 0, updated_at = ? WHERE id = ? AND state IN ('queued', 'running')",
    )
    .bind(leaseUntil(env), Date.now(), row.id)
    .run();
  const routeIds: string[] = JSON.parse(row.route_ids);
  const now = Date.now();
  const [routesRes, tasksRes, accountRes, finishedRes, positionsRes] = await db.batch([
    db
      .prepare("SELECT * FROM routes WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))")
      .bind(row.account_id, row.route_ids),
    db
      .prepare("SELECT * FROM tasks WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))")
      .bind(row.account_id, row.task_ids),
    db
      .prepare(
        "SELECT timezone, optimize_earliest_start, optimize_latest_end, optimize_visit_duration_margin FROM accounts WHERE id = ?",
      )
      .bind(row.account_id),
    // From now (else `AND ?` binds 0 and nothing is read): the routes' finished tasks (their
    // places stay) and their workers' latest positions.
    db
      .prepare(
        `SELECT id, route_id, position, address, state, updated_at FROM tasks
         WHERE account_id = ? AND route_id IN (SELECT value FROM json_each(?)) AND state IN (${FINAL_TASK_STATES.map((x) => `'${x}'`).join(", ")}) AND ?`,
      )
      .bind(row.account_id, row.route_ids, row.from_now),
    db
      .prepare(
        `SELECT ${uuidText("user_id")} AS user_id, lon, lat, time FROM worker_positions
         WHERE account_id = ${uuidBytes()} AND ? AND user_id IN (SELECT ${uuidBytes("assignee_id")} FROM routes
           WHERE account_id = ? AND assignee_id IS NOT NULL AND id IN (SELECT value FROM json_each(?)))`,
      )
      .bind(row.account_id, row.from_now, row.account_id, row.route_ids),
  ]);
  const routes = routeIds
    .map((id) => (routesRes.results as RouteRow[]).find((r) => r.id === id))
    .filter((r): r is RouteRow => !!r);
  const tasks = (tasksRes.results as TaskRow[]).filter((t) => !FINAL_TASK_STATES.includes(t.state));
  const account = accountRes.results[0] as AccountShift;
  const assigneeIds = [...new Set(routes.map((r) => r.assignee_id).filter((x): x is string => !!x))];
  const { results: roles } = await db
    .prepare(
      "SELECT user_id, vehicle_capacity FROM account_roles WHERE account_id = ? AND user_id IN (SELECT value FROM json_each(?))",
    )
    .bind(row.account_id, JSON.stringify(assigneeIds))
    .all<{ user_id: string } & Assignee>();
  const finished = finishedRes.results as FinishedTask[];
  const fromNow: FromNow | null = row.from_now
    ? {
        now,
        starts: startsFromNow(
          routes,
          finished,
          new Map(
            (positionsRes.results as (LatestPosition & { user_id: string })[]).map((p) => [p.user_id, p]),
          ),
          now,
          positionFreshMs(env),
        ),
        fixed: fixedStops(routes, tasks),
      }
    : null;
  const points = collectPoints(routes, tasks, fromNow?.starts.values());
  // Checked when it was asked for; the routes may have gained tasks since: refused before the table.
  const memoryMb = memoryLimitMb(env);
  if (optimizationBytes(points.points.length, tasks.length) > memoryMb * 2 ** 20) {
    await failOptimization(env, msg, tooBigMessage(points.points.length, tasks.length, memoryMb));
    return;
  }
  const matrix = points.points.length
    ? await (deps.matrix ?? matrixFromEnv(env)).grid(points.points)
    : { size: 0, distances: new Float32Array(0), durations: new Float32Array(0) };
  const built = buildInstance({
    routes,
    tasks,
    account,
    assignees: new Map(roles.map((r) => [r.user_id, r])),
    matrix,
    points,
    ignoreTimeWindows: Boolean(row.ignore_time_windows),
    objective: (row.objective ?? routes[0]?.objective ?? "distance") as "distance",
    today: dayIn(row.created_at, account.timezone),
    fromNow,
    pins: row.reassign ? null : pinnedRoutes(routes, tasks),
  });
  const iterations = Number(env.ROUTE_OPTIMIZATION_ITERATIONS) || 20_000;
  const solution = solve(built.instance, { ...SOLVE_OPTIONS, seed: seedOf(row.id), iterations });
  const result = resultOf(msg.baseUrl, solution, built, beforeOf(built.instance, routes, tasks));
  if (row.apply) {
    // Cancelled during the solve: nothing is applied.
    const still = await db
      .prepare("SELECT state FROM route_optimizations WHERE id = ?")
      .bind(row.id)
      .first<{ state: string }>();
    if (still?.state !== "running") return;
    await applySolution(env, row, routes, tasks, solution, msg.baseUrl, finishedOffsets(finished));
  }
  const statements = [
    db
      .prepare(
        "UPDATE route_optimizations SET state = 'completed', result = ?, updated_at = ? WHERE id = ? AND state = 'running'",
      )
      .bind(JSON.stringify(result), Date.now(), row.id),
  ];
  if (row.apply) {
    for (const r of routes) {
      const solved = solution.routes.find((x) => x.vehicle === r.id);
      statements.push(
        db
          .prepare("UPDATE routes SET distance_m = ?, duration_s = ?, updated_at = ? WHERE id = ?")
          .bind(solved?.distance ?? 0, solved?.duration ?? 0, Date.now(), r.id),
      );
    }
  }
  await db.batch(statements);
}

/**
 * `POST /route_optimizations/{id}/cancel/`: a queued or running optimization reads `failed`
 * ("Cancelled."); a solve under way finishes in the background and applies nothing.
 */
export async function cancelOptimization(env: Env, p: Principal, id: string) {
  const row = await getOptimization(env.DB, p, id);
  if (row.state !== "queued" && row.state !== "running")
    throw nonFieldError(`This route optimization is already ${row.state}.`);
  await failOptimization(env, { accountId: row.account_id, optimizationId: row.id, baseUrl: "" }, CANCELLED);
  return getOptimization(env.DB, p, id);
}

/** Marks an optimization failed (the consumer's last retry, or a job that cannot run). */
export async function failOptimization(env: Env, msg: OptimizationMessage, error: string) {
  env = await accountEnv(env, msg.accountId);
  await env.DB.prepare(
    "UPDATE route_optimizations SET state = 'failed', error_message = ?, updated_at = ? WHERE id = ? AND state IN ('queued', 'running')",
  )
    .bind(error.slice(0, 1000), Date.now(), msg.optimizationId)
    .run();
}

const iso = (s: number) => new Date(s * 1000).toISOString();

/**
 * The routes as they stand, through the same travel model as the solution (the proposal's
 * "before"): each route's tasks of the problem in their current order (from-now.ts).
 */
function beforeOf(instance: Instance, routes: RouteRow[], tasks: TaskRow[]): RouteSolution[] {
  const inProblem = new Set([
    ...instance.jobs.map((j) => j.id),
    ...(instance.shipments ?? []).flatMap((s) => [s.pickup.id, s.delivery.id]),
  ]);
  const fixed = new Map(instance.vehicles.map((v) => [v.id, v.fixed ?? []]));
  return evaluate(
    instance,
    currentOrders(
      routes,
      tasks.filter((t) => inProblem.has(t.id)),
      fixed,
    ),
  );
}

/**
 * The `result` of contract §16: URLs, date-times, metres and seconds; and `before`, the same
 * figures of the routes' current order (each route's task URLs in that order).
 */
export function resultOf(
  baseUrl: string,
  s: Solution,
  built: { noLocation: TaskRow[]; noRoute: TaskRow[] },
  before: RouteSolution[],
) {
  const r = eventRender(baseUrl);
  return {
    routes: s.routes.map((route) => ({
      route: link(r, "routes", route.vehicle),
      stops: route.stops.map((x) => ({
        task: link(r, "tasks", x.job),
        arrival: iso(x.arrival),
        start: iso(x.start),
        departure: iso(x.departure),
        distance_m: x.distance,
        duration_s: x.duration,
      })),
      distance_m: route.distance,
      duration_s: route.duration,
    })),
    unassigned: [
      ...built.noLocation.map((t) => ({ task: link(r, "tasks", t.id), reason: "unreachable" })),
      // With reassign false, no given route keeps its assignee: it fits no shift it may take.
      ...built.noRoute.map((t) => ({ task: link(r, "tasks", t.id), reason: "shift" })),
      ...s.unassigned.map((u) => ({ task: link(r, "tasks", u.job), reason: u.reason })),
    ],
    distance_m: s.distance,
    duration_s: s.duration,
    before: {
      routes: before.map((b) => ({
        route: link(r, "routes", b.vehicle),
        tasks: b.stops.map((x) => link(r, "tasks", x.job)),
        distance_m: b.distance,
        duration_s: b.duration,
      })),
      distance_m: before.reduce((a, b) => a + b.distance, 0),
      duration_s: before.reduce((a, b) => a + b.duration, 0),
    },
  };
}

async function applySolution(
  env: Env,
  row: OptimizationRow,
  routes: RouteRow[],
  tasks: TaskRow[],
  s: Solution,
  baseUrl: string,
  offsets: Map<string, number>,
) {
  // The creator, acting again: the commands are recorded as theirs (contract §16).
  const p = await jobPrincipal(env.DB, row.account_id, row.created_by);
  const r = eventRender(baseUrl);
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const items: Parameters<typeof submitCommands>[2] = [];
  const now = new Date().toISOString();
  for (const solved of s.routes) {
    const route = routes.find((x) => x.id === solved.vehicle)!;
    solved.stops.forEach((stop, i) => {
      const task = byId.get(stop.job)!;
      items.push({
        task: link(r, "tasks", task.id)!,
        external_id: `opt:${row.id}:${task.id}:place`,
        time: now,
        action: "update",
        // After the route's finished tasks (from now: they keep their places at the front).
        task_data: { route: link(r, "routes", route.id), position: (offsets.get(route.id) ?? 0) + i + 1 },
      });
      // With reassign false, an assigned task keeps its assignee whatever route it is on.
      const keeps = !row.reassign && task.assignee_id;
      if (route.assignee_id && task.assignee_id !== route.assignee_id && !keeps) {
        const fresh = ["draft", "scheduled", "unassigned"].includes(task.state);
        items.push({
          task: link(r, "tasks", task.id)!,
          external_id: `opt:${row.id}:${task.id}:assign`,
          time: now,
          action: fresh ? "assign" : "reassign",
          assignee: link(r, "users", route.assignee_id)!,
        });
      }
    });
  }
  for (let i = 0; i < items.length; i += MAX_COMMANDS_PER_REQUEST) {
    await submitCommands(env, p, items.slice(i, i + MAX_COMMANDS_PER_REQUEST), {
      timeZone: null,
      isArray: true,
      baseUrl,
    });
  }
}
