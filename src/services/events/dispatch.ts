import { perDatabase } from "../../db/shards";
import { DELIVERY_UUIDS, EVENT_UUIDS, selectColumns, uuidBytes } from "../../db/uuid-bytes";
import { type DeliveryKey, enqueueDeliveries } from "../../queues/webhooks/message";

/**
 * The outbox relay. A change commits its event row in the same D1 batch (outbox.ts), but the
 * code that made the change cannot reliably enqueue afterwards (a crash in between would lose
 * the event). So events are moved to webhooks from here, by whoever gets there first: a
 * `waitUntil` right after writes (`dispatchSoon`) and the cron sweeper every minute. Both are
 * safe to run at once: deliveries are unique per (webhook_id, event_id) and are inserted in
 * the same batch as the guarded `dispatched_at IS NULL` update, and only the inserter of a
 * delivery enqueues it.
 */

const MAX_EVENTS_PER_ROUND = 100;
/** A delivery's key as a queue message carries it (ids as text): a select list. */
const DELIVERY_KEY_COLUMNS = selectColumns(["webhook_id", "event_id", "legacy_id"], DELIVERY_UUIDS);
/** How overdue a pending delivery must be before the sweeper assumes its message was lost. */
export const STALE_DELIVERY_MS = 2 * 60_000;

type PendingEvent = { id: string; account_id: string; type: string; created_at: number };
type HookFilter = {
  id: string;
  account_id: string;
  events: string;
  state: string;
  form_response_events: number;
  created_at: number;
};

/**
 * Should `hook` get `event`? `events` empty = every event; `form_response.completed` goes to
 * the webhooks with `form_response_events`, whatever their `events` list says (contract §15),
 * and to no other. A webhook never gets events older than itself (an undispatched backlog is
 * not replayed into a new webhook).
 */
export function wants(hook: HookFilter, ev: Pick<PendingEvent, "type" | "created_at">): boolean {
  if (hook.created_at > ev.created_at) return false;
  if (ev.type === "form_response.completed") return Boolean(hook.form_response_events);
  const names = JSON.parse(hook.events || "[]") as string[];
  return names.length === 0 || names.includes(ev.type);
}

/**
 * Turns up to `limit` undispatched events (oldest first) into per-webhook deliveries and
 * queue messages. Deliveries of a `failed` webhook are created `held`. Returns how many
 * events were looked at (a full round means there may be more).
 */
export const dispatchPendingEvents = perDatabase(async function dispatchPendingEvents(
  env: Env,
  limit = MAX_EVENTS_PER_ROUND,
): Promise<{ events: number; deliveries: number }> {
  const db = env.DB;
  const { results: events } = await db
    .prepare(
      `SELECT ${selectColumns(["id", "account_id", "type", "created_at"], EVENT_UUIDS)} FROM events
       WHERE dispatched_at IS NULL ORDER BY created_at LIMIT ?`,
    )
    .bind(Math.max(1, Math.min(limit, MAX_EVENTS_PER_ROUND)))
    .all<PendingEvent>();
  if (!events.length) return { events: 0, deliveries: 0 };

  const accounts = [...new Set(events.map((e) => e.account_id))];
  const { results: hooks } = await db
    .prepare(
      `SELECT id, account_id, events, state, form_response_events, created_at FROM webhooks
       WHERE account_id IN (SELECT value FROM json_each(?))`,
    )
    .bind(JSON.stringify(accounts))
    .all<HookFilter>();
  const byAccount = new Map<string, HookFilter[]>();
  for (const h of hooks) byAccount.set(h.account_id, [...(byAccount.get(h.account_id) ?? []), h]);

  const now = Date.now();
  const rows: unknown[][] = [];
  for (const ev of events) {
    for (const h of byAccount.get(ev.account_id) ?? []) {
      if (!wants(h, ev)) continue;
      const active = h.state === "active";
      // [webhook_id, event_id, state, next_attempt_at]
      rows.push([h.id, ev.id, active ? "pending" : "held", active ? now : null]);
    }
  }
  // One JSON parameter per statement: D1 binds at most 100 parameters, a round has more rows.
  // `WHERE true` is SQLite's required disambiguation of INSERT ... SELECT ... ON CONFLICT.
  const [inserted] = await db.batch<DeliveryKey & { state: string }>([
    db
      .prepare(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, state, attempts, next_attempt_at, last_error, created_at, updated_at)
         SELECT ${uuidBytes("value ->> 0")}, ${uuidBytes("value ->> 1")}, value ->> 2, 0, value ->> 3, '', ?, ?
         FROM json_each(?) WHERE true
         ON CONFLICT (webhook_id, event_id) DO NOTHING
         RETURNING ${DELIVERY_KEY_COLUMNS}, state`,
      )
      .bind(now, now, JSON.stringify(rows)),
    // By the events' primary key (account_id, id).
    db
      .prepare(
        `UPDATE events SET dispatched_at = ?
         WHERE (account_id, id) IN (SELECT ${uuidBytes("value ->> 0")}, ${uuidBytes("value ->> 1")} FROM json_each(?))
           AND dispatched_at IS NULL`,
      )
      .bind(now, JSON.stringify(events.map((e) => [e.account_id, e.id]))),
  ]);
  const toSend = inserted.results.filter((r) => r.state === "pending");
  try {
    await enqueueDeliveries(env, toSend, now);
  } catch (err) {
    // Committed but not queued: the sweeper finds these pending deliveries overdue and re-queues them.
    log("webhook enqueue failed; the sweeper will re-queue", err);
  }
  return { events: events.length, deliveries: inserted.results.length };
});

/**
 * Pending deliveries whose message is presumed lost (overdue by STALE_DELIVERY_MS: an enqueue
 * that failed after its commit, a chained wait that was dropped) get a fresh `next_attempt_at`
 * and a new message. The fresh value is the fence: should the old message turn up after all,
 * it no longer matches and is dropped, so a sweep never causes a second send.
 */
export const requeueStaleDeliveries = perDatabase(async function requeueStaleDeliveries(
  env: Env,
  limit = 500,
): Promise<number> {
  const now = Date.now();
  const { results } = await env.DB.prepare(
    `UPDATE webhook_deliveries SET next_attempt_at = ?, updated_at = ?
     WHERE (webhook_id, event_id) IN (
       SELECT webhook_id, event_id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at < ? LIMIT ?)
     RETURNING ${DELIVERY_KEY_COLUMNS}`,
  )
    .bind(now, now, now - STALE_DELIVERY_MS, limit)
    .all<DeliveryKey>();
  await enqueueDeliveries(env, results, now);
  return results.length;
});

/** The cron sweeper (every minute, wrangler.jsonc `triggers`): drain the outbox, then repair. */
export const sweepWebhooks = perDatabase(async function sweepWebhooks(env: Env, budgetMs = 20_000) {
  const started = Date.now();
  let events = 0;
  for (;;) {
    const round = await dispatchPendingEvents(env);
    events += round.events;
    if (round.events < MAX_EVENTS_PER_ROUND || Date.now() - started > budgetMs) break;
  }
  const requeued = await requeueStaleDeliveries(env);
  return { events, requeued };
});

/**
 * Whether an account has webhooks, remembered per isolate for a few seconds: the relay after a
 * write is pointless for an account without any (its events are born dispatched, outbox.ts),
 * and asking costs a D1 round trip per write. A webhook created meanwhile in another isolate is
 * seen within HOOKS_TTL_MS; events it misses in between are relayed by the cron sweeper.
 */
const HOOKS_TTL_MS = 5_000;
const hooksSeen = new Map<string, { has: boolean; at: number }>();

export async function accountHasWebhooks(env: Env, accountId: string): Promise<boolean> {
  const now = Date.now();
  const known = hooksSeen.get(accountId);
  if (known && now - known.at < HOOKS_TTL_MS) return known.has;
  const row = await env.DB.prepare("SELECT 1 AS x FROM webhooks WHERE account_id = ? LIMIT 1")
    .bind(accountId)
    .first();
  if (hooksSeen.size > 10_000) hooksSeen.clear();
  hooksSeen.set(accountId, { has: !!row, at: now });
  return !!row;
}

/** This isolate created or removed a webhook of the account: forget what it knew. */
export const forgetWebhooksOf = (accountId: string) => hooksSeen.delete(accountId);

/** How long one relay after a write may keep draining (waitUntil allows 30 s after the response). */
const DRAIN_BUDGET_MS = 20_000;
let relaying = false;
let rerun = false;

/**
 * For services: relay right after a write, without delaying the response. Coalesced per
 * isolate: while a relay runs, further calls only ask it to go round once more, so a burst of
 * writes costs a few relay rounds, not one per write, and no event written meanwhile is left
 * for the cron. The relay's promise stays with the request that started it (its `waitUntil`
 * keeps it alive): a later request never awaits it, because workerd refuses to let one
 * request wait on a promise another request created.
 */
export function dispatchSoon(ctx: { waitUntil(p: Promise<unknown>): void }, env: Env) {
  if (relaying) {
    rerun = true;
    return;
  }
  relaying = true;
  const relay = (async () => {
    // Drain: keep going while rounds come back full or new writes asked for another round,
    // within a budget (the cron picks up anything left).
    const started = Date.now();
    let full = false;
    try {
      do {
        rerun = false;
        full = (await dispatchPendingEvents(env)).events >= MAX_EVENTS_PER_ROUND;
      } while ((rerun || full) && Date.now() - started < DRAIN_BUDGET_MS);
    } finally {
      // Cleared in the same turn as the last check of `rerun`, so no request's ask is lost between.
      relaying = false;
    }
  })().catch((err) => log("webhook dispatch failed", err));
  ctx.waitUntil(relay);
}

function log(message: string, err: unknown) {
  console.error(JSON.stringify({ level: "error", error: `${message}: ${String(err)}` }));
}
