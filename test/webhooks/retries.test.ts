import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PRIVATE_URL_MESSAGE } from "../../src/services/webhooks/ssrf";
import { call, expectStatus, newAccount } from "../helpers";
import { scopedTo, stored, withDb } from "../stored";
import {
  createHook,
  deliveryRow,
  drive,
  elapse,
  envWith,
  expectAcked,
  fakeQueue,
  insertHook,
  mockReceiver,
  type Received,
  seedDelivery,
  waitFor,
  webhookRow,
} from "./support";

let receiver: ReturnType<typeof mockReceiver>;
beforeEach(() => {
  receiver = mockReceiver();
});
afterEach(() => receiver.restore());

/** Replaces the receiver's behaviour for this test. */
function respondWith(fn: (req: Received, n: number) => Response | Promise<Response>) {
  receiver.restore();
  receiver = mockReceiver(fn);
}

const near = (ms: number, target: number, slack = 3000) => Math.abs(ms - target) <= slack;

describe("retries", () => {
  it("retries after a 500 with the first back-off step, then succeeds with the same webhook-id and body", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    respondWith((_req, n) => (n === 1 ? new Response("boom", { status: 500 }) : new Response("ok")));
    const s = await seedDelivery(acc.account.id, hook.id, { data: { hello: "world" } });
    const q = fakeQueue();
    const e = envWith({ WEBHOOKS_QUEUE: q.queue });

    const first = await drive(e, [s.message]);
    expectAcked(first);
    const row = await deliveryRow(s.deliveryId);
    expect(row).toMatchObject({
      state: "pending",
      attempts: 1,
      last_status_code: 500,
      last_error: "HTTP 500: boom",
    });
    expect(near(row.next_attempt_at, Date.now() + 5000)).toBe(true);
    // The retry is a new message, due at the delivery's next attempt, delayed by the schedule's 5 s.
    expect(q.sent).toEqual([
      { body: { webhookId: hook.id, eventId: s.eventId, due: row.next_attempt_at }, delaySeconds: 5 },
    ]);

    // The first message, delivered again by the queue, is stale now: nothing is sent.
    expectAcked(await drive(e, [s.message], 2));
    expect(receiver.at(hook.url)).toHaveLength(1);

    expectAcked(await drive(e, [q.sent[0].body]));
    const [a, b] = receiver.at(hook.url);
    expect(b.headers["webhook-id"]).toBe(a.headers["webhook-id"]);
    expect(b.headers["webhook-id"]).toBe(s.deliveryId);
    expect(b.body).toBe(a.body);
    expect(await deliveryRow(s.deliveryId)).toMatchObject({
      state: "succeeded",
      attempts: 2,
      last_status_code: 200,
      last_error: "",
      next_attempt_at: null,
    });
    expect(q.sent).toHaveLength(1);
  });

  it("retries after a timeout (AbortSignal.timeout) and after a network error", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    respondWith((req, n) => {
      if (n === 1) throw new TypeError("Network connection lost.");
      // Hangs until the sender's timeout aborts it, as a slow receiver would.
      return new Promise<Response>((_resolve, reject) => {
        const signal = req.init.signal!;
        signal.addEventListener("abort", () => reject(signal.reason));
      });
    });
    const s = await seedDelivery(acc.account.id, hook.id);
    const q = fakeQueue();
    const e = envWith({ WEBHOOKS_QUEUE: q.queue, WEBHOOK_TIMEOUT_SECONDS: "0.2" });

    expectAcked(await drive(e, [s.message]));
    expect(await deliveryRow(s.deliveryId)).toMatchObject({
      attempts: 1,
      last_status_code: null,
      last_error: "Request failed: Network connection lost.",
    });
    expect(q.sent[0].delaySeconds).toBe(5);

    const started = Date.now();
    expectAcked(await drive(e, [q.sent[0].body]));
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(await deliveryRow(s.deliveryId)).toMatchObject({
      state: "pending",
      attempts: 2,
      last_status_code: null,
      last_error: "Timed out after 0.2 s.",
    });
    expect(q.sent[1].delaySeconds).toBe(300);
  });

  it("honours a longer Retry-After (seconds or HTTP-date), never a shorter one", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    const inAnHour = new Date(Date.now() + 3600_000).toUTCString();
    respondWith((_req, n) =>
      n === 1
        ? new Response(null, { status: 503, headers: { "Retry-After": "120" } })
        : n === 2
          ? new Response(null, { status: 429, headers: { "Retry-After": inAnHour } })
          : new Response(null, { status: 503, headers: { "Retry-After": "1" } }),
    );
    const s = await seedDelivery(acc.account.id, hook.id);
    const q = fakeQueue();
    const e = envWith({ WEBHOOKS_QUEUE: q.queue, WEBHOOK_RETRY_SCHEDULE: "5s,5s,5m" });
    await drive(e, [s.message]);
    expect(q.sent[0].delaySeconds).toBe(120);
    await drive(e, [await elapse(q.sent[0].body)]);
    expect(Math.abs(q.sent[1].delaySeconds! - 3600)).toBeLessThanOrEqual(2);
    expect((await deliveryRow(s.deliveryId)).last_status_code).toBe(429);
    await drive(e, [await elapse(q.sent[1].body)]);
    expect(q.sent[2].delaySeconds).toBe(300);
  });

  it("does not follow redirects: a 3xx is a failed attempt", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    respondWith(() => new Response(null, { status: 302, headers: { Location: "https://169.254.169.254/" } }));
    const s = await seedDelivery(acc.account.id, hook.id);
    const q = fakeQueue();
    await drive(envWith({ WEBHOOKS_QUEUE: q.queue }), [s.message]);
    expect(receiver.received.map((r) => r.url)).toEqual([hook.url]);
    expect(receiver.received[0].init.redirect).toBe("manual");
    expect(await deliveryRow(s.deliveryId)).toMatchObject({
      state: "pending",
      last_status_code: 302,
      last_error: "HTTP 302 (redirects are not followed)",
    });
    expect(q.sent).toHaveLength(1);
  });

  it("waits longer than Queues' 12 h cap by chaining messages", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    respondWith(() => new Response(null, { status: 500 }));
    const s = await seedDelivery(acc.account.id, hook.id);
    const q = fakeQueue();
    const e = envWith({ WEBHOOKS_QUEUE: q.queue, WEBHOOK_RETRY_SCHEDULE: "20h" });
    await drive(e, [s.message]);
    const row = await deliveryRow(s.deliveryId);
    expect(near(row.next_attempt_at, Date.now() + 20 * 3600_000)).toBe(true);
    expect(q.sent[0].delaySeconds).toBe(43_200);
    // The message comes back after 12 h, 8 h early: it goes back for the rest, nothing is sent.
    await stored
      .prepare("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE event_id = unhex(?, '-')")
      .bind(Date.now() + 8 * 3600_000, s.deliveryId)
      .run();
    const due = (await deliveryRow(s.deliveryId)).next_attempt_at;
    expectAcked(await drive(e, [{ ...s.message, due }]));
    expect(receiver.at(hook.url)).toHaveLength(1);
    expect(q.sent[1].body).toEqual({ ...s.message, due });
    expect(Math.abs(q.sent[1].delaySeconds! - 8 * 3600)).toBeLessThanOrEqual(2);
  });
});

describe("failure and resumption", () => {
  it("410 Gone fails the webhook at once and holds its other deliveries", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    respondWith(() => new Response("gone", { status: 410 }));
    const a = await seedDelivery(acc.account.id, hook.id);
    const b = await seedDelivery(acc.account.id, hook.id);
    const q = fakeQueue();
    const e = envWith({ WEBHOOKS_QUEUE: q.queue });
    expectAcked(await drive(e, [a.message]));
    expect(q.sent).toEqual([]);
    expect(await deliveryRow(a.deliveryId)).toMatchObject({
      state: "failed",
      attempts: 1,
      last_status_code: 410,
      last_error: "HTTP 410: gone",
    });
    expect(await deliveryRow(b.deliveryId)).toMatchObject({ state: "held", next_attempt_at: null });
    const got = await call(`/webhooks/${hook.id}/`, { token: acc.admin.token });
    expect(got.body).toMatchObject({ state: "failed", fail_message: "The endpoint answered 410 Gone." });
    expect(got.body.failed_at).toEqual(expect.any(String));
    // b's queued message finds it held: nothing is sent.
    expectAcked(await drive(e, [b.message]));
    expect(receiver.at(hook.url)).toHaveLength(1);
  });

  it("goes to failed after the last attempt, and resumes every held delivery when set back to active", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    let up = false;
    respondWith(() => new Response(null, { status: up ? 204 : 500 }));
    const a = await seedDelivery(acc.account.id, hook.id);
    const c = await seedDelivery(acc.account.id, hook.id, { due: Date.now() + 60_000 });
    const q = fakeQueue();
    const e = envWith({ WEBHOOKS_QUEUE: q.queue, WEBHOOK_RETRY_SCHEDULE: "1s,2s" });

    await drive(e, [a.message]);
    await drive(e, [q.sent[0].body]);
    expect(q.sent.map((m) => m.delaySeconds)).toEqual([1, 2]);
    expect((await webhookRow(hook.id)).state).toBe("active");
    await drive(e, [q.sent[1].body]);
    expect(q.sent).toHaveLength(2);
    expect(receiver.at(hook.url)).toHaveLength(3);
    expect(await deliveryRow(a.deliveryId)).toMatchObject({
      state: "failed",
      attempts: 3,
      last_status_code: 500,
    });
    expect(await deliveryRow(c.deliveryId)).toMatchObject({ state: "held" });
    const failed = await call(`/webhooks/${hook.id}/`, { token: acc.admin.token });
    expect(failed.body.state).toBe("failed");
    expect(failed.body.failed_at).toEqual(expect.any(String));
    expect(failed.body.fail_message).toBe(
      `Delivery ${a.deliveryId} failed after 3 attempts; last error: HTTP 500`,
    );

    // The receiver is back; an admin sets the webhook active: both deliveries go out (real queue).
    up = true;
    const r = await call(`/webhooks/${hook.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { state: "active" },
    });
    expectStatus(r, 200);
    expect(r.body).toMatchObject({ state: "active", failed_at: null, fail_message: "" });
    await waitFor(
      async () =>
        (await deliveryRow(a.deliveryId)).state === "succeeded" &&
        (await deliveryRow(c.deliveryId)).state === "succeeded",
      "resumed deliveries",
    );
    const ids = receiver.at(hook.url).map((x) => x.headers["webhook-id"]);
    expect(ids.filter((id) => id === a.deliveryId)).toHaveLength(4);
    expect(ids.filter((id) => id === c.deliveryId)).toHaveLength(1);
    expect(await deliveryRow(a.deliveryId)).toMatchObject({ attempts: 1, last_status_code: 204 });
  });

  it("a consumer crash between delivery and ack delivers again with the same webhook-id", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    const s = await seedDelivery(acc.account.id, hook.id);
    // The receiver answers 204, then the consumer dies before it can record the outcome.
    const scoped = await scopedTo(acc.account.id);
    const crashing = withDb(
      scoped,
      new Proxy(scoped.DB, {
        get(target, key) {
          if (key === "prepare") {
            return (sql: string) => {
              if (sql.includes("state = 'succeeded'")) throw new Error("isolate crashed");
              return target.prepare(sql);
            };
          }
          const v = Reflect.get(target, key);
          return typeof v === "function" ? v.bind(target) : v;
        },
      }),
    );
    const first = await drive(crashing, [s.message]);
    expect(first.explicitAcks).toEqual([]);
    expect(first.retryMessages.map((m) => m.msgId)).toEqual(first.ids);
    expect(await deliveryRow(s.deliveryId)).toMatchObject({ state: "pending", attempts: 0 });

    // The queue delivers the same message again.
    expectAcked(await drive(env, [s.message], 2));
    const [a, b] = receiver.at(hook.url);
    expect(receiver.at(hook.url)).toHaveLength(2);
    expect(a.headers["webhook-id"]).toBe(s.deliveryId);
    expect(b.headers["webhook-id"]).toBe(s.deliveryId);
    expect(b.body).toBe(a.body);
    expect(await deliveryRow(s.deliveryId)).toMatchObject({ state: "succeeded", attempts: 1 });
  });

  it("holds a delivery whose webhook failed while its message was queued; drops those of deleted webhooks", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    await call(`/webhooks/${hook.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { state: "failed" },
    });
    const s = await seedDelivery(acc.account.id, hook.id);
    expectAcked(await drive(env, [s.message]));
    expect((await deliveryRow(s.deliveryId)).state).toBe("held");

    const gone = await createHook(acc);
    const g = await seedDelivery(acc.account.id, gone.id);
    expectStatus(await call(`/webhooks/${gone.id}/`, { method: "DELETE", token: acc.admin.token }), 204);
    expectAcked(await drive(env, [g.message]));
    expect(await deliveryRow(g.deliveryId)).toBeNull();
    expect(receiver.received.filter((r) => r.url === hook.url || r.url === gone.url)).toEqual([]);
  });
});

describe("SSRF guard at send time", () => {
  it("refuses a private URL without sending and fails the webhook", async () => {
    const acc = await newAccount();
    const id = await insertHook(acc.account.id, "https://127.0.0.1/hook");
    const s = await seedDelivery(acc.account.id, id);
    expectAcked(await drive(env, [s.message]));
    expect(receiver.received.filter((r) => r.url.includes("127.0.0.1"))).toEqual([]);
    expect(await deliveryRow(s.deliveryId)).toMatchObject({
      state: "failed",
      attempts: 0,
      last_error: `URL refused: ${PRIVATE_URL_MESSAGE}`,
    });
    expect(await webhookRow(id)).toMatchObject({
      state: "failed",
      fail_message: `URL refused at send time: ${PRIVATE_URL_MESSAGE}`,
    });
  });

  it("sends to a local receiver when WEBHOOKS_ALLOW_PRIVATE is true", async () => {
    const acc = await newAccount();
    const url = `http://localhost:9/${crypto.randomUUID()}`;
    const id = await insertHook(acc.account.id, url);
    const s = await seedDelivery(acc.account.id, id);
    expectAcked(await drive(envWith({ WEBHOOKS_ALLOW_PRIVATE: "true" }), [s.message]));
    expect(receiver.at(url)).toHaveLength(1);
    expect((await deliveryRow(s.deliveryId)).state).toBe("succeeded");
  });
});
