/**
 * Routes (contract §16): one worker's ordered stops on a date, with the states draft → active →
 * archived. A task joins a route through its `route` field (and `position`); a route lists its
 * tasks by position. Activation assigns the route's waiting tasks to its assignee through task
 * commands recorded for the caller, so nothing bypasses the tasks' single writers.
 */

import { accountRow } from "../../db/account-rows";
import { fieldError, nonFieldError, ValidationError } from "../../http/errors";
import { paginateByCreation } from "../../http/pagination";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { parseHyperlink } from "../../http/urls";
import { uuidv7 } from "../../lib/ids";
import { resolveAddressWithOutcome, serializeAddressWithOutcome } from "../addresses/stored";
import type { AddressInput } from "../addresses/types";
import type { Principal } from "../auth/principal";
import { assertMetafields } from "../metafields";
import { submitCommands } from "../task-commands";
import { eventRender, serializeTask } from "../tasks/serialize";
import { parseJson, type TaskRow } from "../tasks/types";

export const ROUTE_STATES = ["draft", "active", "archived"] as const;
export const ROUTE_OBJECTIVES = ["distance", "duration", "balance"] as const;
export const ROUTE_ACTIONS = {
  activate: ["draft"],
  archive: ["draft", "active"],
  draft: ["active", "archived"],
} as const;
const TARGET = { activate: "active", archive: "archived", draft: "draft" } as const;
export type RouteAction = keyof typeof ROUTE_ACTIONS;

export type RouteRow = {
  id: string;
  account_id: string;
  name: string;
  assignee_id: string | null;
  date: string | null;
  state: (typeof ROUTE_STATES)[number];
  objective: (typeof ROUTE_OBJECTIVES)[number];
  start_address: string | null;
  end_address: string | null;
  metafields: string;
  distance_m: number | null;
  duration_s: number | null;
  created_at: number;
  updated_at: number;
};

export type RouteWrite = {
  name?: string;
  assignee?: string | null;
  date?: string | null;
  objective?: (typeof ROUTE_OBJECTIVES)[number];
  start_address?: AddressInput | null;
  end_address?: AddressInput | null;
  metafields?: Record<string, unknown> | null;
};

const ARCHIVED = "This route is archived: it is read-only (send `draft` to change it).";

export function serializeRoute(r: RenderCtx, row: RouteRow, tasks: TaskRow[], expandTasks = false) {
  return {
    id: row.id,
    url: link(r, "routes", row.id),
    account: link(r, "accounts", row.account_id),
    name: row.name,
    assignee: link(r, "users", row.assignee_id),
    date: row.date,
    state: row.state,
    objective: row.objective,
    start_address: serializeAddressWithOutcome(r, row.start_address),
    end_address: serializeAddressWithOutcome(r, row.end_address),
    metafields: parseJson<Record<string, unknown>>(row.metafields, {}),
    tasks: expandTasks ? tasks.map((t) => serializeTask(r, t)) : tasks.map((t) => link(r, "tasks", t.id)),
    distance_m: row.distance_m,
    duration_s: row.duration_s,
    created_at: ts(r, row.created_at),
    updated_at: ts(r, row.updated_at),
  };
}

export async function getRoute(db: D1Database, p: Principal, id: string): Promise<RouteRow> {
  return accountRow<RouteRow>(db, "routes", p.accountId, id);
}

/** The tasks of each route, by position (then id): one query for a page of routes. */
export async function tasksOfRoutes(db: D1Database, accountId: string, routeIds: string[]) {
  const out = new Map<string, TaskRow[]>(routeIds.map((id) => [id, []]));
  if (!routeIds.length) return out;
  const { results } = await db
    .prepare(
      "SELECT * FROM tasks WHERE account_id = ? AND route_id IN (SELECT value FROM json_each(?)) ORDER BY route_id, position IS NULL, position, id",
    )
    .bind(accountId, JSON.stringify(routeIds))
    .all<TaskRow>();
  for (const t of results) out.get(t.route_id!)?.push(t);
  return out;
}

export function listRoutes(
  db: D1Database,
  p: Principal,
  q: { state?: string; assignee?: string; date?: string; cursor?: string; page_size?: number },
  url: string,
) {
  const where = ["account_id = ?"];
  const params: unknown[] = [p.accountId];
  if (q.state) {
    where.push("state = ?");
    params.push(q.state);
  }
  // Sent empty, a filter is malformed (400), as on every list.
  if (q.assignee !== undefined) {
    const id = parseHyperlink(q.assignee, "users");
    if (!id) throw fieldError("assignee", "Invalid hyperlink - No URL match.");
    where.push("assignee_id = ?");
    params.push(id);
  }
  if (q.date !== undefined) {
    where.push("date = ?");
    params.push(q.date);
  }
  // Workers see the routes assigned to them.
  if (p.role === "worker") {
    where.push("assignee_id = ?");
    params.push(p.userId);
  }
  return paginateByCreation<RouteRow>({
    db,
    select: "SELECT * FROM routes",
    where,
    params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

/** An assignee's start/end addresses (account role, contract §11): copied onto its routes. */
async function roleAddresses(db: D1Database, accountId: string, userId: string) {
  return db
    .prepare(
      "SELECT start_address, end_address FROM account_roles WHERE account_id = ? AND user_id = ? AND state = 'active' AND is_active = 1",
    )
    .bind(accountId, userId)
    .first<{ start_address: string | null; end_address: string | null }>();
}

async function resolveColumns(
  env: Env,
  p: Principal,
  input: RouteWrite,
  current: RouteRow | null,
  method: "post" | "put" | "patch",
) {
  const cols: Partial<RouteRow> = {};
  const put = method !== "patch";
  if (input.name !== undefined || put) cols.name = input.name ?? "";
  if (input.objective !== undefined || put) cols.objective = input.objective ?? "distance";
  if (input.date !== undefined || put) cols.date = input.date ?? null;
  if (input.metafields !== undefined || put) {
    await assertMetafields(
      env.DB,
      p.accountId,
      "routes",
      input.metafields ?? {},
      current ? parseJson(current.metafields, {}) : undefined,
    );
    cols.metafields = JSON.stringify(input.metafields ?? {});
  }
  let assigneeChanged = false;
  if (input.assignee !== undefined || put) {
    const assignee = input.assignee ?? null;
    const id = assignee === null ? null : parseHyperlink(assignee, "users");
    if (assignee !== null && !id) throw fieldError("assignee", "Invalid hyperlink - No URL match.");
    if (id && !(await roleAddresses(env.DB, p.accountId, id)))
      throw fieldError("assignee", "Invalid hyperlink - Object does not exist.");
    assigneeChanged = id !== (current?.assignee_id ?? null);
    cols.assignee_id = id;
  }
  for (const column of ["start_address", "end_address"] as const) {
    const sent = input[column];
    if (sent === null) cols[column] = null;
    else if (sent !== undefined)
      cols[column] = JSON.stringify((await resolveAddressWithOutcome(env, sent)).address);
    else if (assigneeChanged || (put && !current)) {
      // Default: the assignee's account-role address, copied when the assignee is set.
      const role = cols.assignee_id ? await roleAddresses(env.DB, p.accountId, cols.assignee_id) : null;
      cols[column] = role?.[column] ?? null;
    } else if (put) cols[column] = null;
  }
  return cols;
}

export async function createRoute(env: Env, p: Principal, input: RouteWrite): Promise<RouteRow> {
  const cols = await resolveColumns(env, p, input, null, "post");
  const now = Date.now();
  const row: RouteRow = {
    id: uuidv7(now),
    account_id: p.accountId,
    name: cols.name ?? "",
    assignee_id: cols.assignee_id ?? null,
    date: cols.date ?? null,
    state: "draft",
    objective: cols.objective ?? "distance",
    start_address: cols.start_address ?? null,
    end_address: cols.end_address ?? null,
    metafields: cols.metafields ?? "{}",
    distance_m: null,
    duration_s: null,
    created_at: now,
    updated_at: now,
  };
  await insertRoute(env.DB, row);
  return row;
}

/** Stores a new route's row as given (the API's POST and auto-assign's route for a worker without one). */
export async function insertRoute(db: D1Database, row: RouteRow): Promise<void> {
  const keys = Object.keys(row) as (keyof RouteRow)[];
  await db
    .prepare(`INSERT INTO routes (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`)
    .bind(...keys.map((k) => row[k]))
    .run();
}

export async function updateRoute(
  env: Env,
  p: Principal,
  id: string,
  input: RouteWrite,
  method: "patch" | "put",
) {
  const current = await getRoute(env.DB, p, id);
  if (current.state === "archived") throw nonFieldError(ARCHIVED);
  const cols = await resolveColumns(env, p, input, current, method);
  const keys = Object.keys(cols) as (keyof RouteRow)[];
  if (keys.length) {
    await env.DB.prepare(
      `UPDATE routes SET ${keys.map((k) => `${k} = ?`).join(", ")}, updated_at = ? WHERE id = ? AND account_id = ?`,
    )
      .bind(...keys.map((k) => cols[k] ?? null), Date.now(), id, p.accountId)
      .run();
  }
  return getRoute(env.DB, p, id);
}

/** The route goes; its tasks stay, off any route (`route: null`). */
export async function deleteRoute(db: D1Database, p: Principal, id: string) {
  await getRoute(db, p, id);
  const now = Date.now();
  await db.batch([
    db
      .prepare(
        "UPDATE tasks SET route_id = NULL, updated_at = ?, version = version + 1 WHERE account_id = ? AND route_id = ?",
      )
      .bind(now, p.accountId, id),
    db.prepare("DELETE FROM routes WHERE id = ? AND account_id = ?").bind(id, p.accountId),
  ]);
}

/**
 * `activate`, `archive`, `draft` (contract §16). The move is a compare-and-set on the state;
 * activation first assigns the route's unassigned and draft tasks to its assignee with `assign`
 * commands sent as the caller (idempotent keys: a retried activation assigns nothing twice).
 */
export async function routeAction(env: Env, p: Principal, id: string, action: RouteAction, baseUrl: string) {
  const row = await getRoute(env.DB, p, id);
  const allowed = ROUTE_ACTIONS[action] as readonly string[];
  if (!allowed.includes(row.state)) throw nonFieldError(`Cannot ${action} a route in state "${row.state}".`);
  if (action === "activate") {
    if (!row.assignee_id) throw new ValidationError({ assignee: ["An active route needs an assignee."] });
    const tasks = (await tasksOfRoutes(env.DB, p.accountId, [id])).get(id) ?? [];
    if (!tasks.length) throw new ValidationError({ tasks: ["An active route needs at least one task."] });
    const waiting = tasks.filter((t) => t.state === "unassigned" || t.state === "draft");
    if (waiting.length) {
      const r = eventRender(baseUrl);
      await submitCommands(
        env,
        p,
        waiting.map((t) => ({
          task: link(r, "tasks", t.id)!,
          external_id: `route:${id}:activate:${t.id}:${t.version}`,
          time: new Date().toISOString(),
          action: "assign" as const,
          assignee: link(r, "users", row.assignee_id)!,
        })),
        { timeZone: null, isArray: true, baseUrl },
      );
    }
  }
  const r = await env.DB.prepare(
    "UPDATE routes SET state = ?, updated_at = ? WHERE id = ? AND account_id = ? AND state = ?",
  )
    .bind(TARGET[action], Date.now(), id, p.accountId, row.state)
    .run();
  if (!r.meta.changes) {
    const now = await getRoute(env.DB, p, id);
    throw nonFieldError(`Cannot ${action} a route in state "${now.state}".`);
  }
  return getRoute(env.DB, p, id);
}
