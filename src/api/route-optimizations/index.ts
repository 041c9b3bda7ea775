import { createRoute, z } from "@hono/zod-openapi";
import { pathId, requireRole } from "../../http/guards";
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
import { mapPage, pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import { hyperlinkSchema } from "../../http/urls";
import {
  createOptimization,
  getOptimization,
  listOptimizations,
  serializeOptimization,
} from "../../services/route-optimizations";
import { optimizationReport } from "../../services/route-optimizations/report";
import { cancelOptimization } from "../../services/route-optimizations/run";

const tags = ["Route optimizations"];
const PLANNERS = ["admin", "manager", "integration"] as const;

export const RouteOptimizationSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    routes: z.array(z.string().url()),
    tasks: z
      .array(z.string().url())
      .openapi({ description: "Every task taking part (the routes' own and the ones listed)." }),
    ignore_time_windows: z.boolean(),
    objective: z.enum(["distance", "duration", "balance"]).nullable(),
    apply: z.boolean(),
    from_now: z.boolean().openapi({ description: "Re-planned from now (contract §29)." }),
    reassign: z.boolean().openapi({ description: "False: assigned tasks kept their assignee." }),
    state: z.enum(["queued", "running", "completed", "failed"]),
    result: z.any().nullable().openapi({
      description:
        '`{"routes": [{"route", "stops": [{"task", "arrival", "start", "departure", "distance_m", "duration_s"}], "distance_m", "duration_s"}], "unassigned": [{"task", "reason"}], "distance_m", "duration_s", "before": {"routes": [{"route", "tasks", "distance_m", "duration_s"}], "distance_m", "duration_s"}}`; null until completed. `before`: every given route in its current order (its task URLs; from now: the stops under way first), through the same travel model, to compare the plan with.',
    }),
    error_message: z.string(),
    created_by: z.string().url().nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("RouteOptimization");

const RouteOptimizationWriteSchema = z
  .object({
    routes: z
      .array(hyperlinkSchema("routes", "A route's URL or id."))
      .min(1)
      .openapi({ description: "Route URLs (their tasks always take part)." }),
    tasks: z
      .array(hyperlinkSchema("tasks", "A task's URL or id."))
      .optional()
      .openapi({ description: "More task URLs: unrouted ones, or on the routes given." }),
    ignore_time_windows: z.boolean().optional(),
    objective: z.enum(["distance", "duration", "balance"]).nullable().optional().openapi({
      description: "Default (null): each route's own.",
    }),
    apply: z
      .boolean()
      .optional()
      .openapi({ description: "Default true: write `route`, `position` and the assignee when completed." }),
    from_now: z.boolean().optional().openapi({
      description:
        "Default false. Re-plan from now (contract §29): finished tasks leave the problem and keep their places at the front; a task in `active` stays its route's first stop, one in `transit` the next; each route starts at its assignee's latest position (younger than `POSITION_FRESH_MINUTES`), else its last finished stop, else its start address, at the later of now and the shift's start.",
    }),
    reassign: z.boolean().optional().openapi({
      description:
        "Default true. False: assigned tasks keep their assignee; only their order (and route of that assignee) changes.",
    }),
  })
  .openapi("RouteOptimizationCreate");

export const createRouteOptimizationRoute = createRoute({
  method: "post",
  path: "/route_optimizations/",
  tags,
  security,
  summary: "Optimize routes (solved from a queue)",
  description:
    '202 with `state` `queued`; poll the optimization for `running`, `completed` (`result`) or `failed` (`error_message`). 400 before anything is queued when the solve would not fit in memory: its estimate (32 MB reserved, 8 bytes per pair of distinct locations, 8 KB per visit) above `OPTIMIZATION_MEMORY_MB` (at most the Worker\'s 128 MB) is refused as `{"tasks": ["Too many locations for one optimization: … (at most N locations with V visits)."]}`. With `from_now`, a listed task in `transit` or `active` on none of the given routes is 400; with `reassign: false`, so is a listed assigned task whose assignee has none of the given routes (docs/api.md, "Re-planning from now").',
  request: jsonBody(RouteOptimizationWriteSchema),
  responses: { 202: jsonResponse(RouteOptimizationSchema, "Queued."), ...errorResponses },
});

export const listRouteOptimizationsRoute = createRoute({
  method: "get",
  path: "/route_optimizations/",
  tags,
  security,
  summary: "List route optimizations, newest first",
  request: { query: z.object(paginationQuery).strict() },
  responses: { 200: jsonResponse(pageSchema(RouteOptimizationSchema), "A page."), ...errorResponses },
});

export const retrieveRouteOptimizationRoute = createRoute({
  method: "get",
  path: "/route_optimizations/{id}/",
  tags,
  security,
  summary: "Read a route optimization",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(RouteOptimizationSchema, "The optimization."), ...errorResponses },
});

export const reportRouteOptimizationRoute = createRoute({
  method: "get",
  path: "/route_optimizations/{id}/report/",
  operationId: "reportRouteOptimization",
  tags,
  security,
  summary: "The result as a readable page, or a PDF",
  description:
    "HTML readable on a phone, or a PDF with `Accept: application/pdf` or `?format=pdf`: a map of the routes, per route " +
    "its map and its stops (named by description or contact, order reference and address) with times and distances, " +
    "and the unassigned tasks with reasons. In the language of `Accept-Language` (one of the 12 of the tracking page), " +
    "else the account's `language`; times in the account's time zone, named. 400 until completed.",
  request: {
    params: uuidParam,
    query: z.object({ format: z.enum(["html", "pdf"]).optional() }).strict(),
  },
  responses: {
    200: {
      description: "The report.",
      content: {
        "text/html": { schema: z.string() },
        "application/pdf": { schema: z.string().openapi({ format: "binary" }) },
      },
    },
    ...errorResponses,
  },
});

export const cancelRouteOptimizationRoute = createRoute({
  method: "post",
  path: "/route_optimizations/{id}/cancel/",
  operationId: "cancelRouteOptimization",
  tags,
  security,
  summary: "Cancel a queued or running optimization",
  description:
    "It reads `failed` with `error_message` `Cancelled.`; a solve under way applies nothing. One already `completed` or `failed`: 400.",
  request: { params: uuidParam },
  responses: {
    200: jsonResponse(RouteOptimizationSchema, "The optimization, failed as cancelled."),
    ...errorResponses,
  },
});

export function mountRouteOptimizations(app: Router) {
  defineRoute(app, createRouteOptimizationRoute, async (c) => {
    const p = requireRole(c, ...PLANNERS);
    const row = await createOptimization(c.env, p, c.req.valid("json"), c.get("baseUrl"));
    return c.json(serializeOptimization(renderCtx(c), row), 202);
  });

  defineRoute(app, listRouteOptimizationsRoute, async (c) => {
    const p = requireRole(c, ...PLANNERS);
    const page = await listOptimizations(c.env.DB, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (x) => serializeOptimization(r, x)));
  });

  defineRoute(app, retrieveRouteOptimizationRoute, async (c) => {
    const p = requireRole(c, ...PLANNERS);
    return c.json(serializeOptimization(renderCtx(c), await getOptimization(c.env.DB, p, pathId(c))));
  });

  defineRoute(app, cancelRouteOptimizationRoute, async (c) => {
    const p = requireRole(c, ...PLANNERS);
    return c.json(serializeOptimization(renderCtx(c), await cancelOptimization(c.env, p, pathId(c))));
  });

  defineRoute(app, reportRouteOptimizationRoute, async (c) => {
    const p = requireRole(c, ...PLANNERS);
    const q = c.req.valid("query").format;
    // `?format=` wins; else the Accept header asks for a PDF (RFC 9110 §12.5.1, without q-values).
    const pdf =
      q === "pdf" || (q === undefined && /\bapplication\/pdf\b/i.test(c.req.header("Accept") ?? ""));
    const { body, language } = await optimizationReport(
      c.env,
      p,
      pathId(c),
      pdf ? "pdf" : "html",
      c.req.header("Accept-Language"),
    );
    const vary = { "Content-Language": language, Vary: "Accept, Accept-Language" };
    if (typeof body !== "string") {
      return c.body(new Uint8Array(body), 200, {
        "Content-Type": "application/pdf",
        "Content-Disposition": `inline; filename="route-optimization-${pathId(c)}.pdf"`,
        ...vary,
      });
    }
    return c.body(body, 200, {
      "Content-Type": "text/html; charset=utf-8",
      ...vary,
      "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    });
  });
}
