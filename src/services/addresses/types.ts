/** Addresses and contacts as tasks, orders and contact addresses store them (and clients will). */
import type { GeoPoint } from "./geocoding/types";

/**
 * The address as stored in the JSON column. The two outcome times live in their own columns
 * (`geocoded_at`, `geocode_failed_at`) because lists filter on them; they are not repeated here.
 */
export type StoredAddress = {
  raw_address: string;
  formatted_address: string | null;
  location: GeoPoint | null;
  geocoding_provider: string | null;
};

export type StoredContact = {
  name: string;
  company: string;
  emails: string[];
  phones: string[];
  notes: string;
};

/** An address after geocoding, ready to store: the JSON plus the two indexed outcome columns. */
export type ResolvedAddress = {
  address: StoredAddress;
  geocoded_at: number | null;
  geocode_failed_at: number | null;
  /** The geocoding did not happen or failed temporarily: the geocode queue retries it. */
  retry: boolean;
};

/** The address as the caller sent it (write side of the Address object). */
export type AddressInput = { raw_address?: string; location?: GeoPoint | null };

export const EMPTY_CONTACT: StoredContact = { name: "", company: "", emails: [], phones: [], notes: "" };
