import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { backoff, handleGeocodeBatch } from "../../src/queues/geocode/handler";
import type { GeocodeMessage, GeocodeQueue } from "../../src/queues/geocode/message";
import { type Geocoder, GeocodingUnavailableError } from "../../src/services/addresses/geocoding";
import { createContactAddress } from "../../src/services/contact-addresses";
import { createTask } from "../../src/services/tasks";
import { adminPrincipal, expectStatus, newAccount, storedEvents } from "../helpers";
import { scopedTo } from "../stored";
import { api, sampleTask } from "./helpers";

const BASE = "https://api.test";

const down: Geocoder = {
  name: "flaky",
  geocode: async () => {
    throw new GeocodingUnavailableError("provider down");
  },
  reverse: async () => {
    throw new GeocodingUnavailableError("provider down");
  },
};

const up: Geocoder = {
  name: "flaky",
  geocode: async (raw) => ({
    formattedAddress: `${raw} (found)`,
    location: { type: "Point", coordinates: [24.75, 59.44] },
  }),
  reverse: async () => ({ formattedAddress: "Somewhere", location: { type: "Point", coordinates: [0, 0] } }),
};

const nothing: Geocoder = { name: "flaky", geocode: async () => null, reverse: async () => null };

function recorder() {
  const sent: GeocodeMessage[] = [];
  return {
    sent,
    queue: {
      sendBatch: async (msgs: Iterable<MessageSendRequest<GeocodeMessage>>) => {
        for (const m of msgs) sent.push(m.body);
      },
    } satisfies GeocodeQueue,
  };
}

async function runQueue(messages: GeocodeMessage[], geocoder: Geocoder, attempts = 1) {
  const batch = createMessageBatch<GeocodeMessage>(
    "fd-geocode",
    messages.map((body, i) => ({ id: `m${i}`, timestamp: Date.now(), attempts, body })),
  );
  const ctx = createExecutionContext();
  await handleGeocodeBatch(batch, env, { geocoder });
  return getQueueResult(batch, ctx);
}

describe("geocoding failures never lose a task", () => {
  it("stores the task with geocode_failed_at, queues a retry, and the queue geocodes it later", async () => {
    const acc = await newAccount();
    const q = recorder();
    const row = await createTask(
      await scopedTo(acc.account.id),
      adminPrincipal(acc),
      sampleTask(acc) as never,
      { zone: null, baseUrl: BASE },
      { geocoder: down, geocodeQueue: q.queue },
    );
    expect(row.geocode_failed_at).toEqual(expect.any(Number));
    expect(row.geocoded_at).toBeNull();
    expect(q.sent).toEqual([{ accountId: acc.account.id, taskId: row.id, baseUrl: BASE }]);
    const stored = await api(`/tasks/${row.id}/`, { token: acc.admin.token });
    expectStatus(stored, 200);
    expect(stored.body.address).toMatchObject({ formatted_address: null, location: null, geocoded_at: null });

    // Still down: the message is retried with back-off, the task is unchanged.
    const stillDown = await runQueue(q.sent, down);
    expect(stillDown.retryMessages.map((m) => m.msgId)).toEqual(["m0"]);
    expect(stillDown.explicitAcks).toEqual([]);
    expect([1, 2, 3, 20].map(backoff)).toEqual([30, 60, 120, 3600]);

    const ok = await runQueue(q.sent, up);
    expect(ok.explicitAcks).toEqual(["m0"]);
    const after = await api(`/tasks/${row.id}/`, { token: acc.admin.token });
    expect(after.body.address).toMatchObject({
      raw_address: "Viru väljak 4, Tallinn, Estonia",
      formatted_address: "Viru väljak 4, Tallinn, Estonia (found)",
      location: { type: "Point", coordinates: [24.75, 59.44] },
      geocoded_at: expect.any(String),
      geocode_failed_at: null,
      geocoding_provider: "flaky",
    });
    const events = await storedEvents({ objectId: row.id });
    expect(events.map((e) => e.type)).toEqual(["task.created", "task.updated"]);
    expect(events[1].data.address.geocoded_at).toBe(after.body.address.geocoded_at);

    // A duplicate delivery finds nothing left to do.
    const again = await runQueue(q.sent, down);
    expect(again.explicitAcks).toEqual(["m0"]);
  });

  it("acks a message whose task is gone, and records 'not found' without retrying", async () => {
    const acc = await newAccount();
    const q = recorder();
    const row = await createTask(
      await scopedTo(acc.account.id),
      adminPrincipal(acc),
      sampleTask(acc) as never,
      { zone: null, baseUrl: BASE },
      { geocoder: down, geocodeQueue: q.queue },
    );
    const gone = await runQueue([{ accountId: acc.account.id, taskId: crypto.randomUUID() }], up);
    expect(gone.explicitAcks).toEqual(["m0"]);
    const notFound = await runQueue(q.sent, nothing);
    expect(notFound.explicitAcks).toEqual(["m0"]);
    const after = await api(`/tasks/${row.id}/`, { token: acc.admin.token });
    expect(after.body.address.geocode_failed_at > stored(row.geocode_failed_at)).toBe(true);
  });

  it("retries a contact address's geocoding the same way", async () => {
    const acc = await newAccount();
    const q = recorder();
    const ca = await createContactAddress(
      await scopedTo(acc.account.id),
      adminPrincipal(acc),
      { address: { raw_address: "Tartu, Estonia" } },
      { geocoder: down, geocodeQueue: q.queue },
    );
    expect(q.sent).toEqual([{ accountId: acc.account.id, contactAddressId: ca.id }]);
    const ok = await runQueue(q.sent, up);
    expect(ok.explicitAcks).toEqual(["m0"]);
    const after = await api(`/contact_addresses/${ca.id}/`, { token: acc.admin.token });
    expect(after.body.address).toMatchObject({
      formatted_address: "Tartu, Estonia (found)",
      geocode_failed_at: null,
    });
  });

  it("does not retry an address that cannot be found", async () => {
    const acc = await newAccount();
    const q = recorder();
    const row = await createTask(
      await scopedTo(acc.account.id),
      adminPrincipal(acc),
      sampleTask(acc) as never,
      { zone: null, baseUrl: BASE },
      { geocoder: nothing, geocodeQueue: q.queue },
    );
    expect(row.geocode_failed_at).toEqual(expect.any(Number));
    expect(q.sent).toEqual([]);
  });
});

const stored = (ms: number | null) => new Date(ms ?? 0).toISOString();
