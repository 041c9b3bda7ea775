import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, vi } from "vitest";
import { selectAll } from "../../src/db/uuid-bytes";
import { uuidv7 } from "../../src/lib/ids";
import { handleWebhookBatch } from "../../src/queues/webhooks/handler";
import type { DeliveryMessage } from "../../src/queues/webhooks/message";
import { call, expectStatus, type TestAccount } from "../helpers";
import { dbOf, stored } from "../stored";

/** A public-looking receiver address, unique per test so background deliveries never mix. */
export const hookUrl = () => `https://hooks.example.com/${crypto.randomUUID()}`;

export type Received = { url: string; headers: Record<string, string>; body: string; init: RequestInit };

/**
 * The receiver: the Worker shares the test's global scope, so spying on the global fetch
 * catches its outbound requests (also those of the real queue consumer running alongside).
 */
export function mockReceiver(
  respond: (req: Received, n: number) => Response | Promise<Response> = () =>
    new Response(null, { status: 204 }),
) {
  const received: Received[] = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const req: Received = {
      url,
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      body: String(init?.body ?? ""),
      init: init ?? {},
    };
    received.push(req);
    return respond(req, received.filter((r) => r.url === url).length);
  });
  return {
    received,
    at: (url: string) => received.filter((r) => r.url === url),
    restore: () => spy.mockRestore(),
  };
}

type Truthy<T> = Exclude<T, false | null | undefined | 0 | "">;

/** Polls until `fn` gives a truthy value (the real queue consumer runs alongside the test). */
export async function waitFor<T>(fn: () => T | Promise<T>, what: string, ms = 15_000): Promise<Truthy<T>> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as Truthy<T>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A queue stand-in that records what the code under test enqueues. */
export function fakeQueue() {
  const sent: { body: DeliveryMessage; delaySeconds?: number }[] = [];
  const queue = {
    async send(body: DeliveryMessage, opts?: QueueSendOptions) {
      sent.push({ body, delaySeconds: opts?.delaySeconds });
    },
    async sendBatch(msgs: Iterable<MessageSendRequest<DeliveryMessage>>) {
      for (const m of msgs) sent.push({ body: m.body, delaySeconds: m.delaySeconds });
    },
    async metrics() {
      return { backlogCount: 0, backlogBytes: 0 };
    },
  };
  return { queue: queue as unknown as Queue, sent };
}

/** The test env with some bindings or settings replaced. */
export const envWith = (over: Partial<Env>): Env => ({ ...env, ...over }) as Env;

export async function createHook(acc: TestAccount, body: Record<string, unknown> = {}) {
  const r = await call("/webhooks/", { token: acc.admin.token, body: { url: hookUrl(), ...body } });
  expectStatus(r, 201);
  return r.body as { id: string; url: string; secret: string; [k: string]: unknown };
}

/** A webhook row written directly (to hold a URL the API would refuse). */
export async function insertHook(accountId: string, url: string, state = "active") {
  const id = uuidv7();
  const now = Date.now();
  await stored
    .prepare(
      `INSERT INTO webhooks (id, account_id, url, events, state, fail_message, form_response_events, secret, created_at, updated_at)
     VALUES (?, ?, ?, '[]', ?, '', 0, ?, ?, ?)`,
    )
    .bind(id, accountId, url, state, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", now, now)
    .run();
  return id;
}

/**
 * An already-dispatched event and its pending delivery, due now: consumer tests start here,
 * independent of whoever dispatches events.
 */
export async function seedDelivery(
  accountId: string,
  webhookId: string,
  opts: { type?: string; data?: unknown; due?: number; state?: string; legacyId?: string } = {},
) {
  const now = Date.now();
  const eventId = uuidv7(now);
  // A delivery's id is its event's (migration 0025), unless it was made before with one of its own.
  const deliveryId = opts.legacyId ?? eventId;
  const due = opts.due ?? now;
  const state = opts.state ?? "pending";
  const db = await dbOf(accountId);
  await db.batch([
    db
      .prepare(
        "INSERT INTO events (id, account_id, type, payload, created_at, dispatched_at) VALUES (unhex(?, '-'), unhex(?, '-'), ?, ?, ?, ?)",
      )
      .bind(eventId, accountId, opts.type ?? "task.created", JSON.stringify(opts.data ?? { n: 1 }), now, now),
    db
      .prepare(
        `INSERT INTO webhook_deliveries (legacy_id, webhook_id, event_id, state, attempts, next_attempt_at, last_error, created_at, updated_at)
       VALUES (?, unhex(?, '-'), unhex(?, '-'), ?, 0, ?, '', ?, ?)`,
      )
      .bind(opts.legacyId ?? null, webhookId, eventId, state, state === "pending" ? due : null, now, now),
  ]);
  const message: DeliveryMessage = opts.legacyId
    ? { deliveryId: opts.legacyId, due }
    : { webhookId, eventId, due };
  return { eventId, deliveryId, due, message };
}

/** A delivery's row by the id the API gives it (its event's id, or a legacy id). */
export const deliveryRow = (id: string) =>
  stored
    .prepare(
      `SELECT ${selectAll("webhook_deliveries", "d")} FROM webhook_deliveries d WHERE event_id = unhex(?1, '-') OR legacy_id = ?1`,
    )
    .bind(id)
    .first<any>();

/** The id a queue message names its delivery by (the event's id, or a legacy id). */
export const messageDeliveryId = (m: DeliveryMessage) => ("deliveryId" in m ? m.deliveryId : m.eventId);
export const webhookRow = (id: string) =>
  stored.prepare("SELECT * FROM webhooks WHERE id = ?").bind(id).first<any>();

/** Lets a delivery's wait elapse: its next attempt is due now, as when the queue delivers it on time. */
export async function elapse(msg: DeliveryMessage): Promise<DeliveryMessage> {
  const due = Date.now();
  await stored
    .prepare(
      "UPDATE webhook_deliveries SET next_attempt_at = ? WHERE (event_id = unhex(?2, '-') OR legacy_id = ?2) AND next_attempt_at = ?3",
    )
    .bind(due, messageDeliveryId(msg), msg.due)
    .run();
  return { ...msg, due };
}

/** Runs the consumer on one batch and returns what it acked and retried. */
export async function drive(e: Env, messages: DeliveryMessage[], attempts = 1) {
  const batch = createMessageBatch<DeliveryMessage>(
    "fd-webhooks",
    messages.map((body) => ({ id: `msg-${crypto.randomUUID()}`, timestamp: new Date(), attempts, body })),
  );
  const ctx = createExecutionContext();
  await handleWebhookBatch(batch, e);
  const result = await getQueueResult(batch, ctx);
  return { ...result, ids: batch.messages.map((m) => m.id) };
}

export function expectAcked(r: Awaited<ReturnType<typeof drive>>) {
  expect(r.retryMessages).toEqual([]);
  expect(r.explicitAcks.sort()).toEqual([...r.ids].sort());
}
