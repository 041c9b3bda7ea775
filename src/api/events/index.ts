import { createRoute, z } from "@hono/zod-openapi";
import { ApiError } from "../../http/errors";
import { pathId, requireRole, requireUser } from "../../http/guards";
import {
  dateTime,
  defineRoute,
  ErrorSchema,
  errorResponses,
  jsonResponse,
  type Router,
  security,
  uuidParam,
} from "../../http/openapi";
import { pageSchema } from "../../http/pagination";
import { renderCtx, ts } from "../../http/serialize";
import { getEvent, listEvents } from "../../services/events/list";
import { createTicket, openStream, streamStats } from "../../services/live";
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

const TicketSchema = z
  .object({
    ticket: z.string().openapi({ description: "Single use, valid 60 seconds." }),
    url: z.string().openapi({
      description:
        "The stream's WebSocket URL with the ticket (`wss://<host>/events/stream/?ticket=...`); add `types` or `after`.",
    }),
    expires_at: dateTime(),
  })
  .openapi("StreamTicket");

export const createStreamTicketRoute = createRoute({
  method: "post",
  path: "/events/stream_tickets/",
  operationId: "createStreamTicket",
  tags,
  security,
  summary: "A ticket that opens the live event stream (any authenticated user)",
  description:
    "Browsers cannot set `Authorization` on a WebSocket, so the stream is opened with this ticket: single use, valid 60 seconds, for the caller's account and role. No token ever goes in a URL.",
  responses: { 201: jsonResponse(TicketSchema, "The ticket."), ...errorResponses },
});

export const streamEventsRoute = createRoute({
  method: "get",
  path: "/events/stream/",
  operationId: "streamEvents",
  tags,
  security: [],
  summary: "The account's events, live, over a WebSocket (contract §25)",
  description:
    "Open with `Upgrade: websocket` and `?ticket=` from `POST /events/stream_tickets/`. Each message is one event as JSON `{id, type, created_at, data}`, the same types and payloads as `GET /events/` and webhooks, in id order as they are written; what the ticket's role may see (a worker: events of tasks assigned to it). `?types=a,b` keeps those types; `?after=<event id>` first replays what came after that id (within the events window), then goes live, with no gap and no duplicate. A worker's stream carries each event as that worker's `GET` of the object answers it (hidden documents and form fields left out), and nothing where that `GET` is 404; the role is the one held when the ticket is spent. A sign-out, a new password or a role taken away closes the stream (code 4001), and so does the end of a hijack stream's admin (sign-out, demotion, removal). Send `ping` to get `pong`; a binary frame closes the socket with 1003, one over 1 KiB with 1009, invalid UTF-8 with 1007. Open streams are capped per user (`LIVE_STREAMS_PER_USER`, 50), per account (`LIVE_STREAMS_PER_ACCOUNT`, 2,000): past one, 429 with `Retry-After`. Events are pushed when their write commits; an event committed late by another writer with an older id (within 5 s) is still sent, after the newer one. No SSE variant: a hibernated WebSocket costs nothing while it waits, an open SSE response holds a Worker; `websocat` or any WebSocket library serves command-line clients.",
  request: {
    query: z
      .object({
        ticket: z.string().openapi({ description: "From `POST /events/stream_tickets/`." }),
        types: z.string().optional().openapi({ description: "Only these event types (comma-separated)." }),
        after: z.string().optional().openapi({ description: "Replay events after this id first." }),
      })
      .strict(),
  },
  responses: {
    101: { description: "Switching Protocols: the WebSocket." },
    426: jsonResponse(ErrorSchema, "Not a WebSocket upgrade (`Upgrade: websocket` is required)."),
    ...errorResponses,
  },
});

const StreamStatsSchema = z
  .object({
    connections: z.number().int().openapi({
      description: "Open live connections of the account (dispatch screens and tracking pages).",
    }),
    wakes: z.number().int().openapi({
      description:
        "How many times the account's stream object has started: once, then once per wake from hibernation. Unchanged while connections only wait.",
    }),
    awake_since: dateTime().openapi({ description: "When the object last started (woke)." }),
    positions: z
      .object({
        buffered: z
          .number()
          .int()
          .openapi({ description: "Positions waiting in the object for its next write to D1." }),
        flushes: z
          .number()
          .int()
          .openapi({ description: "Writes of trails to D1 since the object started." }),
        d1_statements: z.number().int().openapi({
          description:
            "D1 statements positions cost since the object started (trails, latest positions, lateness checks).",
        }),
      })
      .optional()
      .openapi({
        description:
          "Workers' positions kept by the object (contract §28): only on a deployment that sets `EXPOSE_D1_ROUND_TRIPS` (the benchmark's), as they change with every position.",
      }),
  })
  .openapi("StreamStats");

export const streamStatsRoute = createRoute({
  method: "get",
  path: "/events/stream_stats/",
  operationId: "streamStats",
  tags,
  security,
  summary: "The live stream's connections and wakes (admins)",
  description:
    "For operators watching what live screens cost: connections held while nothing happens are hibernated (the Hibernation API), so `wakes` stays put until an event or a message arrives. Reading this may itself wake the object. Takes no query parameters (any is 400).",
  request: { query: z.object({}).strict() },
  responses: { 200: jsonResponse(StreamStatsSchema, "The stream object's figures."), ...errorResponses },
});

export function mountEvents(app: Router) {
  defineRoute(app, streamStatsRoute, async (c) => {
    const p = requireRole(c, "admin");
    const { positions, ...s } = await streamStats(c.env, p.accountId);
    const diagnostics = c.env.EXPOSE_D1_ROUND_TRIPS === "true" ? { positions } : {};
    return c.json({ ...s, awake_since: ts(renderCtx(c), s.awake_since), ...diagnostics });
  });

  defineRoute(app, createStreamTicketRoute, async (c) => {
    const p = requireUser(c);
    const t = await createTicket(c.env, p, c.get("baseUrl"));
    return c.json({ ...t, expires_at: ts(renderCtx(c), t.expires_at) }, 201);
  });

  defineRoute(app, streamEventsRoute, async (c) => {
    if (c.req.header("Upgrade")?.toLowerCase() !== "websocket")
      throw new ApiError(426, "upgrade_required", "This is a WebSocket: send `Upgrade: websocket`.");
    return openStream(c.env, c.req.valid("query"));
  });

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
