import { createRoute } from "@hono/zod-openapi";
import { pathId, requireRole } from "../../http/guards";
import {
  dateTime,
  defineRoute,
  errorResponses,
  jsonResponse,
  type Router,
  security,
  uuidParam,
} from "../../http/openapi";
import { pageSchema } from "../../http/pagination";
import { renderCtx, ts } from "../../http/serialize";
import { getEvent, listEvents } from "../../services/events/list";
import { eventsRetainedSince } from "../../services/retention/windows";
import { EventListQuery, EventSchema, serializeEvent } from "./schema";

const tags = ["Events"];
const ROLES = ["admin", "manager", "integration"] as const;

export const listEventsRoute = createRoute({
  method: "get",
  path: "/events/",
  tags,
  security,
  summary: "The account's events, oldest first, for catching up by pulling",
  description:
    "Keep the `id` of the last event you processed and ask for `?after=<id>`; follow `next` while it is not null. " +
    "Events appear here once they are a few seconds old (the settle delay, `UPDATED_AT_SETTLE_SECONDS`), so that " +
    "an event committed late by a slower writer is never skipped by a client that has already read past its id. " +
    "Events are kept `EVENTS_RETENTION_DAYS` (30) and then moved to the archive (`GET /archives/`, kind `events`): " +
    "`retained_since` says how far back this list reaches.",
  request: { query: EventListQuery },
  responses: {
    200: jsonResponse(
      pageSchema(EventSchema).extend({
        retained_since: dateTime().openapi({
          description: "The oldest time this list still holds events of: older ones are in the archive.",
        }),
      }),
      "A page of events.",
    ),
    ...errorResponses,
  },
});

export const retrieveEventRoute = createRoute({
  method: "get",
  path: "/events/{id}/",
  tags,
  security,
  summary: "One event",
  request: { params: uuidParam },
  responses: { 200: jsonResponse(EventSchema, "The event."), ...errorResponses },
});

export function mountEvents(app: Router) {
  defineRoute(app, listEventsRoute, async (c) => {
    const p = requireRole(c, ...ROLES);
    const { next, previous, rows } = await listEvents(c.env, p.accountId, c.req.valid("query"), c.req.url);
    const r = renderCtx(c);
    return c.json({
      next,
      previous,
      retained_since: ts(r, eventsRetainedSince(c.env)),
      results: rows.map((e) => serializeEvent(r, e)),
    });
  });

  defineRoute(app, retrieveEventRoute, async (c) => {
    const p = requireRole(c, ...ROLES);
    return c.json(serializeEvent(renderCtx(c), await getEvent(c.env, p.accountId, pathId(c))));
  });
}
