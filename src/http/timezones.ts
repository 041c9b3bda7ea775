import { isTimeZone, zoneOffsetMs } from "../domain/time-zones";
import { badRequest } from "./errors";

/**
 * `Accept-Timezone` (contract §1): timestamps are rendered with the zone's offset, and
 * input without an offset is read in that zone. Without the header: UTC out (`Z`), and
 * input must carry `Z` or an offset (ISO 8601 / RFC 3339).
 */
export function validateTimeZone(zone: string | undefined | null): string | null {
  if (!zone) return null;
  const z = zone.trim();
  if (z.toUpperCase() === "UTC") return null;
  if (isTimeZone(z)) return z;
  // Echo at most 64 characters: an error body must not grow with whatever a client sent.
  const shown = z.length > 64 ? `${z.slice(0, 64)}…` : z;
  throw badRequest(`Unknown time zone in "Accept-Timezone" header: "${shown}".`, "invalid_timezone");
}

/** Offset of `zone` at instant `ms`, in minutes east of UTC. */
export const zoneOffsetMinutes = (zone: string, ms: number): number =>
  Math.round(zoneOffsetMs(zone, ms) / 60000);

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** ISO 8601 with milliseconds; `Z` for UTC, `+HH:MM` otherwise. */
export function formatTimestamp(ms: number | null | undefined, zone: string | null): string | null {
  if (ms === null || ms === undefined) return null;
  if (!zone) return new Date(ms).toISOString();
  const off = zoneOffsetMinutes(zone, ms);
  const d = new Date(ms + off * 60000);
  const sign = off < 0 ? "-" : "+";
  const a = Math.abs(off);
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}` +
    `${sign}${pad(Math.floor(a / 60))}:${pad(a % 60)}`
  );
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Parses an ISO 8601 date-time to epoch ms, or returns null when it is not one. A value
 * without an offset is read in `zone`; without a zone it is refused (null).
 */
/**
 * Accepted instants: from 1970-01-01T00:00:00Z up to (not including) 2100-01-01T00:00:00Z.
 * A field service has no task before the epoch or in the 22nd century; a year-0 or year-9999
 * date is a client bug, and it is refused rather than stored (docs/api.md).
 */
export const MIN_TIMESTAMP_MS = 0;
export const MAX_TIMESTAMP_MS = Date.UTC(2100, 0, 1);

export function parseTimestamp(text: string, zone: string | null): number | null {
  const ms = parseTimestampUnbounded(text, zone);
  return ms === null || ms < MIN_TIMESTAMP_MS || ms >= MAX_TIMESTAMP_MS ? null : ms;
}

function parseTimestampUnbounded(text: string, zone: string | null): number | null {
  const m = ISO.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac, off] = m;
  const ms = frac ? Number(frac.slice(0, 3).padEnd(3, "0")) : 0;
  const wall = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0), ms);
  if (Number.isNaN(wall)) return null;
  const check = new Date(wall);
  if (check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d)) return null;
  if (off) {
    if (off.toUpperCase() === "Z") return wall;
    const sign = off[0] === "-" ? -1 : 1;
    const digits = off.slice(1).replace(":", "");
    const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2));
    return wall - sign * minutes * 60000;
  }
  if (!zone) return null;
  // Wall time in a zone: guess with the offset at that instant, then correct once (DST edges).
  let guess = wall - zoneOffsetMinutes(zone, wall) * 60000;
  guess = wall - zoneOffsetMinutes(zone, guess) * 60000;
  return guess;
}
