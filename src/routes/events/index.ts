import { createRoute } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../http/context";
import { pathId, requireRole } from "../../http/guards";
import {
  defineRoute,
  errorResponses,
  jsonResponse,
  type Router,
  security,
  uuidParam,
} from "../../http/openapi";
import { pageSchema } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import { accountHasWebhooks, dispatchSoon } from "../../services/events/dispatch";
import { getEvent, listEvents } from "../../services/events/list";
import { EventListQuery, EventSchema, serializeEvent } from "./schema";

const tags = ["Events"];
const ROLES = ["admin", "manager", "integration"] as const;

/**
 * Relays the outbox right after a successful write, without delaying the response (the cron
 * sweeper is the safety net, this makes delivery prompt). To be registered in app.ts with the
 * other middleware (`app.use("*", dispatchAfterWrites)`), before the routes.
 */
export const dispatchAfterWrites: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (["GET", "HEAD", "OPTIONS"].includes(c.req.method) || c.res.status >= 400) return;
  let ctx: { waitUntil(p: Promise<unknown>): void };
  try {
    ctx = c.executionCtx;
  } catch {
    return; // no execution context (app.request in unit tests): the sweeper will relay
  }
  const p = c.get("principal");
  if (!p) return;
  ctx.waitUntil(
    accountHasWebhooks(c.env, p.accountId)
      .then((has) => {
        if (has) dispatchSoon(ctx, c.env);
      })
      .catch(() => undefined),
  );
};

export function mountEvents(app: Router) {
  defineRoute(
    app,
    createRoute({
      method: "get",
      path: "/events/",
      tags,
      security,
      summary: "The account's events, oldest first, for catching up by pulling",
      description:
        "Keep the `id` of the last event you processed and ask for `?after=<id>`; follow `next` while it is not null. " +
        "Events appear here once they are a few seconds old (the settle delay, `UPDATED_AT_SETTLE_SECONDS`), so that " +
        "an event committed late by a slower writer is never skipped by a client that has already read past its id.",
      request: { query: EventListQuery },
      responses: { 200: jsonResponse(pageSchema(EventSchema), "A page of events."), ...errorResponses },
    }),
    async (c) => {
      const p = requireRole(c, ...ROLES);
      const { next, previous, rows } = await listEvents(c.env, p.accountId, c.req.valid("query"), c.req.url);
      const r = renderCtx(c);
      return c.json({ next, previous, results: rows.map((e) => serializeEvent(r, e)) });
    },
  );

  defineRoute(
    app,
    createRoute({
      method: "get",
      path: "/events/{id}/",
      tags,
      security,
      summary: "One event",
      request: { params: uuidParam },
      responses: { 200: jsonResponse(EventSchema, "The event."), ...errorResponses },
    }),
    async (c) => {
      const p = requireRole(c, ...ROLES);
      return c.json(serializeEvent(renderCtx(c), await getEvent(c.env, p.accountId, pathId(c))));
    },
  );
}
