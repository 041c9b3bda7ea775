import { createRoute } from "@hono/zod-openapi";
import { ValidationError } from "../../http/errors";
import { pathId, requireRole } from "../../http/guards";
import {
  type Ctx,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  type Router,
  security,
  uuidParam,
  zodToFieldErrors,
} from "../../http/openapi";
import { mapPage, pageSchema } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import {
  RECURRENCE_TEMPLATE_RULES,
  RecurrenceListQuery,
  RecurrencePatchSchema,
  RecurrenceSchema,
  RecurrenceWriteSchema,
} from "../../schemas/recurrences";
import { TaskWriteSchema } from "../../schemas/tasks";
import { orderLimits } from "../../services/orders";
import {
  createRecurrence,
  deleteRecurrence,
  getRecurrence,
  listRecurrences,
  serializeRecurrence,
  updateRecurrence,
} from "../../services/recurrences";
import { parseOrderBodies } from "../orders";

const tags = ["Recurrences"];
/**
 * Recurrences make tasks for the whole account: dispatchers only. A worker gets 403 on every
 * endpoint (it sees the tasks made for it, whose `recurrence` link it cannot follow).
 */
const DISPATCHERS = ["admin", "manager", "integration"] as const;

const writeCtx = (c: Ctx) => ({ zone: c.get("timeZone"), baseUrl: c.get("baseUrl") });

/**
 * The template's shape, checked by the same zod schema as POST /tasks/ or POST /orders/ (one
 * order); its errors nest under `template`. The service then checks it as those verbs do.
 */
function parseTemplate(c: Ctx, kind: "task" | "order", template: unknown): Record<string, unknown> {
  if (kind === "task") {
    const r = TaskWriteSchema.safeParse(template);
    if (!r.success)
      throw new ValidationError({ template: zodToFieldErrors(r.error.issues, "json", template) });
    return r.data;
  }
  try {
    return parseOrderBodies(template, orderLimits(c.env), false).bodies[0];
  } catch (err) {
    if (err instanceof ValidationError && !Array.isArray(err.body))
      throw new ValidationError({ template: err.body });
    throw err;
  }
}

export const createRecurrenceRoute = createRoute({
  method: "post",
  path: "/recurrences/",
  tags,
  security,
  summary: "Create a recurrence (dispatchers)",
  description:
    "Makes nothing at once: the cron makes every occurrence within the horizon (RECURRENCE_HORIZON_DAYS, 7 by default), " +
    "exactly once each. Occurrences before the recurrence was created are not made. To get the first occurrence at once, " +
    "POST the task or order itself with `recurrence`.",
  request: jsonBody(RecurrenceWriteSchema.openapi("RecurrenceCreate", RECURRENCE_TEMPLATE_RULES)),
  responses: { 201: jsonResponse(RecurrenceSchema, "Created."), ...errorResponses },
});

export const listRecurrencesRoute = createRoute({
  method: "get",
  path: "/recurrences/",
  tags,
  security,
  summary: "List recurrences (dispatchers)",
  request: { query: RecurrenceListQuery },
  responses: { 200: jsonResponse(pageSchema(RecurrenceSchema), "A page of recurrences."), ...errorResponses },
});

export const retrieveRecurrenceRoute = createRoute({
  method: "get",
  path: "/recurrences/{id}/",
  tags,
  security,
  summary: "Read a recurrence (dispatchers)",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(RecurrenceSchema, "The recurrence."), ...errorResponses },
});

function updateRecurrenceRouteFor<M extends "patch" | "put">(method: M) {
  return createRoute({
    method,
    path: "/recurrences/{id}/",
    tags,
    security,
    summary: method === "patch" ? "Change a recurrence (dispatchers)" : "Replace a recurrence (dispatchers)",
    description:
      "Changes only the occurrences not yet made; tasks and orders already made stay as they are. A new rule, start, end " +
      "or timezone, or `is_active` turned back to true, schedules from now on (nothing missed is made afterwards).",
    request: {
      params: uuidParam,
      ...jsonBody(
        method === "patch"
          ? RecurrencePatchSchema
          : RecurrenceWriteSchema.openapi("RecurrenceUpdate", RECURRENCE_TEMPLATE_RULES),
      ),
    },
    responses: { 200: jsonResponse(RecurrenceSchema, "The recurrence."), ...errorResponses },
  });
}

export const partialUpdateRecurrenceRoute = updateRecurrenceRouteFor("patch");
export const updateRecurrenceRoute = updateRecurrenceRouteFor("put");

export const destroyRecurrenceRoute = createRoute({
  method: "delete",
  path: "/recurrences/{id}/",
  tags,
  security,
  summary: "Delete a recurrence (dispatchers)",
  description:
    "No more occurrences are made; tasks and orders already made stay, with their `recurrence` link.",
  request: { params: uuidParam },
  responses: { 204: { description: "Deleted." }, ...errorResponses },
});

export function mountRecurrences(app: Router) {
  defineRoute(app, createRecurrenceRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const body = c.req.valid("json");
    const template = parseTemplate(c, body.kind, body.template);
    const row = await createRecurrence(c.env, p, { ...body, template }, writeCtx(c));
    return c.json(serializeRecurrence(renderCtx(c), row), 201);
  });

  defineRoute(app, listRecurrencesRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const page = await listRecurrences(c.env.DB, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (x) => serializeRecurrence(r, x)));
  });

  defineRoute(app, retrieveRecurrenceRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    return c.json(serializeRecurrence(renderCtx(c), await getRecurrence(c.env.DB, p, pathId(c))));
  });

  for (const method of ["patch", "put"] as const) {
    const route = method === "patch" ? partialUpdateRecurrenceRoute : updateRecurrenceRoute;
    defineRoute(app, route, async (c) => {
      const p = requireRole(c, ...DISPATCHERS);
      const id = pathId(c);
      const body = c.req.valid("json");
      // Not found before invalid (as DRF looks the object up first).
      const current = await getRecurrence(c.env.DB, p, id);
      const kind = body.kind ?? current.kind;
      const template =
        body.template !== undefined || body.kind !== undefined
          ? parseTemplate(c, kind, body.template ?? JSON.parse(current.template))
          : undefined;
      // PUT resets what it leaves out: no end, no assignee, the account's zone, active.
      const input =
        method === "put" ? { end: null, assignee: null, timezone: "", is_active: true, ...body } : body;
      const row = await updateRecurrence(c.env, p, id, { ...input, template }, writeCtx(c));
      return c.json(serializeRecurrence(renderCtx(c), row));
    });
  }

  defineRoute(app, destroyRecurrenceRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    await deleteRecurrence(c.env.DB, p, pathId(c));
    return c.body(null, 204);
  });
}
