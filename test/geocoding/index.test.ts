import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  GeocodingError,
  geocoderFromEnv,
  NominatimGeocoder,
  OfflineGeocoder,
} from "../../src/services/addresses/geocoding";

describe("geocoderFromEnv", () => {
  it("defaults to the offline provider, one per isolate", () => {
    const a = geocoderFromEnv({});
    expect(a).toBeInstanceOf(OfflineGeocoder);
    expect(a.name).toBe("offline");
    expect(geocoderFromEnv({ GEOCODING_PROVIDER: "" })).toBe(a);
    expect(geocoderFromEnv({ GEOCODING_PROVIDER: " Offline " })).toBe(a);
  });

  it("uses the Worker's settings", () => {
    expect(geocoderFromEnv(env).name).toBe("offline");
  });

  it("builds the nominatim provider from URL and key, with the given fetch", async () => {
    const urls: string[] = [];
    const fakeFetch = (async (input: RequestInfo | URL) => {
      urls.push(String(input));
      return Response.json([
        { lat: "59.437", lon: "24.7536", display_name: "Tallinn, Harju maakond, Eesti" },
      ]);
    }) as typeof fetch;
    const geocoder = geocoderFromEnv(
      { GEOCODING_PROVIDER: "nominatim", GEOCODING_URL: "https://geo.example.com/", GEOCODING_API_KEY: "k1" },
      fakeFetch,
    );
    expect(geocoder).toBeInstanceOf(NominatimGeocoder);
    expect(geocoder.name).toBe("nominatim");
    expect(await geocoder.geocode("Tallinn")).toEqual({
      formattedAddress: "Tallinn, Harju maakond, Eesti",
      location: { type: "Point", coordinates: [24.7536, 59.437] },
    });
    const url = new URL(urls[0]);
    expect(url.origin + url.pathname).toBe("https://geo.example.com/search");
    expect(url.searchParams.get("key")).toBe("k1");
  });

  it("refuses a nominatim provider without URL, and unknown providers", () => {
    expect(() => geocoderFromEnv({ GEOCODING_PROVIDER: "nominatim" })).toThrow(GeocodingError);
    expect(() => geocoderFromEnv({ GEOCODING_PROVIDER: "nominatim", GEOCODING_URL: " " })).toThrow(
      /GEOCODING_URL/,
    );
    expect(() => geocoderFromEnv({ GEOCODING_PROVIDER: "google" })).toThrow(/Unknown GEOCODING_PROVIDER/);
  });
});
