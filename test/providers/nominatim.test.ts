import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { handleGeocodeBatch } from "../../src/queues/geocode/handler";
import type { GeocodeMessage } from "../../src/queues/geocode/message";
import { GeocodingUnavailableError, geocoderFromEnv } from "../../src/services/addresses/geocoding";
import { createTask } from "../../src/services/tasks";
import { adminPrincipal, call, newAccount } from "../helpers";
import { scopedTo } from "../stored";
import { sampleTask } from "../tasks/helpers";

// Nominatim's search and reverse API as served by the local stand-in (test/providers/server.mjs).
const server = inject("providers").url;
const nominatim = (path = "nominatim") =>
  geocoderFromEnv({ GEOCODING_PROVIDER: "nominatim", GEOCODING_URL: `${server}/${path}` });

describe("Nominatim provider against a server speaking Nominatim's API", () => {
  it("geocodes, reverse-geocodes, and finds nothing where the server finds nothing", async () => {
    const g = nominatim();
    expect(g.name).toBe("nominatim");
    expect(await g.geocode("10 Downing Street, London")).toEqual({
      formattedAddress:
        "10 Downing Street, Downing Street, Westminster, Millbank, London, Greater London, England, SW1A 2AA, United Kingdom",
      location: { type: "Point", coordinates: [-0.12770820958562096, 51.50344025] },
    });
    expect(await g.reverse(24.7455, 59.4371)).toMatchObject({
      formattedAddress: expect.stringMatching(/^Tallinna raekoda/),
    });
    expect(await g.geocode("Nowhere Street 1, Atlantis")).toBeNull();
    expect(await g.reverse(-150, -40)).toBeNull();
    await expect(nominatim("nominatim-down").geocode("Helsinki")).rejects.toBeInstanceOf(
      GeocodingUnavailableError,
    );
  });

  it("a task written while Nominatim is down is geocoded by the queue once it is back", async () => {
    const acc = await newAccount();
    const sent: GeocodeMessage[] = [];
    const row = await createTask(
      await scopedTo(acc.account.id),
      adminPrincipal(acc),
      sampleTask(acc, { address: { raw_address: "10 Downing Street, London" } }) as never,
      { zone: null, baseUrl: "https://api.test" },
      {
        geocoder: nominatim("nominatim-down"),
        geocodeQueue: { sendBatch: async (m) => void sent.push(...[...m].map((x) => x.body)) },
      },
    );
    expect(row.geocode_failed_at).toEqual(expect.any(Number));
    expect(sent).toHaveLength(1);
    const batch = createMessageBatch<GeocodeMessage>("fd-geocode", [
      { id: "m0", timestamp: new Date(), attempts: 1, body: sent[0] },
    ]);
    await handleGeocodeBatch(batch, env, { geocoder: nominatim() });
    expect(getQueueResult(batch, createExecutionContext())).resolves.toMatchObject({ explicitAcks: ["m0"] });
    const task = await call(`/tasks/${row.id}/`, { token: acc.admin.token });
    expect(task.body.address).toMatchObject({
      raw_address: "10 Downing Street, London",
      formatted_address: expect.stringMatching(/^10 Downing Street, .*United Kingdom$/),
      location: { type: "Point", coordinates: [-0.12770820958562096, 51.50344025] },
      geocoding_provider: "nominatim",
      geocode_failed_at: null,
    });
  });
});
