/**
 * Route optimizations (contract §16): `POST` checks the routes and tasks and queues the job
 * (202, `queued`); the fd-route-optimizations consumer solves it (`running`, then `completed`
 * with `result`, or `failed` with `error_message`) and, with `apply`, writes each task's route
 * and position, and its assignee, through task commands.
 */

import { accountRow, accountRowsNewestFirst } from "../../db/account-rows";
import { type FieldErrors, ValidationError } from "../../http/errors";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { parseHyperlink } from "../../http/urls";
import { uuidv7 } from "../../lib/ids";
import type { OptimizationMessage } from "../../queues/route-optimizations/message";
import type { Principal } from "../auth/principal";
import { leaseUntil } from "../jobs/lease";
import { parseJson } from "../tasks/types";
import { collectPoints, memoryLimitMb, optimizationBytes, tooBigMessage } from "./build";

export const FINAL_TASK_STATES = ["completed", "failed", "cancelled"];

export type OptimizationRow = {
  id: string;
  account_id: string;
  state: "queued" | "running" | "completed" | "failed";
  route_ids: string;
  task_ids: string;
  ignore_time_windows: number;
  objective: string | null;
  apply: number;
  from_now: number;
  reassign: number;
  result: string | null;
  error_message: string;
  created_by: string | null;
  created_at: number;
  updated_at: number;
  lease_expires_at: number | null;
  lease_attempts: number;
  base_url: string | null;
};

export type OptimizationInput = {
  routes: string[];
  tasks?: string[];
  ignore_time_windows?: boolean;
  objective?: "distance" | "duration" | "balance" | null;
  apply?: boolean;
  from_now?: boolean;
  reassign?: boolean;
};

const limit = (value: string | undefined, fallback: number) => {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

export function serializeOptimization(r: RenderCtx, row: OptimizationRow) {
  return {
    id: row.id,
    url: link(r, "route_optimizations", row.id),
    account: link(r, "accounts", row.account_id),
    routes: parseJson<string[]>(row.route_ids, []).map((id) => link(r, "routes", id)),
    tasks: parseJson<string[]>(row.task_ids, []).map((id) => link(r, "tasks", id)),
    ignore_time_windows: Boolean(row.ignore_time_windows),
    objective: row.objective,
    apply: Boolean(row.apply),
    from_now: Boolean(row.from_now),
    reassign: Boolean(row.reassign),
    state: row.state,
    result: parseJson<unknown>(row.result, null),
    error_message: row.error_message,
    created_by: link(r, "users", row.created_by),
    created_at: ts(r, row.created_at),
    updated_at: ts(r, row.updated_at),
  };
}

export async function getOptimization(db: D1Database, p: Principal, id: string) {
  return accountRow<OptimizationRow>(db, "route_optimizations", p.accountId, id);
}

export function listOptimizations(
  db: D1Database,
  p: Principal,
  q: { cursor?: string; page_size?: number },
  url: string,
) {
  return accountRowsNewestFirst<OptimizationRow>(db, "route_optimizations", p.accountId, q, url);
}

/**
 * Checks and queues an optimization. The routes must be the account's and not archived; the
 * listed tasks the account's, not in a final state, and on no route outside the ones given;
 * at most MAX_OPTIMIZATION_VISITS visits and MAX_OPTIMIZATION_ROUTES routes (contract §22).
 */
export async function createOptimization(env: Env, p: Principal, input: OptimizationInput, baseUrl: string) {
  const errors: FieldErrors = {};
  const maxRoutes = limit(env.MAX_OPTIMIZATION_ROUTES, 200);
  const maxVisits = limit(env.MAX_OPTIMIZATION_VISITS, 2000);
  const routeIds = [...new Set(input.routes.map((u) => parseHyperlink(u, "routes")))];
  if (routeIds.includes(null)) errors.routes = ["Invalid hyperlink - No URL match."];
  if (!input.routes.length) errors.routes = ["This list may not be empty."];
  if (routeIds.length > maxRoutes) errors.routes = [`Too many routes: at most ${maxRoutes}.`];
  const listed = [...new Set((input.tasks ?? []).map((u) => parseHyperlink(u, "tasks")))];
  if (listed.includes(null)) errors.tasks = ["Invalid hyperlink - No URL match."];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const ids = routeIds as string[];
  const [routes, onRoutes, extra] = await env.DB.batch([
    env.DB.prepare(
      "SELECT id, state, assignee_id, start_address, end_address FROM routes WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))",
    ).bind(p.accountId, JSON.stringify(ids)),
    env.DB.prepare(
      "SELECT id, state, address FROM tasks WHERE account_id = ? AND route_id IN (SELECT value FROM json_each(?))",
    ).bind(p.accountId, JSON.stringify(ids)),
    env.DB.prepare(
      "SELECT id, state, route_id, assignee_id, address FROM tasks WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))",
    ).bind(p.accountId, JSON.stringify(listed)),
  ]);
  type Located = { id: string; state: string; address: string | null };
  const routeRows = routes.results as {
    id: string;
    state: string;
    assignee_id: string | null;
    start_address: string | null;
    end_address: string | null;
  }[];
  const found = new Map(routeRows.map((r) => [r.id, r.state]));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length) errors.routes = ["Invalid hyperlink - Object does not exist."];
  else if (ids.some((id) => found.get(id) === "archived"))
    errors.routes = ["An archived route cannot be optimized."];
  const extraRows = extra.results as (Located & { route_id: string | null; assignee_id: string | null })[];
  const taskErrors: string[] = [];
  if (extraRows.length !== listed.length) taskErrors.push("Invalid hyperlink - Object does not exist.");
  if (extraRows.some((t) => t.route_id && !ids.includes(t.route_id))) {
    taskErrors.push("A listed task is on a route that is not part of this optimization.");
  }
  if (extraRows.some((t) => FINAL_TASK_STATES.includes(t.state))) {
    taskErrors.push("A listed task is completed, failed or cancelled.");
  }
  // Contract §29: a task under way stays on its route; one that keeps its assignee needs a route of theirs.
  const offRoute = extraRows.filter((t) => !t.route_id || !ids.includes(t.route_id));
  if (input.from_now && offRoute.some((t) => t.state === "active" || t.state === "transit"))
    taskErrors.push("With from_now, a listed task in transit or active must be on one of the given routes.");
  const assignees = new Set(routeRows.map((r) => r.assignee_id).filter(Boolean));
  if (input.reassign === false && offRoute.some((t) => t.assignee_id && !assignees.has(t.assignee_id)))
    taskErrors.push(
      "With reassign false, a listed assigned task needs a route of its assignee among the given routes.",
    );
  if (taskErrors.length) errors.tasks = taskErrors;
  // The routes' own tasks take part unless they are finished.
  const taking = new Set<string>();
  const takingRows: Located[] = [];
  for (const t of [...(onRoutes.results as Located[]), ...extraRows]) {
    if (FINAL_TASK_STATES.includes(t.state) || taking.has(t.id)) continue;
    taking.add(t.id);
    takingRows.push(t);
  }
  if (taking.size > maxVisits) errors.tasks = [`Too many visits: at most ${maxVisits}.`];
  // Memory (contract §16, §22): the travel matrices grow with the square of the distinct
  // locations; an optimization that would not fit in the Worker is refused here, before any work.
  const memoryMb = memoryLimitMb(env);
  const locations = collectPoints(routeRows, takingRows).points.length;
  if (!errors.tasks && optimizationBytes(locations, taking.size) > memoryMb * 2 ** 20)
    errors.tasks = [tooBigMessage(locations, taking.size, memoryMb)];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const now = Date.now();
  const row: OptimizationRow = {
    id: uuidv7(now),
    account_id: p.accountId,
    state: "queued",
    route_ids: JSON.stringify(ids),
    task_ids: JSON.stringify([...taking]),
    ignore_time_windows: input.ignore_time_windows ? 1 : 0,
    objective: input.objective ?? null,
    apply: input.apply === false ? 0 : 1,
    from_now: input.from_now ? 1 : 0,
    reassign: input.reassign === false ? 0 : 1,
    result: null,
    error_message: "",
    created_by: p.userId,
    created_at: now,
    updated_at: now,
    lease_expires_at: leaseUntil(env, now),
    lease_attempts: 0,
    base_url: baseUrl,
  };
  const keys = Object.keys(row) as (keyof OptimizationRow)[];
  await env.DB.prepare(
    `INSERT INTO route_optimizations (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`,
  )
    .bind(...keys.map((k) => row[k]))
    .run();
  const message: OptimizationMessage = { accountId: p.accountId, optimizationId: row.id, baseUrl };
  await env.OPTIMIZATIONS_QUEUE.send(message);
  return row;
}
