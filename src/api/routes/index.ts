import { createRoute, z } from "@hono/zod-openapi";
import { notFound } from "../../http/errors";
import { pathId, requireRole, requireUser } from "../../http/guards";
import {
  dateTime,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  type Router,
  security,
  uuidParam,
} from "../../http/openapi";
import { pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import { hyperlinkSchema } from "../../http/urls";
import { AddressInputSchema, AddressSchema, refineDepots } from "../../schemas/tasks";
import { tasksForReader } from "../../services/forms/worker-view";
import {
  createRoute as createRouteRow,
  deleteRoute,
  getRoute,
  listRoutes,
  ROUTE_OBJECTIVES,
  ROUTE_STATES,
  type RouteAction,
  routeAction,
  serializeRoute,
  tasksOfRoutes,
  updateRoute,
} from "../../services/routes";

const tags = ["Routes"];
const PLANNERS = ["admin", "manager", "integration"] as const;

export const RouteSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    name: z.string(),
    assignee: z.string().url().nullable(),
    date: z.string().nullable().openapi({ description: "`YYYY-MM-DD` in the account's time zone." }),
    state: z.enum(ROUTE_STATES),
    objective: z.enum(ROUTE_OBJECTIVES),
    start_address: AddressSchema.nullable(),
    end_address: AddressSchema.nullable(),
    metafields: z.record(z.string(), z.any()),
    tasks: z
      .array(z.any())
      .openapi({ description: "Task URLs in `position` order (tasks inline with `?expand=tasks`)." }),
    distance_m: z.number().nullable(),
    duration_s: z.number().nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("Route");

/** A route's day, as the body and the list filter take it (a label: any year, no calendar check). */
const routeDate = () =>
  z.string().regex(/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/, "Date has wrong format. Use YYYY-MM-DD.");

const RouteWriteFields = z.object({
  name: z.string().max(255).optional(),
  assignee: hyperlinkSchema("users", "User URL of the account, or null.").nullable().optional(),
  date: routeDate().nullable().optional(),
  objective: z.enum(ROUTE_OBJECTIVES).optional().openapi({ description: "Default `distance`." }),
  start_address: AddressInputSchema.nullable().optional().openapi({
    description: "Default: the assignee's account-role `start_address`, copied when the assignee is set.",
  }),
  end_address: AddressInputSchema.nullable()
    .optional()
    .openapi({ description: "Default: the assignee's account-role `end_address`." }),
  metafields: z.record(z.string(), z.any()).nullable().optional(),
});
// Each depot address names a place (an empty object is a 400 on the field, not a 500).
const RouteWriteSchema = refineDepots(RouteWriteFields);

const expandQuery = {
  expand: z.string().optional().openapi({ description: "`tasks`: the route's tasks inline." }),
};

export const createRouteRoute = createRoute({
  method: "post",
  path: "/routes/",
  tags,
  security,
  summary: "Create a route (state draft)",
  request: jsonBody(RouteWriteSchema.openapi("RouteCreate")),
  responses: { 201: jsonResponse(RouteSchema, "The route."), ...errorResponses },
});

export const listRoutesRoute = createRoute({
  method: "get",
  path: "/routes/",
  tags,
  security,
  summary: "List routes",
  description: "Workers see the routes assigned to them.",
  request: {
    query: z
      .object({
        ...paginationQuery,
        ...expandQuery,
        state: z.enum(ROUTE_STATES).optional(),
        assignee: hyperlinkSchema("users", "User URL or id.").optional(),
        date: routeDate().optional().openapi({ description: "`YYYY-MM-DD`." }),
      })
      .strict(),
  },
  responses: { 200: jsonResponse(pageSchema(RouteSchema), "A page of routes."), ...errorResponses },
});

export const retrieveRouteRoute = createRoute({
  method: "get",
  path: "/routes/{id}/",
  tags,
  security,
  summary: "Read a route",
  request: { params: uuidParam, query: z.object(expandQuery).strict() },
  responses: { 200: jsonResponse(RouteSchema, "The route."), ...errorResponses },
});

function updateRouteRouteFor<M extends "patch" | "put">(method: M) {
  return createRoute({
    method,
    path: "/routes/{id}/",
    tags,
    security,
    summary: method === "patch" ? "Change a route" : "Replace a route",
    description: "An archived route is read-only (400). `state` changes through the actions.",
    request: {
      params: uuidParam,
      ...jsonBody(RouteWriteSchema.openapi(method === "patch" ? "RoutePatch" : "RouteUpdate")),
    },
    responses: { 200: jsonResponse(RouteSchema, "The route."), ...errorResponses },
  });
}

export const partialUpdateRouteRoute = updateRouteRouteFor("patch");
export const updateRouteRoute = updateRouteRouteFor("put");

export const destroyRouteRoute = createRoute({
  method: "delete",
  path: "/routes/{id}/",
  tags,
  security,
  summary: "Delete a route",
  description: "Its tasks stay, with `route: null`.",
  request: { params: uuidParam },
  responses: { 204: { description: "Deleted." }, ...errorResponses },
});

const actionRoute = (action: RouteAction, summary: string, description: string) =>
  createRoute({
    method: "post",
    path: `/routes/{id}/${action}/`,
    operationId: `${action}Route`,
    tags,
    security,
    summary,
    description: `${description} Any other move: 400 naming the state and the action.`,
    request: { params: uuidParam },
    responses: { 200: jsonResponse(RouteSchema, "The route."), ...errorResponses },
  });

export const activateRouteRoute = actionRoute(
  "activate",
  "Activate a draft route",
  "Needs an assignee and at least one task; assigns the route's unassigned and draft tasks to the assignee with `assign` commands recorded for the caller.",
);
export const archiveRouteRoute = actionRoute(
  "archive",
  "Archive a draft or active route",
  "An archived route is read-only.",
);
export const draftRouteRoute = actionRoute("draft", "Move an active or archived route back to draft", "");

export function mountRoutes(app: Router) {
  defineRoute(app, createRouteRoute, async (c) => {
    const p = requireRole(c, ...PLANNERS);
    const row = await createRouteRow(c.env, p, c.req.valid("json"));
    return c.json(serializeRoute(renderCtx(c), row, []), 201);
  });

  defineRoute(app, listRoutesRoute, async (c) => {
    const p = requireUser(c);
    const q = c.req.valid("query");
    const page = await listRoutes(c.env.DB, p, q, c.req.url);
    const tasks = await tasksOfRoutes(
      c.env.DB,
      p.accountId,
      page.results.map((r) => r.id),
    );
    const r = renderCtx(c);
    const expand = q.expand === "tasks";
    // One look at hidden form fields for every expanded task of the page (workers only).
    const shown = expand ? await tasksForReader(c.env.DB, p, [...tasks.values()].flat()) : [];
    const byId = new Map(shown.map((t) => [t.id, t]));
    const results = page.results.map((row) =>
      serializeRoute(
        r,
        row,
        (tasks.get(row.id) ?? []).map((t) => byId.get(t.id) ?? t),
        expand,
      ),
    );
    return c.json({ ...page, results });
  });

  defineRoute(app, retrieveRouteRoute, async (c) => {
    const p = requireUser(c);
    const row = await getRoute(c.env.DB, p, pathId(c));
    if (p.role === "worker" && row.assignee_id !== p.userId) throw notFound();
    const tasks = await tasksOfRoutes(c.env.DB, p.accountId, [row.id]);
    const expand = c.req.valid("query").expand === "tasks";
    const own = tasks.get(row.id) ?? [];
    return c.json(
      serializeRoute(renderCtx(c), row, expand ? await tasksForReader(c.env.DB, p, own) : own, expand),
    );
  });

  for (const method of ["patch", "put"] as const) {
    const route = method === "patch" ? partialUpdateRouteRoute : updateRouteRoute;
    defineRoute(app, route, async (c) => {
      const p = requireRole(c, ...PLANNERS);
      const row = await updateRoute(c.env, p, pathId(c), c.req.valid("json"), method);
      const tasks = await tasksOfRoutes(c.env.DB, p.accountId, [row.id]);
      return c.json(serializeRoute(renderCtx(c), row, tasks.get(row.id) ?? []));
    });
  }

  defineRoute(app, destroyRouteRoute, async (c) => {
    const p = requireRole(c, ...PLANNERS);
    await deleteRoute(c.env.DB, p, pathId(c));
    return c.body(null, 204);
  });

  for (const [action, route] of [
    ["activate", activateRouteRoute],
    ["archive", archiveRouteRoute],
    ["draft", draftRouteRoute],
  ] as const) {
    defineRoute(app, route, async (c) => {
      const p = requireRole(c, ...PLANNERS);
      const row = await routeAction(c.env, p, pathId(c), action, c.get("baseUrl"));
      const tasks = await tasksOfRoutes(c.env.DB, p.accountId, [row.id]);
      return c.json(serializeRoute(renderCtx(c), row, tasks.get(row.id) ?? []));
    });
  }
}
