/** A GeoJSON point: `coordinates` are `[longitude, latitude]` (GeoJSON order), WGS 84 degrees. */
export type GeoPoint = { type: "Point"; coordinates: [number, number] };

export type GeocodeResult = {
  /** Displayable one-line address. */
  formattedAddress: string;
  /** The location that `formattedAddress` describes. */
  location: GeoPoint;
};

/**
 * Turns addresses into locations and back.
 *
 * Both methods resolve to `null` when nothing is found (an unknown address, a point far from
 * any known place) and reject with a `GeocodingUnavailableError` on a temporary failure (the
 * provider is down, timed out, rate limited): the caller may retry later. Any other error is
 * permanent (a misconfiguration such as a rejected API key).
 */
export interface Geocoder {
  /** Recorded with each geocoded value (`geocoding_provider`): `"offline"`, `"nominatim"`. */
  readonly name: string;
  geocode(rawAddress: string): Promise<GeocodeResult | null>;
  reverse(lon: number, lat: number): Promise<GeocodeResult | null>;
}

/** A geocoding failure that is not "not found". Permanent unless it is a `GeocodingUnavailableError`. */
export class GeocodingError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "GeocodingError";
  }
}

/** A temporary failure: retry later. */
export class GeocodingUnavailableError extends GeocodingError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "GeocodingUnavailableError";
  }
}

/** True for finite WGS 84 coordinates (longitude -180..180, latitude -90..90). */
export function validCoordinates(lon: number, lat: number): boolean {
  return Number.isFinite(lon) && Number.isFinite(lat) && Math.abs(lon) <= 180 && Math.abs(lat) <= 90;
}
