import { createRoute } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../http/context";
import { type FieldErrors, notFound, ValidationError } from "../../http/errors";
import { pathId, requireRole } from "../../http/guards";
import {
  defineRoute,
  errorResponses,
  jsonResponse,
  type Router,
  security,
  uuidParam,
} from "../../http/openapi";
import { DEFAULT_PAGE_SIZE, pageSchema } from "../../http/pagination";
import { renderCtx } from "../../http/serialize";
import { isUuid } from "../../lib/ids";
import { accountHasWebhooks, dispatchSoon } from "../../services/events/dispatch";
import { EVENT_TYPES } from "../../services/events/outbox";
import { EventListQuery, type EventRow, EventSchema, serializeEvent } from "./schema";

const tags = ["Events"];
const ROLES = ["admin", "manager", "integration"] as const;

/** Seconds an event waits before `/events/` lists it (UPDATED_AT_SETTLE_SECONDS, contract §4). */
function settleMs(env: Env) {
  const n = Number(env.UPDATED_AT_SETTLE_SECONDS);
  return (Number.isFinite(n) && n >= 0 ? n : 5) * 1000;
}

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
      const q = c.req.valid("query");
      const errors: FieldErrors = {};
      for (const key of ["after", "before"] as const) {
        if (q[key] !== undefined && !isUuid(q[key]))
          errors[key] = ["Invalid cursor: an event id is expected."];
      }
      if (q.after && q.before) errors.non_field_errors = ["Give `after` or `before`, not both."];
      const types = q.type
        ?.split(",")
        .map((t) => t.trim())
        .filter(Boolean);
      const unknown = types?.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t)) ?? [];
      if (unknown.length) errors.type = unknown.map((t) => `"${t}" is not a valid event name.`);
      if (Object.keys(errors).length) throw new ValidationError(errors);

      const size = q.page_size ?? DEFAULT_PAGE_SIZE;
      const where = ["account_id = ?", "created_at <= ?"];
      const params: unknown[] = [p.accountId, Date.now() - settleMs(c.env)];
      if (types?.length) {
        where.push("type IN (SELECT value FROM json_each(?))");
        params.push(JSON.stringify(types));
      }
      const backwards = !!q.before;
      if (q.after) {
        where.push("id > ?");
        params.push(q.after.toLowerCase());
      }
      if (q.before) {
        where.push("id < ?");
        params.push(q.before.toLowerCase());
      }
      const { results } = await c.env.DB.prepare(
        `SELECT id, account_id, type, payload, created_at FROM events WHERE ${where.join(" AND ")}
         ORDER BY id ${backwards ? "DESC" : "ASC"} LIMIT ?`,
      )
        .bind(...params, size + 1)
        .all<EventRow>();
      const more = results.length > size;
      const rows = more ? results.slice(0, size) : results;
      if (backwards) rows.reverse();

      const link = (key: "after" | "before", id: string) => {
        const u = new URL(c.req.url);
        u.searchParams.delete("after");
        u.searchParams.delete("before");
        u.searchParams.set(key, id);
        return u.toString();
      };
      const first = rows[0];
      const last = rows[rows.length - 1];
      let next: string | null = null;
      let previous: string | null = null;
      if (backwards) {
        if (last) next = link("after", last.id);
        if (more && first) previous = link("before", first.id);
      } else {
        if (more && last) next = link("after", last.id);
        if (q.after && first) previous = link("before", first.id);
      }
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
      const row = await c.env.DB.prepare(
        "SELECT id, account_id, type, payload, created_at FROM events WHERE id = ? AND account_id = ?",
      )
        .bind(pathId(c), p.accountId)
        .first<EventRow>();
      if (!row) throw notFound();
      return c.json(serializeEvent(renderCtx(c), row));
    },
  );
}
