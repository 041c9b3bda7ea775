import { createRoute } from "@hono/zod-openapi";
import { firstBatch } from "../../http/first-batch";
import { pathId, requireRole, requireUser } from "../../http/guards";
import {
  type Ctx,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  type Router,
  security,
  uuidParam,
} from "../../http/openapi";
import { pageSchema } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import {
  TaskCreateSchema,
  TaskExpandQuery,
  TaskListQuery,
  TaskPatchSchema,
  TaskSchema,
  TaskUpdateSchema,
} from "../../schemas/tasks";
import { etaStatements, etas, etasFrom, scopeOfPage, scopeOfTask } from "../../services/eta";
import { tasksForReader } from "../../services/forms/worker-view";
import { createRecurringTask } from "../../services/recurrences";
import {
  createTask,
  deleteTask,
  listTasks,
  readTask,
  serializeTask,
  updateTask,
  visibleTask,
} from "../../services/tasks";
import { planTaskList } from "../../services/tasks/list";
import { routesOf } from "../../services/tasks/serialize";
import type { TaskRow } from "../../services/tasks/types";

const tags = ["Tasks"];
const DISPATCHERS = ["admin", "manager", "integration"] as const;

const writeCtx = (c: Ctx) => ({ zone: c.get("timeZone"), baseUrl: c.get("baseUrl") });

export const createTaskRoute = createRoute({
  method: "post",
  path: "/tasks/",
  tags,
  security,
  summary: "Create a task (dispatchers)",
  description:
    "Required: `account`, `category`, `address` (or a `contact_address` / `contact_address_external_id` that supplies it). " +
    "The address is geocoded at once; if that fails the task is still created, with `address.geocode_failed_at`, and retried later. " +
    "The task starts `unassigned`, `assigned` (with `assignee`), or `draft` / `scheduled` when asked for. " +
    "With `recurrence`, the body (without it) becomes the template of a new recurrence and the answer is its first occurrence, " +
    "with `recurrence` and `calendar_time` (contract §20).",
  request: jsonBody(TaskCreateSchema),
  responses: { 201: jsonResponse(TaskSchema, "The task."), ...errorResponses },
});

export const listTasksRoute = createRoute({
  method: "get",
  path: "/tasks/",
  tags,
  security,
  summary: "List tasks (a worker sees only its own)",
  description:
    "Cursor pagination. Filters of interface §4.6; unknown parameters are 400. Sync recipe: " +
    "`updated_at__gt=<last seen>&ordering=updated_at&updated_at_delay_latest=true`.",
  request: { query: TaskListQuery },
  responses: { 200: jsonResponse(pageSchema(TaskSchema), "A page of tasks."), ...errorResponses },
});

export const retrieveTaskRoute = createRoute({
  method: "get",
  path: "/tasks/{id}/",
  tags,
  security,
  summary: "Read a task",
  request: { params: uuidParam, query: TaskExpandQuery },
  responses: { 200: jsonResponse(TaskSchema, "The task."), ...errorResponses },
});

export const destroyTaskRoute = createRoute({
  method: "delete",
  path: "/tasks/{id}/",
  tags,
  security,
  summary: "Delete a task (dispatchers)",
  request: { params: uuidParam },
  responses: { 204: { description: "Deleted." }, ...errorResponses },
});

function updateTaskRouteFor<M extends "patch" | "put">(method: M) {
  return createRoute({
    method,
    path: "/tasks/{id}/",
    tags,
    security,
    summary:
      method === "patch" ? "Change some fields of a task (dispatchers)" : "Replace a task (dispatchers)",
    description:
      "Goes through the task's Durable Object, so it never interleaves with commands on the same task. " +
      "`state` in PATCH is 400: state changes are task commands. `assignee` may only repeat the current one." +
      (method === "put" ? " Fields left out take their defaults; `state` is ignored." : ""),
    request: { params: uuidParam, ...jsonBody(method === "patch" ? TaskPatchSchema : TaskUpdateSchema) },
    responses: { 200: jsonResponse(TaskSchema, "The task."), ...errorResponses },
  });
}

export const partialUpdateTaskRoute = updateTaskRouteFor("patch");
export const updateTaskRoute = updateTaskRouteFor("put");

export function mountTasks(app: Router) {
  defineRoute(app, createTaskRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const { recurrence, ...body } = c.req.valid("json");
    const row = recurrence
      ? await createRecurringTask(c.env, p, { ...body, recurrence }, writeCtx(c))
      : await createTask(c.env, p, body, writeCtx(c));
    return c.json(serializeTask(renderCtx(c), row), 201);
  });

  defineRoute(app, listTasksRoute, async (c) => {
    const p = requireUser(c);
    const q = c.req.valid("query");
    // The ETAs' reads ride with the page's first statement (one round trip, contract §24, §28).
    const beside = (st: { sql: string; params: unknown[] }) =>
      etaStatements(c.env.DB, p.accountId, scopeOfPage(st));
    const { page, expand } = await listTasks(c.env, p, q, {
      zone: c.get("timeZone"),
      url: c.req.url,
      beside,
    });
    const r = renderCtx(c);
    const rows = await tasksForReader(c.env.DB, p, page.results);
    const routes = expand.has("routes") ? await routesOf(c.env.DB, p.accountId, rows) : undefined;
    const now = Date.now();
    // A page filled by a second statement (a nullable order's rows without a value) reads the
    // ETAs of those rows in a batch of their own.
    const found =
      page.beside && rows.every((t) => page.beside!.rows.has(t.id))
        ? await etasFrom(c.env, rows, page.beside.results, now)
        : await etas(c.env, rows, now);
    return c.json({
      results: rows.map((t) => serializeTask(r, t, { expand, routes, etas: found })),
      next: page.next,
      previous: page.previous,
    });
  });

  defineRoute(
    app,
    retrieveTaskRoute,
    async (c) => {
      // One round trip: the token's check and the task, in the request's first batch.
      // ...and what the task's ETA needs (contract §28), read beside it.
      const {
        principal: p,
        results: [read, ...etaInputs],
      } = await firstBatch(c, (scope) => [
        readTask(c.env.DB, scope.accountId, pathId(c)),
        ...etaStatements(c.env.DB, scope.accountId, scopeOfTask(scope.accountId, pathId(c))),
      ]);
      // Same parser as the list, so `expand` is validated the same way.
      const { expand } = planTaskList(
        { expand: c.req.valid("query").expand },
        { principal: p, zone: null, settleSeconds: 0 },
      );
      const task = visibleTask(p, read.results[0] as TaskRow | undefined);
      const [row] = await tasksForReader(c.env.DB, p, [task]);
      const routes = expand.has("routes") ? await routesOf(c.env.DB, p.accountId, [row]) : undefined;
      const found = await etasFrom(c.env, [row], etaInputs, Date.now());
      return c.json(serializeTask(renderCtx(c), row, { expand, routes, etas: found }));
    },
    { firstBatch: "reads" },
  );

  for (const method of ["patch", "put"] as const) {
    const route = method === "patch" ? partialUpdateTaskRoute : updateTaskRoute;
    defineRoute(app, route, async (c) => {
      const p = requireRole(c, ...DISPATCHERS);
      const task = await updateTask(c.env, p, pathId(c), c.req.valid("json"), method, writeCtx(c));
      return c.json(task);
    });
  }

  defineRoute(app, destroyTaskRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    await deleteTask(c.env, p, pathId(c), { baseUrl: c.get("baseUrl") });
    return c.body(null, 204);
  });
}
