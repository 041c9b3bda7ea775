import { createRoute, z } from "@hono/zod-openapi";
import { requireRole } from "../../http/guards";
import {
  dayInput,
  defineRoute,
  errorResponses,
  jsonBody,
  jsonResponse,
  type Router,
  security,
} from "../../http/openapi";
import { link, renderCtx } from "../../http/serialize";
import { hyperlinkSchema } from "../../http/urls";
import { autoAssignRequest } from "../../services/auto-assign/request";

const REASONS = ["unreachable", "capacity", "time_window", "shift"] as const;
export const MAX_AUTO_ASSIGN = 500;

const AutoAssignSchema = z
  .union([
    z
      .object({
        tasks: z
          .array(hyperlinkSchema("tasks", "A task's URL or id."))
          .min(1)
          .max(MAX_AUTO_ASSIGN)
          .openapi({ description: `Tasks to place, in this order (at most ${MAX_AUTO_ASSIGN}).` }),
      })
      .strict()
      .openapi("TaskAutoAssignList"),
    z
      .object({
        day: dayInput().openapi({
          description:
            "That day's unassigned tasks (the account's time zone; a window meeting the day or a scheduled time in it, as `GET /tasks/?day=`), by window start.",
        }),
      })
      .strict()
      .openapi("TaskAutoAssignDay"),
  ])
  .openapi(
    "TaskAutoAssign",
    { description: "Either `tasks` (a list, in order) or `day` (that day's unassigned tasks)." },
    { unionPreferredType: "oneOf" },
  );

const AutoAssignResultSchema = z
  .object({
    task: z.string().url(),
    assignee: z
      .string()
      .url()
      .nullable()
      .openapi({ description: "The worker it went to; null when nothing fits." }),
    route: z.string().url().nullable(),
    position: z.number().nullable(),
    reason: z.enum(REASONS).nullable().openapi({
      description: "Why it fits no on-duty worker's route (contract §16's reasons); null when placed.",
    }),
  })
  .openapi("TaskAutoAssignResult");

export const autoAssignRoute = createRoute({
  method: "post",
  path: "/tasks/auto_assign/",
  tags: ["Tasks"],
  security,
  summary: "Place unassigned tasks on today's routes (admins, managers)",
  description:
    "Contract §29: each task goes, in the order given (by window start for a day), to the route of today of an on-duty worker where inserting it adds the least travel time while every task of that route still fits (windows, capacity, shift, pick-up before drop-off), by a system `assign` command (`notes` `auto_assign`) that also writes `route` and `position`; a worker on duty with no route today gets one. " +
    "Each task is placed against the routes as the ones before it left them, and insertions of one account run one at a time. " +
    "A task that is not unassigned is answered as it stands (a repeated call changes nothing). " +
    "Routes start from the worker's position when fresher than `POSITION_FRESH_MINUTES` (15), else the last finished stop, else the route's start address, at the later of now and the shift's start.",
  request: jsonBody(AutoAssignSchema),
  responses: {
    200: jsonResponse(z.array(AutoAssignResultSchema), "One result per task, in the order placed."),
    ...errorResponses,
  },
});

export function mountAutoAssign(app: Router) {
  defineRoute(app, autoAssignRoute, async (c) => {
    const p = requireRole(c, "admin", "manager");
    const results = await autoAssignRequest(c.env, p, c.req.valid("json"), c.get("baseUrl"));
    const r = renderCtx(c);
    return c.json(
      results.map((x) => ({
        task: link(r, "tasks", x.taskId)!,
        assignee: link(r, "users", x.assigneeId),
        route: link(r, "routes", x.routeId),
        position: x.position,
        reason: x.reason,
      })),
      200,
    );
  });
}
