import { type Geocoder, GeocodingUnavailableError, geocoderFromEnv } from "./geocoding";
import type { GeocodeResult } from "./geocoding/types";
import type { AddressInput, ResolvedAddress, StoredAddress } from "./types";

/**
 * Inline geocoding for one request. Addresses are geocoded when the task is written (the
 * offline provider answers in microseconds), with three guarantees:
 *  - a failure never loses the task: it is stored with `geocode_failed_at`, and a temporary
 *    failure (`GeocodingUnavailableError`, or any unexpected error) is marked for a retry
 *    through the geocode queue;
 *  - "not found" is an answer, not a failure to retry: `geocode_failed_at` is set, no retry;
 *  - one request never spends more than `budgetMs` geocoding (an order may carry 50 000
 *    addresses and a remote provider takes a round trip each): past the budget, addresses are
 *    stored un-geocoded (both outcome times null) and left to the queue.
 * Equal addresses within a request are geocoded once.
 */
export const INLINE_GEOCODING_BUDGET_MS = 10_000;

export class GeocodeSession {
  private readonly cache = new Map<string, Promise<Outcome>>();
  private readonly deadline: number;

  constructor(
    private readonly geocoder: Geocoder | Error,
    budgetMs = INLINE_GEOCODING_BUDGET_MS,
  ) {
    this.deadline = Date.now() + budgetMs;
  }

  static fromEnv(env: Env, geocoder?: Geocoder): GeocodeSession {
    if (geocoder) return new GeocodeSession(geocoder);
    try {
      return new GeocodeSession(geocoderFromEnv(env));
    } catch (err) {
      // A misconfigured provider must not lose writes: tasks are stored and retried later.
      console.error(JSON.stringify({ level: "error", msg: "geocoder unavailable", error: String(err) }));
      return new GeocodeSession(err as Error);
    }
  }

  get providerName(): string | null {
    return this.geocoder instanceof Error ? null : this.geocoder.name;
  }

  /** Resolves an address as sent by a caller into what is stored. */
  async resolve(input: AddressInput, now = Date.now()): Promise<ResolvedAddress> {
    const raw = (input.raw_address ?? "").trim();
    const location = input.location ?? null;
    if (raw && location) {
      // Both given: the caller already knows where it is; stored as sent, nothing to geocode.
      return {
        address: { raw_address: raw, formatted_address: raw, location, geocoding_provider: null },
        geocoded_at: null,
        geocode_failed_at: null,
        retry: false,
      };
    }
    const key = raw ? `a:${raw.toLowerCase()}` : `p:${location!.coordinates.join(",")}`;
    let pending = this.cache.get(key);
    if (!pending) {
      pending = this.lookup(raw, location);
      this.cache.set(key, pending);
    }
    return toResolved(raw, location, await pending, now);
  }

  private async lookup(raw: string, location: AddressInput["location"]): Promise<Outcome> {
    if (this.geocoder instanceof Error || Date.now() > this.deadline) return { kind: "deferred" };
    const provider = this.geocoder.name;
    try {
      const result = raw
        ? await this.geocoder.geocode(raw)
        : await this.geocoder.reverse(location!.coordinates[0], location!.coordinates[1]);
      return result ? { kind: "found", result, provider } : { kind: "not_found", provider };
    } catch (err) {
      if (!(err instanceof GeocodingUnavailableError)) {
        console.error(JSON.stringify({ level: "error", msg: "geocoding failed", error: String(err) }));
      }
      return { kind: "failed", provider };
    }
  }
}

type Outcome =
  | { kind: "found"; result: GeocodeResult; provider: string }
  | { kind: "not_found"; provider: string }
  | { kind: "failed"; provider: string }
  | { kind: "deferred" };

function toResolved(
  raw: string,
  location: AddressInput["location"],
  outcome: Outcome,
  now: number,
): ResolvedAddress {
  const base: StoredAddress = {
    raw_address: raw,
    formatted_address: null,
    location: location ?? null,
    geocoding_provider: null,
  };
  switch (outcome.kind) {
    case "found":
      return {
        address: {
          raw_address: raw,
          formatted_address: outcome.result.formattedAddress,
          // A reverse-geocoded point stays where the caller put it; a geocoded text gets the place's point.
          location: location ?? outcome.result.location,
          geocoding_provider: outcome.provider,
        },
        geocoded_at: now,
        geocode_failed_at: null,
        retry: false,
      };
    case "not_found":
      return {
        address: { ...base, geocoding_provider: outcome.provider },
        geocoded_at: null,
        geocode_failed_at: now,
        retry: false,
      };
    case "failed":
      return {
        address: { ...base, geocoding_provider: outcome.provider },
        geocoded_at: null,
        geocode_failed_at: now,
        retry: true,
      };
    case "deferred":
      return { address: base, geocoded_at: null, geocode_failed_at: null, retry: true };
  }
}

/** True when the stored address was produced from exactly this input (PUT/PATCH re-sending it). */
export function sameAddressInput(stored: StoredAddress, input: AddressInput): boolean {
  const raw = (input.raw_address ?? "").trim();
  if (raw !== stored.raw_address) return false;
  if (!input.location) return Boolean(raw);
  return sameCoords(stored.location, input.location);
}

const sameCoords = (a: AddressInput["location"], b: AddressInput["location"]) =>
  Boolean(a && b && a.coordinates[0] === b.coordinates[0] && a.coordinates[1] === b.coordinates[1]);

/** Whether a stored address still waits for the geocoder (what the queue handler redoes). */
export function needsGeocoding(address: StoredAddress, geocodedAt: number | null): boolean {
  if (geocodedAt !== null) return false;
  const hasRaw = Boolean(address.raw_address);
  const hasLocation = Boolean(address.location);
  if (hasRaw && hasLocation && address.formatted_address) return false; // stored as sent
  return hasRaw || hasLocation;
}
