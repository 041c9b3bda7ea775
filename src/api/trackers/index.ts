import { createRoute, z } from "@hono/zod-openapi";
import { PUBLIC_TASK_FIELDS } from "../../domain/tracker";
import { ValidationError } from "../../http/errors";
import { pathId, requireRole } from "../../http/guards";
import {
  dateTime,
  dateTimeInput,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  jsonSchemaRules,
  placeholderPattern,
  type Router,
  security,
  uuidParam,
} from "../../http/openapi";
import { mapPage, pageSchema, paginationQuery } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import { parseTimestamp } from "../../http/timezones";
import { hyperlinkSchema } from "../../http/urls";
import {
  createTracker,
  deleteTracker,
  getTracker,
  listTrackers,
  serializeTracker,
  type TrackerWrite,
  updateTracker,
} from "../../services/trackers";

const tags = ["Trackers"];
const DISPATCHERS = ["admin", "manager", "integration"] as const;

export const TrackerSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    tasks: z.array(z.string().url()),
    order: z.string().url().nullable(),
    public_task_fields: z.array(z.string()),
    expires_at: dateTime(),
    task_popup_template: z.string(),
    public_url: z.string().url().openapi({ description: "Anonymous; 128 random bits make it unguessable." }),
    created_by: z.string().url().nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("Tracker");

const TrackerWriteSchema = z.object({
  tasks: z
    .array(hyperlinkSchema("tasks", "A task's URL or id."))
    .optional()
    .openapi({ description: "Task URLs (at most 500)." }),
  order: hyperlinkSchema("orders", "Order URL: all its tasks, as they are when the page is read.")
    .nullable()
    .optional(),
  public_task_fields: z
    .array(z.string().openapi({ enum: [...PUBLIC_TASK_FIELDS] }))
    .optional()
    .openapi({
      minItems: 1,
      description: `Allowlist of what the public page shows, from: ${PUBLIC_TASK_FIELDS.join(", ")}. Default: state, category, address.formatted_address, complete_after, complete_before, scheduled_time, eta, assignee.name. Empty: 400.`,
    }),
  expires_at: dateTimeInput().optional().openapi({
    description: "Default: 30 days after the latest `complete_before` of its tasks, or after creation.",
  }),
  task_popup_template: z
    .string()
    .max(10_000)
    .optional()
    .openapi({
      description:
        "`{{field}}` placeholders of the allowlist only (400 otherwise: the pattern states the public task fields, the service also the tracker's own `public_task_fields`); default: the account's template.",
      pattern: placeholderPattern(PUBLIC_TASK_FIELDS),
    }),
});

export const createTrackerRoute = createRoute({
  method: "post",
  path: "/trackers/",
  tags,
  security,
  summary: "Create a tracker (a public page for some tasks)",
  // The service's "Give `tasks` or `order`." (services/trackers `resolve`), as JSON Schema.
  request: jsonBody(
    TrackerWriteSchema.openapi(
      "TrackerCreate",
      jsonSchemaRules({
        anyOf: [
          { required: ["tasks"], properties: { tasks: { minItems: 1 } } },
          { required: ["order"], properties: { order: { type: "string", minLength: 1 } } },
        ],
      }),
    ),
  ),
  responses: { 201: jsonResponse(TrackerSchema, "The tracker."), ...errorResponses },
});

export const listTrackersRoute = createRoute({
  method: "get",
  path: "/trackers/",
  tags,
  security,
  summary: "List trackers",
  request: { query: z.object(paginationQuery).strict() },
  responses: { 200: jsonResponse(pageSchema(TrackerSchema), "A page of trackers."), ...errorResponses },
});

export const retrieveTrackerRoute = createRoute({
  method: "get",
  path: "/trackers/{id}/",
  tags,
  security,
  summary: "Read a tracker",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(TrackerSchema, "The tracker."), ...errorResponses },
});

export const partialUpdateTrackerRoute = createRoute({
  method: "patch",
  path: "/trackers/{id}/",
  tags,
  security,
  summary: "Change a tracker",
  request: { params: uuidParam, ...jsonBody(TrackerWriteSchema.openapi("TrackerPatch")) },
  responses: { 200: jsonResponse(TrackerSchema, "The tracker."), ...errorResponses },
});

export const destroyTrackerRoute = createRoute({
  method: "delete",
  path: "/trackers/{id}/",
  tags,
  security,
  summary: "Delete a tracker: its public page answers 404",
  request: { params: uuidParam },
  responses: { 204: { description: "Deleted." }, ...errorResponses },
});

function input(body: z.infer<typeof TrackerWriteSchema>, zone: string | null): TrackerWrite {
  const { expires_at, ...rest } = body;
  if (expires_at === undefined) return rest;
  const ms = parseTimestamp(expires_at, zone);
  if (ms === null)
    throw new ValidationError({
      expires_at: ["Datetime has wrong format. Use ISO 8601 with Z or an offset."],
    });
  return { ...rest, expires_at: ms };
}

export function mountTrackers(app: Router) {
  defineRoute(app, createTrackerRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const row = await createTracker(c.env, p, input(c.req.valid("json"), c.get("timeZone")));
    return c.json(serializeTracker(renderCtx(c), row), 201);
  });
  defineRoute(app, listTrackersRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const page = await listTrackers(c.env.DB, p, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json(mapPage(page, (t) => serializeTracker(r, t)));
  });
  defineRoute(app, retrieveTrackerRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    return c.json(serializeTracker(renderCtx(c), await getTracker(c.env.DB, p, pathId(c))));
  });
  defineRoute(app, partialUpdateTrackerRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    const row = await updateTracker(c.env.DB, p, pathId(c), input(c.req.valid("json"), c.get("timeZone")));
    return c.json(serializeTracker(renderCtx(c), row));
  });
  defineRoute(app, destroyTrackerRoute, async (c) => {
    const p = requireRole(c, ...DISPATCHERS);
    await deleteTracker(c.env.DB, p, pathId(c));
    return c.body(null, 204);
  });
}
