import { messageEnv } from "../../db/shards";
import { DELIVERY_UUIDS, selectColumns, uuidBytes, uuidText } from "../../db/uuid-bytes";
import { type DeliveryMessage, messageOf } from "../../queues/webhooks/message";
import { BASE_JOIN, PAYLOAD_COLUMNS, payloadText } from "../events/payloads";
import { allowPrivate } from ".";
import {
  MAX_QUEUE_DELAY_SECONDS,
  retryAfterSeconds,
  retrySchedule,
  timeoutMs as timeoutSetting,
} from "./schedule";
import { openSecret } from "./secret-box";
import { signPayload } from "./signing";
import { allowedPorts, webhookUrlError } from "./ssrf";

/** SQL: a delivery by its key (bound as text, stored as bytes: db/uuid-bytes.ts). */
const DELIVERY_KEY = `webhook_id = ${uuidBytes()} AND event_id = ${uuidBytes()}`;

export type DeliverOptions = {
  /** Outbound fetch; defaults to the global one, looked up at call time (tests spy on it). */
  fetch?: typeof fetch;
};

/**
 * A message may arrive a little before its delivery's `next_attempt_at` (queue delays are not
 * exact); past this margin it is early on purpose (a wait longer than Queues' 12 h cap) and is
 * sent back to the queue for the rest of the wait.
 */
const EARLY_TOLERANCE_MS = 30_000;
const MAX_ERROR_CHARS = 1000;
const BODY_SNIPPET_BYTES = 512;
const USER_AGENT = "field-dispatch-webhooks/1.0";

export type DeliveryOutcome =
  | "missing" // webhook or delivery deleted
  | "stale" // another message owns this delivery now, or it is no longer pending
  | "held" // the webhook is failed
  | "waiting" // early: sent back to the queue for the rest of the wait
  | "succeeded"
  | "retrying"
  | "failed"; // the webhook was failed by this delivery (410, last attempt, refused URL)

type Loaded = {
  /** The delivery's id: its event's id, or the id it was given before migration 0025. */
  id: string;
  webhook_id: string;
  event_id: string;
  state: string;
  attempts: number;
  next_attempt_at: number | null;
  url: string;
  secret: string;
  webhook_state: string;
  event_type: string;
  /** Packed JSON (formats/packed-json.ts), or JSON text stored before; with its base's. */
  payload: unknown;
  base_id: string | null;
  base_payload: unknown;
  event_created_at: number;
};

export type SendResult = { ok: boolean; status: number | null; error: string; retryAfter: number | null };

/**
 * One attempt of one delivery, fenced by the message's `due`: the message is acted on only
 * while the delivery is `pending` with `next_attempt_at = due`. Every reschedule, resume,
 * redelivery or sweep writes a new `next_attempt_at`, so any older message for the same
 * delivery becomes stale and is dropped, and a message redelivered by the queue after a crash
 * (before the outcome was written) still matches and sends again with the same `webhook-id`
 * (at-least-once; receivers deduplicate on `webhook-id`, Standard Webhooks "Idempotency").
 */
export async function processDelivery(
  env: Env,
  msg: DeliveryMessage,
  opts: DeliverOptions = {},
): Promise<DeliveryOutcome> {
  env = await messageEnv(env, (db) => deliveryExists(db, msg));
  const d = await env.DB.prepare(
    `SELECT COALESCE(d.legacy_id, ${uuidText("d.event_id")}) AS id, ${selectColumns(["webhook_id", "event_id"], DELIVERY_UUIDS, "d")},
            d.state, d.attempts, d.next_attempt_at,
            w.url, w.secret, w.state AS webhook_state, e.type AS event_type, ${PAYLOAD_COLUMNS}, e.created_at AS event_created_at
     FROM webhook_deliveries d JOIN webhooks w ON w.id = ${uuidText("d.webhook_id")}
       JOIN events e ON e.account_id = ${uuidBytes("w.account_id")} AND e.id = d.event_id ${BASE_JOIN}
     WHERE ${"deliveryId" in msg ? "d.legacy_id = ?" : `d.webhook_id = ${uuidBytes()} AND d.event_id = ${uuidBytes()}`}`,
  )
    .bind(...("deliveryId" in msg ? [msg.deliveryId] : [msg.webhookId, msg.eventId]))
    .first<Loaded>();
  if (!d) return "missing";
  if (d.state !== "pending" || d.next_attempt_at !== msg.due) return "stale";
  const now = Date.now();
  if (d.webhook_state !== "active") {
    await env.DB.prepare(
      `UPDATE webhook_deliveries SET state = 'held', next_attempt_at = NULL, updated_at = ?
       WHERE ${DELIVERY_KEY} AND state = 'pending' AND next_attempt_at = ?`,
    )
      .bind(now, d.webhook_id, d.event_id, msg.due)
      .run();
    return "held";
  }
  if (msg.due - now > EARLY_TOLERANCE_MS) {
    const wait = Math.min(Math.ceil((msg.due - now) / 1000), MAX_QUEUE_DELAY_SECONDS);
    await env.WEBHOOKS_QUEUE.send(msg, { delaySeconds: wait, contentType: "json" });
    return "waiting";
  }

  const attempt = d.attempts + 1;
  // The guard again at send time: the setting may have changed since the URL was accepted.
  const refused = webhookUrlError(d.url, allowPrivate(env), allowedPorts(env));
  if (refused) {
    await failWebhook(env, d, msg.due, {
      attempts: d.attempts,
      status: null,
      error: `URL refused: ${refused}`,
      failMessage: `URL refused at send time: ${refused}`,
    });
    return "failed";
  }

  const result = await send(
    { ...d, secret: await openSecret(env, d.webhook_id, d.secret) },
    timeoutSetting(env.WEBHOOK_TIMEOUT_SECONDS),
    opts.fetch,
  );
  const done = Date.now();
  if (result.ok) {
    await env.DB.prepare(
      `UPDATE webhook_deliveries SET state = 'succeeded', attempts = ?, last_status_code = ?, last_error = '',
         next_attempt_at = NULL, updated_at = ?
       WHERE ${DELIVERY_KEY} AND state = 'pending' AND next_attempt_at = ?`,
    )
      .bind(attempt, result.status, done, d.webhook_id, d.event_id, msg.due)
      .run();
    return "succeeded";
  }
  if (result.status === 410) {
    // 410 Gone: the receiver says the endpoint is gone for good (Standard Webhooks
    // "Retry schedule": disable the endpoint on 410); no further attempts.
    await failWebhook(env, d, msg.due, {
      attempts: attempt,
      status: 410,
      error: result.error,
      failMessage: "The endpoint answered 410 Gone.",
    });
    return "failed";
  }
  const schedule = retrySchedule(env.WEBHOOK_RETRY_SCHEDULE);
  if (attempt > schedule.length) {
    await failWebhook(env, d, msg.due, {
      attempts: attempt,
      status: result.status,
      error: result.error,
      failMessage: `Delivery ${d.id} failed after ${attempt} attempts; last error: ${result.error}`,
    });
    return "failed";
  }
  // Back-off from the schedule; a longer `Retry-After` from the receiver wins (429/503).
  const wait = Math.max(schedule[attempt - 1], result.retryAfter ?? 0);
  const nextDue = Math.max(done + wait * 1000, msg.due + 1);
  const updated = await env.DB.prepare(
    `UPDATE webhook_deliveries SET attempts = ?, last_status_code = ?, last_error = ?, next_attempt_at = ?, updated_at = ?
     WHERE ${DELIVERY_KEY} AND state = 'pending' AND next_attempt_at = ?`,
  )
    .bind(attempt, result.status, result.error, nextDue, done, d.webhook_id, d.event_id, msg.due)
    .run();
  // If this write lost (a sweep or a resume moved the delivery on), the winner owns the next message.
  if (updated.meta.changes === 1) {
    // A lost send leaves the delivery pending and overdue: the sweeper re-queues it.
    await env.WEBHOOKS_QUEUE.send(messageOf(d, nextDue), {
      delaySeconds: Math.min(Math.ceil((nextDue - done) / 1000), MAX_QUEUE_DELAY_SECONDS),
      contentType: "json",
    });
  }
  return "retrying";
}

/**
 * The delivery is `failed`, the webhook goes to `failed` (contract §9) and its other pending
 * deliveries are held, in one batch; the last two only if the first one won its fence.
 */
async function failWebhook(
  env: Env,
  d: Loaded,
  due: number,
  f: { attempts: number; status: number | null; error: string; failMessage: string },
) {
  const now = Date.now();
  const won = `EXISTS (SELECT 1 FROM webhook_deliveries WHERE ${DELIVERY_KEY} AND state = 'failed' AND updated_at = ?)`;
  await env.DB.batch([
    env.DB.prepare(
      `UPDATE webhook_deliveries SET state = 'failed', attempts = ?, last_status_code = ?, last_error = ?,
         next_attempt_at = NULL, updated_at = ?
       WHERE ${DELIVERY_KEY} AND state = 'pending' AND next_attempt_at = ?`,
    ).bind(f.attempts, f.status, f.error, now, d.webhook_id, d.event_id, due),
    env.DB.prepare(
      `UPDATE webhooks SET state = 'failed', failed_at = ?, fail_message = ?, updated_at = ?
       WHERE id = ? AND state = 'active' AND ${won}`,
    ).bind(now, f.failMessage.slice(0, MAX_ERROR_CHARS), now, d.webhook_id, d.webhook_id, d.event_id, now),
    env.DB.prepare(
      `UPDATE webhook_deliveries SET state = 'held', next_attempt_at = NULL, updated_at = ?
       WHERE webhook_id = ${uuidBytes()} AND state = 'pending' AND ${won}`,
    ).bind(now, d.webhook_id, d.webhook_id, d.event_id, now),
  ]);
}

/**
 * The HTTP request (Standard Webhooks "Sending"): `webhook-id` is the delivery id (the same
 * on every attempt), `webhook-timestamp` the attempt's time in seconds, the body
 * `{type, timestamp, data}` with `timestamp` the event's time (so the bytes are the same on
 * every attempt). Redirects are not followed (a 3xx is a failure: following one would let a
 * public URL forward the request inward, and the receiver should register its final URL).
 */
async function send(d: Loaded, timeoutMs: number, fetchImpl?: typeof fetch): Promise<SendResult> {
  const body = `{"type":${JSON.stringify(d.event_type)},"timestamp":${JSON.stringify(new Date(d.event_created_at).toISOString())},"data":${payloadText(d)}}`;
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "webhook-id": d.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await signPayload(d.secret, d.id, timestamp, body),
    // Not part of Standard Webhooks: lets a receiver resume `GET /events/?after=<id>` from here.
    "x-event-id": d.event_id,
  };
  const doFetch =
    fetchImpl ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  let res: Response;
  try {
    res = await doFetch(d.url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const name = (err as Error)?.name;
    const error =
      name === "TimeoutError" || name === "AbortError"
        ? `Timed out after ${timeoutMs / 1000} s.`
        : `Request failed: ${(err as Error)?.message ?? String(err)}`;
    return { ok: false, status: null, error: error.slice(0, MAX_ERROR_CHARS), retryAfter: null };
  }
  const ok = res.status >= 200 && res.status < 300;
  const snippet = ok ? "" : await readSnippet(res);
  if (ok) await res.body?.cancel().catch(() => {});
  let error = "";
  if (!ok) {
    error = `HTTP ${res.status}`;
    if (res.status >= 300 && res.status < 400) error += " (redirects are not followed)";
    if (snippet) error += `: ${snippet}`;
  }
  return {
    ok,
    status: res.status,
    error: error.slice(0, MAX_ERROR_CHARS),
    retryAfter: ok ? null : retryAfterSeconds(res.headers.get("retry-after"), Date.now()),
  };
}

/** The start of an error body, for the delivery log; never the whole (maybe huge) body. */
async function readSnippet(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < BODY_SNIPPET_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body that fails mid-way still leaves the status to report.
  } finally {
    reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) {
    bytes.set(c, off);
    off += c.byteLength;
  }
  return new TextDecoder().decode(bytes.slice(0, BODY_SNIPPET_BYTES)).replace(/\s+/g, " ").trim();
}

/** Whether `db` has the delivery a message names (where its account lives, db/shards.ts). */
const deliveryExists = (db: D1Database, msg: DeliveryMessage) =>
  db
    .prepare(`SELECT 1 FROM webhook_deliveries WHERE ${"deliveryId" in msg ? "legacy_id = ?" : DELIVERY_KEY}`)
    .bind(...("deliveryId" in msg ? [msg.deliveryId] : [msg.webhookId, msg.eventId]))
    .first();
