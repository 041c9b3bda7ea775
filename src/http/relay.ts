import type { MiddlewareHandler } from "hono";
import { sessionOf } from "../db/session";
import { accountHasWebhooks, dispatchSoon } from "../services/events/dispatch";
import { pokeAccount, streamOf } from "../services/live";
import { accountHasTemplates, relayNotifications } from "../services/notifications/send";
import type { AppEnv } from "./context";

/**
 * Relays the outbox right after a successful write, without delaying the response (the cron
 * sweeper is the safety net, this makes delivery prompt): webhook events for accounts with
 * webhooks, and the notifications the write planned (contract §18) for accounts with active
 * templates. Registered in app.ts with the other middleware, before the routes.
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
  // Positions write no outbox rows: their stream object sends `worker.position` and makes the
  // `task.late` events itself (contract §28), so a phone's position costs no relay.
  if (c.req.path === "/positions/") return;
  // A worker on duty changed its own list (a completion moves its next stops' ETAs): its tasks
  // are checked for lateness within seconds (contract §28). A dispatcher's writes reach the
  // account's object through the poke below when a console is open, else the cron's check.
  if (p.onDuty)
    ctx.waitUntil(
      streamOf(c.env, p.accountId)
        .checkLate(p.accountId, [p.userId], c.get("baseUrl"))
        .catch(() => undefined),
    );
  // What follows runs after the answer: not the request's round trips (db/session.ts).
  sessionOf(c.env.DB)?.answered();
  ctx.waitUntil(
    accountHasWebhooks(c.env, p.accountId)
      .then((has) => {
        if (has) dispatchSoon(ctx, c.env);
      })
      .catch(() => undefined),
  );
  // Auto-assign (contract §29): a task this write left unassigned is placed within seconds.
  if (p.account.autoAssign)
    ctx.waitUntil(
      streamOf(c.env, p.accountId)
        .autoAssignSoon(p.accountId, c.get("baseUrl"))
        .catch(() => undefined),
    );
  // A live stream opened on the account lately: its object sends what this write added.
  if (p.account.live) ctx.waitUntil(pokeAccount(c.env, p.accountId).catch(() => undefined));
  const baseUrl = c.get("baseUrl");
  ctx.waitUntil(
    accountHasTemplates(c.env, p.accountId)
      .then((has) => (has ? relayNotifications(c.env, baseUrl, { accountId: p.accountId }) : 0))
      .catch(() => undefined),
  );
};
