import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { selectAll, uuidText } from "../../src/db/uuid-bytes";
import worker from "../../src/index";
import {
  dispatchPendingEvents,
  requeueStaleDeliveries,
  STALE_DELIVERY_MS,
} from "../../src/services/events/dispatch";
import { eventStatement } from "../../src/services/events/outbox";
import { insertTask } from "../factories";
import { addUser, call, expectStatus, newAccount } from "../helpers";
import { stored } from "../stored";
import {
  createHook,
  deliveryRow,
  drive,
  envWith,
  expectAcked,
  fakeQueue,
  messageDeliveryId,
  mockReceiver,
  seedDelivery,
  waitFor,
} from "./support";

let receiver: ReturnType<typeof mockReceiver>;
beforeEach(() => {
  receiver = mockReceiver();
});
afterEach(() => receiver.restore());

const deliveriesOf = async (hookId: string) =>
  (
    await stored
      .prepare(
        `SELECT ${selectAll("webhook_deliveries", "d")}, e.type AS event_type FROM webhook_deliveries d
         JOIN webhooks w ON w.id = ${uuidText("d.webhook_id")} JOIN events e ON e.account_id = unhex(w.account_id, '-') AND e.id = d.event_id
         WHERE d.webhook_id = unhex(?, '-') ORDER BY d.created_at, d.event_id`,
      )
      .bind(hookId)
      .all<any>()
  ).results;

describe("a receiver sees every change, signed", () => {
  it("gets task_command.accepted and task.state_changed for a worker's accept, with the documented payload", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    const onlyState = await createHook(acc, { events: ["task.state_changed"] });
    const worker = await addUser(acc, "worker");
    const task = await insertTask(acc.account.id, { state: "assigned", assigneeId: worker.userId });
    const cmd = await call("/task_commands/", {
      token: worker.token,
      body: {
        task: task.url,
        external_id: `ext-${crypto.randomUUID()}`,
        time: new Date().toISOString(),
        action: "accept",
      },
    });
    expectStatus(cmd, 201);
    expect(cmd.body.state).toBe("accepted");

    // The relay (also run by the cron sweeper and after writes); a second run changes nothing.
    await dispatchPendingEvents(env);
    await dispatchPendingEvents(env);
    const got = await waitFor(
      () => receiver.at(hook.url).length >= 2 && receiver.at(hook.url),
      "two deliveries",
    );
    await waitFor(() => receiver.at(onlyState.url).length >= 1, "the filtered delivery");

    const types = got.map((r) => JSON.parse(r.body).type).sort();
    expect(types).toEqual(["task.state_changed", "task_command.accepted"]);
    expect(receiver.at(onlyState.url).map((r) => JSON.parse(r.body).type)).toEqual(["task.state_changed"]);

    const verifier = new Webhook(hook.secret);
    const log = await call(`/webhooks/${hook.id}/deliveries/`, { token: acc.admin.token });
    expectStatus(log, 200);
    for (const req of got) {
      expect(req.init.method).toBe("POST");
      expect(req.init.redirect).toBe("manual");
      expect(req.init.signal).toBeInstanceOf(AbortSignal);
      expect(req.headers["content-type"]).toBe("application/json");
      expect(req.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(Math.abs(Number(req.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
      // A Standard Webhooks verifier accepts it (and would reject a tampered body).
      expect(verifier.verify(req.body, req.headers)).toEqual(JSON.parse(req.body));
      expect(() => verifier.verify(req.body.replace("task", "tusk"), req.headers)).toThrow();

      // Exactly `{type, timestamp, data}`; data is the event's, as `/events/{id}/` shows it.
      const body = JSON.parse(req.body);
      expect(Object.keys(body)).toEqual(["type", "timestamp", "data"]);
      const ev = await call(`/events/${req.headers["x-event-id"]}/`, { token: acc.admin.token });
      expectStatus(ev, 200);
      expect(body).toEqual({ type: ev.body.type, timestamp: ev.body.created_at, data: ev.body.data });
      // Task events carry the full task inline (contract §9); command events carry the
      // command with its task inline.
      const inlineTask = body.type === "task.state_changed" ? body.data : body.data.task;
      expect(inlineTask).toMatchObject({
        id: task.id,
        url: task.url,
        state: "accepted",
        assignee: expect.any(String),
      });
      expect(inlineTask.address).toEqual(expect.objectContaining({ raw_address: expect.any(String) }));
      if (body.type === "task_command.accepted") {
        expect(body.data).toMatchObject({ ...cmd.body, task: inlineTask });
      }
      // webhook-id is the delivery's id, as the log shows it.
      const entry = log.body.results.find((d: any) => d.id === req.headers["webhook-id"]);
      expect(entry).toMatchObject({
        event_type: body.type,
        event: `https://api.test/events/${req.headers["x-event-id"]}/`,
      });
    }
    await waitFor(
      async () => (await deliveriesOf(hook.id)).every((d) => d.state === "succeeded"),
      "deliveries recorded",
    );
    const after = await call(`/webhooks/${hook.id}/deliveries/`, { token: acc.admin.token });
    expect(after.body.results).toHaveLength(2);
    for (const d of after.body.results) {
      expect(d).toMatchObject({
        webhook: `https://api.test/webhooks/${hook.id}/`,
        state: "succeeded",
        attempts: 1,
        last_status_code: 204,
        last_error: "",
        next_attempt_at: null,
      });
      expect(d.url).toBe(`https://api.test/webhooks/${hook.id}/deliveries/${d.id}/`);
      expect(d.event).toMatch(/^https:\/\/api\.test\/events\/[0-9a-f-]{36}\/$/);
    }
  });
});

describe("the relay (outbox → deliveries → queue)", () => {
  it("fans out once per webhook and event, even when two relays race", async () => {
    const acc = await newAccount();
    const all = await createHook(acc);
    const orders = await createHook(acc, { events: ["order.created"] });
    const forms = await createHook(acc, { form_response_events: true });
    const failed = await createHook(acc);
    expectStatus(
      await call(`/webhooks/${failed.id}/`, {
        method: "PATCH",
        token: acc.admin.token,
        body: { state: "failed" },
      }),
      200,
    );
    const other = await newAccount();
    const otherHook = await createHook(other);
    const stmts = [
      eventStatement(stored, {
        accountId: acc.account.id,
        type: "order.created",
        objectId: null,
        data: { o: 1 },
      }),
      eventStatement(stored, {
        accountId: acc.account.id,
        type: "task.deleted",
        objectId: null,
        data: { t: 1 },
      }),
      eventStatement(stored, {
        accountId: acc.account.id,
        type: "form_response.completed",
        objectId: null,
        data: { f: 1 },
      }),
    ];
    await stored.batch(stmts);
    const q1 = fakeQueue();
    const q2 = fakeQueue();
    await Promise.all([
      dispatchPendingEvents(envWith({ WEBHOOKS_QUEUE: q1.queue })),
      dispatchPendingEvents(envWith({ WEBHOOKS_QUEUE: q2.queue })),
    ]);
    const types = async (id: string) => (await deliveriesOf(id)).map((d) => d.event_type).sort();
    expect(await types(all.id)).toEqual(["order.created", "task.deleted"]);
    expect(await types(orders.id)).toEqual(["order.created"]);
    expect(await types(forms.id)).toEqual(["form_response.completed", "order.created", "task.deleted"]);
    expect(await types(failed.id)).toEqual(["order.created", "task.deleted"]);
    expect((await deliveriesOf(failed.id)).map((d) => d.state)).toEqual(["held", "held"]);
    expect(await types(otherHook.id)).toEqual([]);
    // Each pending delivery was queued at most once (only its inserter enqueues it).
    const queued = [...q1.sent, ...q2.sent].map((m) =>
      "eventId" in m.body ? `${m.body.webhookId}/${m.body.eventId}` : m.body.deliveryId,
    );
    expect(new Set(queued).size).toBe(queued.length);
    const pending = [all, orders, forms].flatMap((h) => h.id);
    for (const id of pending) for (const d of await deliveriesOf(id)) expect(d.state).not.toBe("held");
    const undispatched = await stored
      .prepare("SELECT COUNT(*) AS n FROM events WHERE account_id = unhex(?, '-') AND dispatched_at IS NULL")
      .bind(acc.account.id)
      .first<{ n: number }>();
    expect(undispatched!.n).toBe(0);
  });

  it("does not replay events older than the webhook", async () => {
    const acc = await newAccount();
    await eventStatement(stored, {
      accountId: acc.account.id,
      type: "task.created",
      objectId: null,
      data: {},
      now: Date.now() - 60_000,
    }).run();
    const hook = await createHook(acc);
    await dispatchPendingEvents(envWith({ WEBHOOKS_QUEUE: fakeQueue().queue }));
    expect(await deliveriesOf(hook.id)).toEqual([]);
  });

  it("the sweeper re-queues a delivery whose message was lost, and the old message goes stale", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    const lost = await seedDelivery(acc.account.id, hook.id, { due: Date.now() - STALE_DELIVERY_MS - 1000 });
    const recent = await seedDelivery(acc.account.id, hook.id, { due: Date.now() - 1000 });
    const q = fakeQueue();
    await requeueStaleDeliveries(envWith({ WEBHOOKS_QUEUE: q.queue }));
    const mine = q.sent.filter((m) =>
      [lost.deliveryId, recent.deliveryId].includes(messageDeliveryId(m.body)),
    );
    expect(mine).toHaveLength(1);
    expect(mine[0].body).toEqual({ webhookId: hook.id, eventId: lost.eventId, due: expect.any(Number) });
    const row = await deliveryRow(lost.deliveryId);
    expect(row.next_attempt_at).toBe(mine[0].body.due);
    expect(row.next_attempt_at).toBeGreaterThan(lost.due);

    // The original message turns up after all: stale, acked, nothing sent.
    const stale = await drive(env, [lost.message]);
    expectAcked(stale);
    expect(receiver.at(hook.url)).toHaveLength(0);
    // The new one delivers.
    const fresh = await drive(env, [mine[0].body]);
    expectAcked(fresh);
    expect(receiver.at(hook.url)).toHaveLength(1);
    expect(receiver.at(hook.url)[0].headers["webhook-id"]).toBe(lost.deliveryId);
    expect((await deliveryRow(lost.deliveryId)).state).toBe("succeeded");
  });

  it("the scheduled handler (cron) drains the outbox", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    await eventStatement(stored, {
      accountId: acc.account.id,
      type: "order.updated",
      objectId: null,
      data: {},
    }).run();
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "* * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect((await deliveriesOf(hook.id)).map((d) => d.event_type)).toEqual(["order.updated"]);
    await waitFor(() => receiver.at(hook.url).length === 1, "the cron-dispatched delivery");
  });
});

describe("delivery log and redeliver", () => {
  it("lists newest first with a state filter, reads one, and redelivers with the same webhook-id", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    const a = await seedDelivery(acc.account.id, hook.id, { state: "succeeded" });
    const b = await seedDelivery(acc.account.id, hook.id, { state: "held" });
    const list = await call(`/webhooks/${hook.id}/deliveries/`, { token: acc.admin.token });
    expectStatus(list, 200);
    expect(list.body.results.map((d: any) => d.id)).toEqual([b.deliveryId, a.deliveryId]);
    const held = await call(`/webhooks/${hook.id}/deliveries/?state=held`, { token: acc.admin.token });
    expect(held.body.results.map((d: any) => d.id)).toEqual([b.deliveryId]);
    expectStatus(await call(`/webhooks/${hook.id}/deliveries/?bogus=1`, { token: acc.admin.token }), 400);
    const one = await call(`/webhooks/${hook.id}/deliveries/${a.deliveryId}/`, { token: acc.admin.token });
    expectStatus(one, 200);
    expect(one.body).toMatchObject({ id: a.deliveryId, state: "succeeded", event_type: "task.created" });
    const other = await newAccount();
    expectStatus(
      await call(`/webhooks/${hook.id}/deliveries/${a.deliveryId}/`, { token: other.admin.token }),
      404,
    );

    const r = await call(`/webhooks/${hook.id}/deliveries/${a.deliveryId}/redeliver/`, {
      method: "POST",
      token: acc.admin.token,
    });
    expectStatus(r, 202);
    expect(r.body).toMatchObject({ id: a.deliveryId, state: "pending", attempts: 0 });
    const req = await waitFor(() => receiver.at(hook.url)[0], "the redelivery");
    expect(req.headers["webhook-id"]).toBe(a.deliveryId);
    await waitFor(async () => (await deliveryRow(a.deliveryId)).state === "succeeded", "redelivery recorded");
  });

  it("a delivery's id is its event's; one made before the re-keying keeps its own through retry, log and redeliver", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    const second = await createHook(acc);
    // Today's: the event's id, at both webhooks the event goes to (the Standard Webhooks message id).
    const fresh = await seedDelivery(acc.account.id, hook.id);
    await stored
      .prepare(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, state, attempts, last_error, created_at, updated_at)
       VALUES (unhex(?, '-'), unhex(?, '-'), 'succeeded', 1, '', ?, ?)`,
      )
      .bind(second.id, fresh.eventId, Date.now(), Date.now())
      .run();
    expect(fresh.deliveryId).toBe(fresh.eventId);
    for (const h of [hook, second]) {
      const one = await call(`/webhooks/${h.id}/deliveries/${fresh.eventId}/`, { token: acc.admin.token });
      expectStatus(one, 200);
      expect(one.body.id).toBe(fresh.eventId);
      expect(one.body.url).toMatch(new RegExp(`/webhooks/${h.id}/deliveries/${fresh.eventId}/$`));
    }
    // One made before: its queued message names it by its own id, which it keeps everywhere.
    const legacyId = "0190a6b2-1c3d-7e4f-8a5b-6c7d8e9f0a1b";
    const old = await seedDelivery(acc.account.id, hook.id, { legacyId });
    expectAcked(await drive(env, [old.message]));
    const sent = await waitFor(
      () => receiver.at(hook.url).find((r) => r.headers["webhook-id"] === legacyId),
      "legacy",
    );
    expect(sent.headers["x-event-id"]).toBe(old.eventId);
    const got = await call(`/webhooks/${hook.id}/deliveries/${legacyId}/`, { token: acc.admin.token });
    expectStatus(got, 200);
    expect(got.body).toMatchObject({ id: legacyId, state: "succeeded" });
    const page = await call(`/webhooks/${hook.id}/deliveries/?page_size=1`, { token: acc.admin.token });
    const walked: string[] = [page.body.results[0].id];
    let next = page.body.next;
    while (next) {
      const p = await call(next.replace(/^https?:\/\/[^/]+/, ""), { token: acc.admin.token });
      walked.push(...p.body.results.map((d: any) => d.id));
      next = p.body.next;
    }
    expect(walked.sort()).toEqual([fresh.eventId, legacyId].sort());
    const again = await call(`/webhooks/${hook.id}/deliveries/${legacyId}/redeliver/`, {
      method: "POST",
      token: acc.admin.token,
    });
    expectStatus(again, 202);
    expect(again.body.id).toBe(legacyId);
    await waitFor(
      () => receiver.at(hook.url).filter((r) => r.headers["webhook-id"] === legacyId).length === 2,
      "the legacy redelivery",
    );
    // Another account's admin finds neither.
    const other = await newAccount();
    expectStatus(
      await call(`/webhooks/${hook.id}/deliveries/${legacyId}/`, { token: other.admin.token }),
      404,
    );
  });

  it("refuses to redeliver through a failed webhook (activate it instead)", async () => {
    const acc = await newAccount();
    const hook = await createHook(acc);
    const a = await seedDelivery(acc.account.id, hook.id, { state: "succeeded" });
    await call(`/webhooks/${hook.id}/`, {
      method: "PATCH",
      token: acc.admin.token,
      body: { state: "failed" },
    });
    const r = await call(`/webhooks/${hook.id}/deliveries/${a.deliveryId}/redeliver/`, {
      method: "POST",
      token: acc.admin.token,
    });
    expectStatus(r, 400);
    expect(r.body.non_field_errors[0]).toMatch(/set its state to active/);
  });
});
