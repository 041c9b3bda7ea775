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

/**
 * A calendar day the API takes, `YYYY-MM-DD`: from 1970-01-01 to 2099-12-31, a day that exists
 * (29 February in leap years only). A field service has no task before the epoch or in the 22nd
 * century; a year-0 or year-9999 date is a client bug, refused rather than stored (docs/api.md).
 * The range is the date as written (in its own offset or zone), so that a `pattern` states it.
 * `[0-9]`, not `\d`, which is Unicode's digits in some regex dialects (Python's).
 */
export const DAY =
  "(?:(?:19[7-9][0-9]|20[0-9][0-9])-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))" +
  "|(?:19(?:7[26]|8[048]|9[26])|20(?:[02468][048]|[13579][26]))-02-29)";
/** `HH:MM`, seconds optional, up to 9 fractional digits (what `Date` keeps is the first 3). */
const TIME = "(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,9})?)?";
/** `Z` or an offset (RFC 3339 §5.6's `time-numoffset`; ISO 8601's basic `+HHMM` too). */
const OFFSET = "(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9])";

/**
 * The syntax of an input timestamp as `parseTimestamp` reads it (ISO 8601 extended, `T` or a
 * space, the offset optional: without one only under `Accept-Timezone`), as a JSON Schema 2020-12
 * `pattern`: beside `format: date-time` (RFC 3339, which is within it) it states the range of
 * years, which the format leaves at 0000–9999 (issue 56). `blank`: `""` too, where a field takes
 * it for null (a task's times).
 */
export const timestampPattern = (opts: { blank?: boolean } = {}) =>
  opts.blank ? `^(?:${DAY}[Tt ]${TIME}${OFFSET}?)?$` : `^${DAY}[Tt ]${TIME}${OFFSET}?$`;
/** A day of the API (`DAY`) as a `pattern`, for `format: date` inputs. */
export const DAY_PATTERN = `^${DAY}$`;

const TIMESTAMP_RE = new RegExp(timestampPattern());
const DAY_RE = new RegExp(DAY_PATTERN);
export const isDay = (text: string) => DAY_RE.test(text);

const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Parses an input timestamp (`timestampPattern`, surrounding spaces aside) to epoch ms, or
 * returns null when it is not one. A value without an offset is read in `zone`; without a zone
 * it is refused (null).
 */
export function parseTimestamp(text: string, zone: string | null): number | null {
  const t = text.trim();
  if (!TIMESTAMP_RE.test(t)) return null;
  const [, y, mo, d, h, mi, s, frac, off] = ISO.exec(t)!;
  const ms = frac ? Number(frac.slice(0, 3).padEnd(3, "0")) : 0;
  const wall = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0), ms);
  if (off) {
    if (off.toUpperCase() === "Z") return wall;
    const sign = off[0] === "-" ? -1 : 1;
    const digits = off.slice(1).replace(":", "");
    const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2));
    return wall - sign * minutes * 60000;
  }
  return zone ? wallToInstant(wall, zone) : null;
}

/**
 * The instant a wall time (`Date.UTC` of its fields) names in `zone` (UTC when null): guessed
 * with the offset at that instant, then corrected once (DST edges).
 */
export function wallToInstant(wall: number, zone: string | null): number {
  if (!zone) return wall;
  const guess = wall - zoneOffsetMinutes(zone, wall) * 60000;
  return wall - zoneOffsetMinutes(zone, guess) * 60000;
}
