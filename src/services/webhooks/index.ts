import { DELIVERY_UUIDS, selectAll, selectColumns, uuidBytes, uuidText } from "../../db/uuid-bytes";
import { type FieldErrors, nonFieldError, notFound, ValidationError } from "../../http/errors";
import { paginate, paginateByCreation } from "../../http/pagination";
import { uuidv7 } from "../../lib/ids";
import { type DeliveryKey, enqueueDeliveries } from "../../queues/webhooks/message";
import type { Principal } from "../auth/principal";
import { forgetWebhooksOf } from "../events/dispatch";
import { EVENT_TYPES } from "../events/outbox";
import { sealSecret } from "./secret-box";
import { newWebhookSecret } from "./signing";
import { allowedPorts, webhookUrlError } from "./ssrf";

export const WEBHOOK_STATES = ["active", "failed"] as const;
export type WebhookState = (typeof WEBHOOK_STATES)[number];

/**
 * Delivery states: `pending` (queued, or waiting for its next attempt), `succeeded`, `held`
 * (its webhook is `failed`; resumes when the webhook is set `active`) and `failed` (this
 * delivery used up its attempts or got 410 Gone and so failed the webhook; it resumes with
 * the held ones).
 */
export const DELIVERY_STATES = ["pending", "succeeded", "held", "failed"] as const;

export type WebhookRow = {
  id: string;
  account_id: string;
  url: string;
  /** JSON array of event names. */
  events: string;
  state: WebhookState;
  failed_at: number | null;
  fail_message: string;
  form_response_events: number;
  secret: string;
  created_by: string | null;
  created_at: number;
  updated_at: number;
};

export type DeliveryRow = {
  /** The row's key within its webhook: its event's id (what pages walk by). */
  id: string;
  webhook_id: string;
  event_id: string;
  /** The id a delivery made before migration 0025 was given (its `id` in the API), else null. */
  legacy_id: string | null;
  event_type: string;
  state: (typeof DELIVERY_STATES)[number];
  attempts: number;
  next_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string;
  created_at: number;
  updated_at: number;
};

/** The queue message: `due` is the delivery's `next_attempt_at` when it was sent (a fence). */

export const allowPrivate = (env: Env) => String(env.WEBHOOKS_ALLOW_PRIVATE).toLowerCase() === "true";

export type WebhookInput = {
  url?: string;
  events?: string[];
  form_response_events?: boolean;
  state?: WebhookState;
};

/** Field checks that need more than zod: the SSRF guard and known event names. */
function validate(env: Env, input: WebhookInput): string[] | undefined {
  const errors: FieldErrors = {};
  if (input.url !== undefined) {
    const err = webhookUrlError(input.url, allowPrivate(env), allowedPorts(env));
    if (err) errors.url = [err];
  }
  let events: string[] | undefined;
  if (input.events !== undefined) {
    const known = new Set<string>(EVENT_TYPES);
    const bad = input.events.filter((e) => !known.has(e));
    if (bad.length) {
      errors.events = bad.map((e) => `"${e}" is not a valid event name. Choices: ${EVENT_TYPES.join(", ")}.`);
    }
    events = [...new Set(input.events)];
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return events;
}

export async function createWebhook(env: Env, p: Principal, input: WebhookInput & { url: string }) {
  const events = validate(env, input) ?? [];
  const now = Date.now();
  const row: WebhookRow = {
    id: uuidv7(now),
    account_id: p.accountId,
    url: input.url,
    events: JSON.stringify(events),
    state: "active",
    failed_at: null,
    fail_message: "",
    form_response_events: input.form_response_events ? 1 : 0,
    secret: newWebhookSecret(),
    created_by: p.userId,
    created_at: now,
    updated_at: now,
  };
  await env.DB.prepare(
    `INSERT INTO webhooks (id, account_id, url, events, state, failed_at, fail_message, form_response_events, secret, created_by, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
    .bind(
      row.id,
      row.account_id,
      row.url,
      row.events,
      row.state,
      row.failed_at,
      row.fail_message,
      row.form_response_events,
      await sealSecret(env, row.id, row.secret),
      row.created_by,
      row.created_at,
      row.updated_at,
    )
    .run();
  forgetWebhooksOf(p.accountId);
  return row;
}

export async function getWebhook(env: Env, accountId: string, id: string): Promise<WebhookRow> {
  const row = await env.DB.prepare("SELECT * FROM webhooks WHERE id = ? AND account_id = ?")
    .bind(id, accountId)
    .first<WebhookRow>();
  if (!row) throw notFound();
  return row;
}

/**
 * PATCH (and PUT) of a webhook. `state`: `failed` holds its pending deliveries (a pause);
 * `active` on a failed webhook clears `failed_at`/`fail_message` and re-queues every held and
 * failed delivery with a fresh attempt count, so nothing that happened while it was failed
 * is lost (contract §9: "setting `state` back to `active` resumes it").
 */
export async function updateWebhook(env: Env, accountId: string, id: string, input: WebhookInput) {
  const events = validate(env, input);
  const before = await getWebhook(env, accountId, id);
  const now = Date.now();
  const sets: string[] = ["updated_at = ?"];
  const params: unknown[] = [now];
  if (input.url !== undefined) {
    sets.push("url = ?");
    params.push(input.url);
  }
  if (events !== undefined) {
    sets.push("events = ?");
    params.push(JSON.stringify(events));
  }
  if (input.form_response_events !== undefined) {
    sets.push("form_response_events = ?");
    params.push(input.form_response_events ? 1 : 0);
  }
  const resume = input.state === "active" && before.state === "failed";
  const pause = input.state === "failed" && before.state === "active";
  if (resume) sets.push("state = 'active'", "failed_at = NULL", "fail_message = ''");
  if (pause) {
    sets.push("state = 'failed'", "failed_at = ?", "fail_message = ?");
    params.push(now, "Set to failed through the API.");
  }
  const stmts: D1PreparedStatement[] = [
    env.DB.prepare(`UPDATE webhooks SET ${sets.join(", ")} WHERE id = ? AND account_id = ?`).bind(
      ...params,
      id,
      accountId,
    ),
  ];
  if (pause) stmts.push(holdPendingStatement(env, id, now));
  if (resume) {
    stmts.push(
      env.DB.prepare(
        `UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ?
         WHERE webhook_id = ${uuidBytes()} AND state IN ('held', 'failed')
         RETURNING ${selectColumns(["webhook_id", "event_id"], DELIVERY_UUIDS)}`,
      ).bind(now, now, id),
    );
  }
  const results = await env.DB.batch<DeliveryKey>(stmts);
  if (resume) {
    // A long outage can leave thousands held: the first ones are queued now, the rest are due
    // now and the sweeper queues them within a few minutes.
    await enqueueOrLeaveToSweeper(env, results[1].results.slice(0, RESUME_ENQUEUE_LIMIT), now);
  }
  return getWebhook(env, accountId, id);
}

/** Pending deliveries of a webhook that stops: they wait for it to be set active again. */
export function holdPendingStatement(env: Env, webhookId: string, now: number) {
  return env.DB.prepare(
    `UPDATE webhook_deliveries SET state = 'held', next_attempt_at = NULL, updated_at = ?
     WHERE webhook_id = ${uuidBytes()} AND state = 'pending'`,
  ).bind(now, webhookId);
}

export async function deleteWebhook(env: Env, accountId: string, id: string) {
  await getWebhook(env, accountId, id);
  // Queued messages of the deleted deliveries find no row and are dropped by the consumer.
  await env.DB.batch([
    env.DB.prepare(`DELETE FROM webhook_deliveries WHERE webhook_id = ${uuidBytes()}`).bind(id),
    env.DB.prepare("DELETE FROM webhooks WHERE id = ? AND account_id = ?").bind(id, accountId),
  ]);
  forgetWebhooksOf(accountId);
}

/**
 * Deliveries rows need their event's type for the log; the join goes through the primary key
 * of `events` (account_id, id), the account being the webhook's. `id` is the row's key in its
 * webhook (the event's id), what pages walk by.
 */
export const DELIVERY_SELECT = `SELECT ${selectAll("webhook_deliveries", "d")}, ${uuidText("d.event_id")} AS id, e.type AS event_type
  FROM webhook_deliveries d JOIN webhooks w ON w.id = ${uuidText("d.webhook_id")}
  JOIN events e ON e.account_id = ${uuidBytes("w.account_id")} AND e.id = d.event_id`;

type ListQuery = { cursor?: string; page_size?: number };

export function listWebhooks(env: Env, accountId: string, q: ListQuery, url: string) {
  return paginateByCreation<WebhookRow>({
    db: env.DB,
    select: "SELECT * FROM webhooks",
    where: ["account_id = ?"],
    params: [accountId],
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

/** A webhook's delivery log, newest first. */
export function listDeliveries(
  env: Env,
  accountId: string,
  webhookId: string,
  q: ListQuery & { state?: string },
  url: string,
) {
  const where = [`d.webhook_id = ${uuidBytes()}`, "w.account_id = ?"];
  const params: unknown[] = [webhookId, accountId];
  if (q.state) {
    where.push("d.state = ?");
    params.push(q.state);
  }
  // Newest event first, on the (webhook, event) unique index: event ids are UUIDv7, so this is
  // the order the deliveries were made in, and no second index is kept for it (contract §23).
  return paginate<DeliveryRow>({
    db: env.DB,
    select: DELIVERY_SELECT,
    where,
    params,
    sortExpr: "d.event_id",
    sortValue: (row) => row.event_id,
    idExpr: "d.event_id",
    sortParam: uuidBytes(),
    idParam: uuidBytes(),
    desc: true,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

/**
 * A delivery by the id the API gives it: its event's id (the primary key with the webhook),
 * or the id a delivery made before migration 0025 had (a partial index of those alone).
 */
export async function getDelivery(env: Env, accountId: string, webhookId: string, id: string) {
  const row =
    (await env.DB.prepare(
      `${DELIVERY_SELECT} WHERE d.webhook_id = ${uuidBytes()} AND d.event_id = ${uuidBytes()} AND w.account_id = ?`,
    )
      .bind(webhookId, id, accountId)
      .first<DeliveryRow>()) ??
    (await env.DB.prepare(
      `${DELIVERY_SELECT} WHERE d.legacy_id = ? AND d.legacy_id IS NOT NULL AND d.webhook_id = ${uuidBytes()} AND w.account_id = ?`,
    )
      .bind(id, webhookId, accountId)
      .first<DeliveryRow>());
  if (!row) throw notFound();
  return row;
}

/**
 * Sends a delivery again, whatever its state, with a fresh attempt count and the same
 * `webhook-id` (Standard Webhooks: a receiver that already processed it may skip it).
 */
export async function redeliver(env: Env, accountId: string, webhookId: string, id: string) {
  const webhook = await getWebhook(env, accountId, webhookId);
  const delivery = await getDelivery(env, accountId, webhookId, id);
  if (webhook.state !== "active") {
    throw nonFieldError("The webhook is failed: set its state to active first (that resumes this delivery).");
  }
  const now = Date.now();
  await env.DB.prepare(
    `UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ?
     WHERE webhook_id = ${uuidBytes()} AND event_id = ${uuidBytes()}`,
  )
    .bind(now, now, webhookId, delivery.event_id)
    .run();
  await enqueueOrLeaveToSweeper(env, [delivery], now);
  return getDelivery(env, accountId, webhookId, id);
}

const RESUME_ENQUEUE_LIMIT = 1000;

/**
 * For deliveries already committed as pending and due: a failed enqueue is not the caller's
 * error, since the sweeper re-queues overdue pending deliveries (dispatch.ts).
 */
async function enqueueOrLeaveToSweeper(env: Env, deliveries: DeliveryKey[], due: number) {
  try {
    await enqueueDeliveries(env, deliveries, due);
  } catch (err) {
    console.error(
      JSON.stringify({
        level: "error",
        error: `webhook enqueue failed; the sweeper will re-queue: ${String(err)}`,
      }),
    );
  }
}
