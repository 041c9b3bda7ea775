// An HTTP provider for a Nominatim-compatible service (Nominatim itself, or a hosted service
// with the same API such as LocationIQ): GET {baseUrl}/search and {baseUrl}/reverse, jsonv2.
// https://nominatim.org/release-docs/latest/api/Search/ and …/api/Reverse/

import {
  type GeocodeResult,
  type Geocoder,
  GeocodingError,
  GeocodingUnavailableError,
  validCoordinates,
} from "./types";

export const NOMINATIM_TIMEOUT_MS = 5_000;
const DEFAULT_USER_AGENT = "field-dispatch/0.1 (geocoding)";
/** Longer queries are not addresses; the public Nominatim rejects very long ones anyway. */
const MAX_QUERY_LENGTH = 500;

export type NominatimOptions = {
  /** e.g. `https://nominatim.example.com` or `https://eu1.locationiq.com/v1`; may carry query parameters. */
  baseUrl: string;
  /** Sent as the `key` query parameter when set. */
  apiKey?: string;
  /** Defaults to the global `fetch`; tests pass a fake. */
  fetch?: typeof fetch;
  /** Nominatim's usage policy asks for an identifying User-Agent. */
  userAgent?: string;
  /** Per-request timeout; default 5 s. */
  timeoutMs?: number;
};

/** One jsonv2 place: `lat`/`lon` are decimal strings. */
type NominatimPlace = {
  lat?: string | number;
  lon?: string | number;
  display_name?: string;
  error?: unknown;
};

export class NominatimGeocoder implements Geocoder {
  readonly name = "nominatim";
  private readonly baseUrl: URL;
  private readonly apiKey?: string;
  private readonly fetchImpl: typeof fetch;
  private readonly userAgent: string;
  private readonly timeoutMs: number;

  constructor(options: NominatimOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new GeocodingError("GEOCODING_URL is not a valid URL");
    }
    if (base.protocol !== "https:" && base.protocol !== "http:") {
      throw new GeocodingError("GEOCODING_URL must be an http(s) URL");
    }
    this.baseUrl = base;
    this.apiKey = options.apiKey || undefined;
    // Called unbound: workerd's fetch throws "Illegal invocation" when called as a method.
    const f = options.fetch ?? fetch;
    this.fetchImpl = (input, init) => f(input, init);
    this.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    this.timeoutMs = options.timeoutMs ?? NOMINATIM_TIMEOUT_MS;
  }

  async geocode(rawAddress: string): Promise<GeocodeResult | null> {
    const q = typeof rawAddress === "string" ? rawAddress.trim().slice(0, MAX_QUERY_LENGTH) : "";
    if (!q) return null;
    const body = await this.get("search", { q, limit: "1" });
    // Nominatim answers an array; some compatible services answer a single object.
    const first = Array.isArray(body) ? body[0] : body;
    return toResult(first);
  }

  async reverse(lon: number, lat: number): Promise<GeocodeResult | null> {
    if (!validCoordinates(lon, lat)) return null;
    const body = await this.get("reverse", { lat: String(lat), lon: String(lon) });
    // "Unable to geocode" comes back as 200 `{"error": …}` (or a 404 on some services).
    return toResult(Array.isArray(body) ? body[0] : body);
  }

  /** The URL of a request (exposed for tests and logs: it holds the API key, so do not log it). */
  url(endpoint: "search" | "reverse", params: Record<string, string>): URL {
    const url = new URL(this.baseUrl);
    url.pathname = `${url.pathname.replace(/\/+$/, "")}/${endpoint}`;
    url.searchParams.set("format", "jsonv2");
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    if (this.apiKey) url.searchParams.set("key", this.apiKey);
    return url;
  }

  private async get(endpoint: "search" | "reverse", params: Record<string, string>): Promise<unknown> {
    let res: Response;
    try {
      res = await this.fetchImpl(this.url(endpoint, params).toString(), {
        method: "GET",
        headers: { Accept: "application/json", "User-Agent": this.userAgent },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      // Network failure, DNS, TLS, or the timeout (a TimeoutError DOMException).
      const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
      throw new GeocodingUnavailableError(
        timedOut ? `geocoding service timed out after ${this.timeoutMs} ms` : "geocoding service unreachable",
        { cause: err },
      );
    }
    if (res.status === 404) {
      await res.body?.cancel();
      return null; // LocationIQ and others answer 404 "Unable to geocode" for no match
    }
    if (res.status >= 500 || res.status === 429 || res.status === 408) {
      await res.body?.cancel();
      throw new GeocodingUnavailableError(`geocoding service answered ${res.status}`);
    }
    if (res.status === 400 || res.status === 422) {
      await res.body?.cancel();
      return null; // the query itself cannot be geocoded
    }
    if (!res.ok) {
      await res.body?.cancel();
      // 401/403 and the like: a configuration problem that retrying does not fix.
      throw new GeocodingError(`geocoding service answered ${res.status}`);
    }
    try {
      return await res.json();
    } catch (err) {
      // A 200 with a body that is not JSON: a proxy's error page, a cut-off answer.
      throw new GeocodingUnavailableError("geocoding service answered invalid JSON", { cause: err });
    }
  }
}

function toResult(place: unknown): GeocodeResult | null {
  if (!place || typeof place !== "object") return null;
  const p = place as NominatimPlace;
  if (p.error !== undefined) return null;
  const lat = Number(p.lat);
  const lon = Number(p.lon);
  const formattedAddress = typeof p.display_name === "string" ? p.display_name.trim() : "";
  if (p.lat === undefined || p.lon === undefined || !validCoordinates(lon, lat) || !formattedAddress)
    return null;
  return { formattedAddress, location: { type: "Point", coordinates: [lon, lat] } };
}
