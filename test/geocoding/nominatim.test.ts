import { describe, expect, it } from "vitest";
import {
  GeocodingError,
  GeocodingUnavailableError,
  NominatimGeocoder,
  type NominatimOptions,
} from "../../src/services/addresses/geocoding";

type Call = { url: URL; init: RequestInit | undefined };

/** A fake `fetch` that records each request and answers with `respond`. */
type Respond = (url: URL, init: RequestInit | undefined) => Response | Promise<Response>;

function fakeFetch(respond: Respond) {
  const calls: Call[] = [];
  const fn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    calls.push({ url, init });
    return respond(url, init);
  }) as typeof fetch;
  return { fetch: fn, calls };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

// Trimmed answers of a Nominatim server (format=jsonv2).
const SEARCH_ANSWER = [
  {
    place_id: 258185553,
    licence: "Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright",
    osm_type: "way",
    osm_id: 1879842,
    lat: "51.50344025",
    lon: "-0.12770820958562096",
    category: "building",
    type: "yes",
    place_rank: 30,
    importance: 0.47,
    addresstype: "building",
    name: "10 Downing Street",
    display_name:
      "10 Downing Street, Downing Street, Westminster, Millbank, London, Greater London, England, SW1A 2AA, United Kingdom",
    boundingbox: ["51.5032573", "51.5036483", "-0.1278356", "-0.1273038"],
  },
];
const REVERSE_ANSWER = {
  place_id: 119432541,
  lat: "59.4370",
  lon: "24.7453",
  place_rank: 30,
  category: "amenity",
  type: "townhall",
  display_name: "Tallinna raekoda, 1, Raekoja plats, Vanalinn, Kesklinna linnaosa, Tallinn, 10146, Eesti",
};

function geocoderWith(respond: Respond, options: Partial<NominatimOptions> = {}) {
  const fake = fakeFetch(respond);
  const geocoder = new NominatimGeocoder({
    baseUrl: "https://geo.example.com",
    fetch: fake.fetch,
    ...options,
  });
  return { geocoder, calls: fake.calls };
}

describe("nominatim geocoder", () => {
  it("is named nominatim", () => {
    expect(geocoderWith(() => json([])).geocoder.name).toBe("nominatim");
  });

  it("searches with format=jsonv2, the query, limit=1 and the API key", async () => {
    const { geocoder, calls } = geocoderWith(() => json(SEARCH_ANSWER), { apiKey: "s3cret" });
    const r = await geocoder.geocode("  10 Downing Street, London  ");
    expect(calls).toHaveLength(1);
    const { url, init } = calls[0];
    expect(url.origin + url.pathname).toBe("https://geo.example.com/search");
    expect(url.searchParams.get("format")).toBe("jsonv2");
    expect(url.searchParams.get("q")).toBe("10 Downing Street, London");
    expect(url.searchParams.get("limit")).toBe("1");
    expect(url.searchParams.get("key")).toBe("s3cret");
    expect(init?.method).toBe("GET");
    expect(new Headers(init?.headers).get("User-Agent")).toMatch(/field-dispatch/);
    expect(new Headers(init?.headers).get("Accept")).toBe("application/json");
    expect(init?.signal).toBeInstanceOf(AbortSignal);
    expect(r).toEqual({
      formattedAddress:
        "10 Downing Street, Downing Street, Westminster, Millbank, London, Greater London, England, SW1A 2AA, United Kingdom",
      location: { type: "Point", coordinates: [-0.12770820958562096, 51.50344025] },
    });
  });

  it("reverse-geocodes with lat and lon", async () => {
    const { geocoder, calls } = geocoderWith(() => json(REVERSE_ANSWER));
    const r = await geocoder.reverse(24.7453, 59.437);
    const { url } = calls[0];
    expect(url.pathname).toBe("/reverse");
    expect(url.searchParams.get("format")).toBe("jsonv2");
    expect(url.searchParams.get("lat")).toBe("59.437");
    expect(url.searchParams.get("lon")).toBe("24.7453");
    expect(url.searchParams.has("key")).toBe(false);
    expect(r).toEqual({
      formattedAddress: REVERSE_ANSWER.display_name,
      location: { type: "Point", coordinates: [24.7453, 59.437] },
    });
  });

  it("keeps a base path and query parameters of the base URL", async () => {
    const { geocoder, calls } = geocoderWith(() => json(SEARCH_ANSWER), {
      baseUrl: "https://eu1.geo.example.com/v1/?accept-language=en",
      apiKey: "k",
      userAgent: "custom-agent/1.0",
    });
    await geocoder.geocode("Tallinn");
    const { url, init } = calls[0];
    expect(url.pathname).toBe("/v1/search");
    expect(url.searchParams.get("accept-language")).toBe("en");
    expect(url.searchParams.get("key")).toBe("k");
    expect(new Headers(init?.headers).get("User-Agent")).toBe("custom-agent/1.0");
  });

  it("returns null when nothing is found", async () => {
    expect(await geocoderWith(() => json([])).geocoder.geocode("nowhere at all")).toBeNull();
    expect(await geocoderWith(() => json({ error: "Unable to geocode" })).geocoder.reverse(0, 0)).toBeNull();
    expect(
      await geocoderWith(() => json({ error: "Unable to geocode" }, 404)).geocoder.geocode("x"),
    ).toBeNull();
    expect(
      await geocoderWith(() => json([{ display_name: "no coordinates" }])).geocoder.geocode("x"),
    ).toBeNull();
  });

  it("does not call the service for empty input or invalid coordinates", async () => {
    const { geocoder, calls } = geocoderWith(() => json(SEARCH_ANSWER));
    expect(await geocoder.geocode("   ")).toBeNull();
    expect(await geocoder.reverse(Number.NaN, 1)).toBeNull();
    expect(await geocoder.reverse(10, 95)).toBeNull();
    expect(calls).toHaveLength(0);
  });

  it.each([500, 502, 503, 504, 429, 408])("treats HTTP %i as temporarily unavailable", async (status) => {
    const { geocoder } = geocoderWith(() => new Response("busy", { status }));
    await expect(geocoder.geocode("Tallinn")).rejects.toBeInstanceOf(GeocodingUnavailableError);
    await expect(geocoder.reverse(24.7, 59.4)).rejects.toBeInstanceOf(GeocodingUnavailableError);
  });

  it("treats a network failure or a non-JSON answer as temporarily unavailable", async () => {
    const down = geocoderWith(() => {
      throw new TypeError("Network connection lost.");
    });
    await expect(down.geocoder.geocode("Tallinn")).rejects.toBeInstanceOf(GeocodingUnavailableError);
    const html = geocoderWith(() => new Response("<html>Bad gateway</html>", { status: 200 }));
    await expect(html.geocoder.geocode("Tallinn")).rejects.toBeInstanceOf(GeocodingUnavailableError);
  });

  it("times out", async () => {
    // A service that never answers; the fake honours the abort signal as the real fetch does.
    const { geocoder } = geocoderWith(
      (_url, init) =>
        new Promise<Response>((_, reject) => {
          init?.signal?.addEventListener("abort", () => reject(init.signal!.reason));
        }),
      { timeoutMs: 50 },
    );
    const error = await geocoder.geocode("Tallinn").catch((e) => e);
    expect(error).toBeInstanceOf(GeocodingUnavailableError);
    expect(error.message).toMatch(/timed out/);
  });

  it("reports a rejected key as a permanent error, without the key in the message", async () => {
    const { geocoder } = geocoderWith(() => json({ error: "Invalid key" }, 401), { apiKey: "s3cret" });
    const error = await geocoder.geocode("Tallinn").catch((e) => e);
    expect(error).toBeInstanceOf(GeocodingError);
    expect(error).not.toBeInstanceOf(GeocodingUnavailableError);
    expect(String(error.message)).not.toContain("s3cret");
  });

  it("rejects a base URL that is not http(s)", () => {
    expect(() => new NominatimGeocoder({ baseUrl: "not a url" })).toThrow(GeocodingError);
    expect(() => new NominatimGeocoder({ baseUrl: "ftp://geo.example.com" })).toThrow(GeocodingError);
  });
});
