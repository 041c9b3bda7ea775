import type { RenderCtx } from "../../http/serialize";
import { ts } from "../../http/serialize";
import { GeocodeSession } from "./geocode-session";
import type { Geocoder } from "./geocoding";
import type { AddressInput, StoredAddress } from "./types";

/**
 * An address kept whole in one JSON column (contact addresses, account roles' depots): the
 * geocoding outcome times live in the JSON, since nothing filters on them.
 */
export type AddressWithOutcome = StoredAddress & {
  geocoded_at: number | null;
  geocode_failed_at: number | null;
};

/** Geocodes an address as sent (inline, as tasks are); `retry` asks the geocode queue to try again. */
export async function resolveAddressWithOutcome(env: Env, input: AddressInput, geocoder?: Geocoder) {
  const r = await GeocodeSession.fromEnv(env, geocoder).resolve(input);
  const address: AddressWithOutcome = {
    ...r.address,
    geocoded_at: r.geocoded_at,
    geocode_failed_at: r.geocode_failed_at,
  };
  return { address, retry: r.retry };
}

/** The Address object (interface §2.4) of a stored JSON address; null when there is none. */
export function serializeAddressWithOutcome(r: RenderCtx, json: string | null) {
  if (!json) return null;
  let a: Partial<AddressWithOutcome>;
  try {
    a = JSON.parse(json) ?? {};
  } catch {
    return null;
  }
  return {
    raw_address: a.raw_address ?? "",
    formatted_address: a.formatted_address ?? null,
    location: a.location ?? null,
    geocoded_at: ts(r, a.geocoded_at ?? null),
    geocode_failed_at: ts(r, a.geocode_failed_at ?? null),
    geocoding_provider: a.geocoding_provider ?? null,
  };
}
