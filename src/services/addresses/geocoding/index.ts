// Geocoding: `raw_address` → `formatted_address` + `location`, and `location` → a displayable
// address. The provider is chosen by settings; its `name` is what `geocoding_provider` records.
//
//   GEOCODING_PROVIDER  "offline" (default: bundled gazetteer, no network) or "nominatim"
//   GEOCODING_URL       base URL of the Nominatim-compatible service (required for "nominatim")
//   GEOCODING_API_KEY   sent as the `key` query parameter when set (a secret)

import { NominatimGeocoder } from "./nominatim";
import { OfflineGeocoder } from "./offline";
import { type Geocoder, GeocodingError } from "./types";

export { NominatimGeocoder, type NominatimOptions } from "./nominatim";
export { OfflineGeocoder, type OfflineGeocoderOptions } from "./offline";
export {
  type GeocodeResult,
  type Geocoder,
  GeocodingError,
  GeocodingUnavailableError,
  type GeoPoint,
} from "./types";

export type GeocodingEnv = {
  GEOCODING_PROVIDER?: string;
  GEOCODING_URL?: string;
  GEOCODING_API_KEY?: string;
};

export const GEOCODING_PROVIDERS = ["offline", "nominatim"] as const;

// One per isolate: its indexes are built on first use and kept.
let offline: OfflineGeocoder | undefined;

/**
 * The configured provider. Throws a `GeocodingError` for an unknown provider name or a
 * "nominatim" provider without a valid URL (a deployment mistake, not a temporary failure).
 */
export function geocoderFromEnv(env: GeocodingEnv, fetchImpl?: typeof fetch): Geocoder {
  const provider = (env.GEOCODING_PROVIDER ?? "").trim().toLowerCase() || "offline";
  switch (provider) {
    case "offline":
      offline ??= new OfflineGeocoder();
      return offline;
    case "nominatim": {
      const baseUrl = (env.GEOCODING_URL ?? "").trim();
      if (!baseUrl) throw new GeocodingError('GEOCODING_PROVIDER is "nominatim" but GEOCODING_URL is empty');
      return new NominatimGeocoder({
        baseUrl,
        apiKey: env.GEOCODING_API_KEY?.trim() || undefined,
        fetch: fetchImpl,
      });
    }
    default:
      throw new GeocodingError(
        `Unknown GEOCODING_PROVIDER "${provider}" (expected one of: ${GEOCODING_PROVIDERS.join(", ")})`,
      );
  }
}
