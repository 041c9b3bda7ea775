/**
 * Recurrence expansion (contract §20): an RFC 5545 RRULE, a local start ("floating" date-time,
 * RFC 5545 §3.3.5 form #1) and an IANA zone in; instants (epoch ms) out. Pure: no I/O, no clock.
 *
 * Why the rule is expanded in local wall-clock time and only then turned into instants: RFC 5545
 * §3.3.10 expands a rule in the time of DTSTART, so a weekly 09:00 Europe/Helsinki rule means
 * 09:00 on each of those local days, whatever the UTC offset that day (the offset changes in
 * March and October). The `rrule` library computes on `Date`s read as UTC; we hand it the wall
 * clock encoded as UTC ("wall ms") and never its own TZID support, then convert each wall time
 * to an instant with the zone's rules from `Intl` (which Workers carry).
 *
 * Local times that do not exist or exist twice (RFC 5545 §3.3.5): a time inside a
 * spring-forward gap is read with the offset before the gap (02:30 becomes 03:30 local), and
 * a time repeated by a fall-back change means its first (earlier) instant.
 */

import { Frequency, type Options, RRule } from "rrule";
import { zoneOffsetMs } from "./time-zones";

/** How far ahead `nextOccurrence` looks; a rule with nothing sooner is treated as finished. */
export const NEXT_SEARCH_YEARS = 10;

/** Accepted instants, as every timestamp of the API (docs/api.md). */
const MIN_MS = 0;
const MAX_MS = Date.UTC(2100, 0, 1);
const DAY_MS = 86_400_000;

export type Schedule = {
  /** The RRULE value (without the `RRULE:` prefix). */
  rule: string;
  /** Local date-time `YYYY-MM-DDTHH:MM:SS`, read in `timezone`. */
  start: string;
  /** Local date-time, or null: no occurrence after it. */
  end: string | null;
  timezone: string;
};

// ---------------------------------------------------------------------------------------------
// Time zones

/** The wall clock of `zone` at instant `ms`, encoded as UTC ms. */
export function instantToWall(zone: string, ms: number): number {
  return ms + zoneOffsetMs(zone, ms);
}

/**
 * The instant a wall-clock time of `zone` names (RFC 5545 §3.3.5 for gaps and overlaps, see
 * the file comment). The offsets a day before and a day after bracket any single transition.
 */
export function wallToInstant(zone: string, wall: number): number {
  const before = zoneOffsetMs(zone, wall - DAY_MS);
  const after = zoneOffsetMs(zone, wall + DAY_MS);
  for (const off of [before, after]) {
    if (zoneOffsetMs(zone, wall - off) === off) return wall - off;
  }
  return wall - before;
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** `YYYY-MM-DDTHH:MM:SS` of a wall ms. */
export function formatLocal(wall: number): string {
  const d = new Date(wall);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}

/** ISO 8601 of an instant with the offset `zone` has then, e.g. `2026-03-30T09:00:00+03:00`. */
export function formatInZone(zone: string, ms: number): string {
  const off = Math.round(zoneOffsetMs(zone, ms) / 60_000);
  const a = Math.abs(off);
  return `${formatLocal(ms + off * 60_000)}${off < 0 ? "-" : "+"}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/;

/**
 * A local date-time without offset (contract §20: the one place the API takes no offset)
 * as wall ms, or null when malformed, offset-carrying, or outside 1970–2099.
 */
export function parseLocal(text: string): number | null {
  const m = LOCAL.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number);
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(wall);
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return null;
  return wall >= MIN_MS && wall < MAX_MS ? wall : null;
}

// ---------------------------------------------------------------------------------------------
// Rules

export type ParsedRule =
  | { ok: true; options: Partial<Options>; untilIsUtc: boolean }
  | { ok: false; error: string };

/**
 * Parses an RRULE value (RFC 5545 §3.3.10). Refused: anything `rrule` cannot parse, a missing
 * FREQ, COUNT with UNTIL (the RFC says MUST NOT occur together), and SECONDLY / MINUTELY (a
 * dispatch service makes tasks for people; those would exceed any horizon limit anyway).
 */
export function parseRule(text: string): ParsedRule {
  const value = text.trim().replace(/^RRULE:/i, "");
  if (!value || /[\r\n]/.test(value) || /(^|;)\s*DTSTART/i.test(value)) {
    return {
      ok: false,
      error: "Enter one RRULE value, e.g. FREQ=WEEKLY;BYDAY=MO,WE (start is its own field).",
    };
  }
  let options: Partial<Options>;
  try {
    options = RRule.parseString(value);
    // Constructing validates what parsing leaves alone (e.g. BYDAY values).
    new RRule({ ...options, dtstart: new Date(0) });
  } catch (err) {
    return { ok: false, error: `Not a valid RFC 5545 RRULE: ${(err as Error).message ?? String(err)}.` };
  }
  if (options.freq === undefined || options.freq === null) {
    return { ok: false, error: "Not a valid RFC 5545 RRULE: FREQ is required." };
  }
  if (options.freq === Frequency.SECONDLY || options.freq === Frequency.MINUTELY) {
    return { ok: false, error: "FREQ=SECONDLY and FREQ=MINUTELY are not supported; use HOURLY or longer." };
  }
  if (options.count != null && options.until != null) {
    return { ok: false, error: "COUNT and UNTIL may not be used together (RFC 5545 §3.3.10)." };
  }
  if (options.interval != null && !(options.interval >= 1)) {
    return { ok: false, error: "Not a valid RFC 5545 RRULE: INTERVAL must be a positive integer." };
  }
  for (const [part, key, lo, hi, zero] of RANGES) {
    const raw = options[key] as number | number[] | null | undefined;
    const values = raw == null ? [] : Array.isArray(raw) ? raw : [raw];
    const bad = values.find((v) => !Number.isInteger(v) || Math.abs(v) > hi || v < lo || (!zero && v === 0));
    if (bad !== undefined) {
      const range = lo < 0 ? `${-hi} to -1 or 1 to ${hi}` : `${lo} to ${hi}`;
      return { ok: false, error: `Not a valid RFC 5545 RRULE: ${part} must be ${range}, not ${bad}.` };
    }
  }
  return { ok: true, options, untilIsUtc: /UNTIL=\d{8}T\d{6}Z/i.test(value) };
}

/**
 * The value ranges of RFC 5545 §3.3.10 (`rrule` accepts any number, and a value that can never
 * match, such as BYHOUR=25, sends it walking to the year 9999): part, option, lowest, highest
 * magnitude, whether 0 is allowed.
 */
const RANGES: [string, keyof Options, number, number, boolean][] = [
  ["BYSECOND", "bysecond", 0, 60, true],
  ["BYMINUTE", "byminute", 0, 59, true],
  ["BYHOUR", "byhour", 0, 23, true],
  ["BYMONTHDAY", "bymonthday", -31, 31, false],
  ["BYYEARDAY", "byyearday", -366, 366, false],
  ["BYWEEKNO", "byweekno", -53, 53, false],
  ["BYMONTH", "bymonth", 1, 12, false],
  ["BYSETPOS", "bysetpos", -366, 366, false],
];

/** Rule periods one expansion may walk through (see `budgeted`). */
export const PERIOD_BUDGET = 100_000;

const PERIOD_MS: Partial<Record<Frequency, number>> = {
  [Frequency.WEEKLY]: 7 * DAY_MS,
  [Frequency.DAILY]: DAY_MS,
  [Frequency.HOURLY]: 3_600_000,
};

/**
 * The rule as `rrule` computes it: on wall ms, with UNTIL moved to wall time when it was UTC.
 *
 * `rrule` walks every period from DTSTART. For WEEKLY, DAILY and HOURLY rules without COUNT,
 * DTSTART is moved forward by whole periods (INTERVAL × week/day/hour of wall time) to just
 * before `notBefore`: the periods visited are a subset of the original ones and the moved start
 * keeps the weekday and time of day the defaults of RFC 5545 §3.3.10 take from DTSTART, so the
 * occurrences from there on are the same, and a rule started years ago costs a few periods.
 */
function wallRule(s: Schedule, notBefore: number): RRule {
  const parsed = parseRule(s.rule);
  if (!parsed.ok) throw new Error(parsed.error);
  let start = parseLocal(s.start);
  if (start === null) throw new Error(`bad start ${s.start}`);
  const period = PERIOD_MS[parsed.options.freq as Frequency];
  if (period && parsed.options.count == null) {
    const step = period * (parsed.options.interval ?? 1);
    const k = Math.floor((notBefore - start) / step) - 1;
    if (k > 0) start += k * step;
  }
  const options: Partial<Options> = { ...parsed.options, dtstart: new Date(start), tzid: null };
  if (options.until && parsed.untilIsUtc) {
    options.until = new Date(instantToWall(s.timezone, options.until.getTime()));
  }
  return budgeted(new RRule(options));
}

/** Thrown by a budgeted rule's walk once it has visited PERIOD_BUDGET periods. */
class PeriodBudgetSpent extends Error {}

/**
 * A rule that can never match (FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30, or an INTERVAL that never
 * lands on its BYDAY) makes `rrule` walk period by period to the year 9999: seconds of CPU, or
 * minutes for HOURLY. Its loop reads `options.interval` on every period (twice), so a getter
 * that throws after PERIOD_BUDGET periods stops the walk wherever it is; the budget is far
 * above what a window needs after the rebasing above (ten years of hourly periods are 87,600).
 * (A getter answering 0 instead, which `rrule` reads as "stop", was tried: when the 0 reached
 * its hourly step rather than its check, the step looped for ever.)
 */
function budgeted(rule: RRule): RRule {
  const real = rule.options;
  let reads = 0;
  const interval = real.interval;
  const options = Object.create(real, {
    interval: {
      get: () => {
        if (++reads > 2 * PERIOD_BUDGET) throw new PeriodBudgetSpent();
        return interval;
      },
    },
  });
  (rule as { options: unknown }).options = options;
  return rule;
}

/**
 * Occurrence instants in [fromMs, toMs], ascending, at most `limit` of them. The wall window is
 * widened by a day each side (no zone is more than 14 hours from UTC) and the instants are then
 * cut to the exact window; a gap can map two wall times onto one instant, counted once.
 */
export function occurrencesBetween(s: Schedule, fromMs: number, toMs: number, limit: number): number[] {
  if (toMs < fromMs || limit <= 0) return [];
  const rule = wallRule(s, fromMs - DAY_MS);
  const end = s.end === null ? null : parseLocal(s.end);
  const out = new Set<number>();
  const lo = new Date(Math.max(MIN_MS, fromMs - DAY_MS));
  const hi = new Date(Math.min(MAX_MS, toMs + DAY_MS));
  try {
    rule.between(lo, hi, true, (wall) => {
      const w = wall.getTime();
      if (end !== null && w > end) return false;
      const at = wallToInstant(s.timezone, w);
      if (at >= fromMs && at <= toMs) out.add(at);
      return out.size < limit;
    });
  } catch (err) {
    // The budget ran out: the occurrences found so far are all there are within reach.
    if (!(err instanceof PeriodBudgetSpent)) throw err;
  }
  return [...out].sort((a, b) => a - b);
}

/** The first occurrence at or after `fromMs` (within NEXT_SEARCH_YEARS), or null. */
export function nextOccurrence(s: Schedule, fromMs: number): number | null {
  const to = Math.min(MAX_MS - 1, fromMs + NEXT_SEARCH_YEARS * 366 * DAY_MS);
  return occurrencesBetween(s, fromMs, to, 1)[0] ?? null;
}

/** The rule's first occurrence: at or after its start. */
export function firstOccurrence(s: Schedule): number | null {
  const start = parseLocal(s.start);
  return start === null ? null : nextOccurrence(s, wallToInstant(s.timezone, start));
}

/**
 * A time of the template moved to an occurrence, keeping its local wall-clock distance from the
 * start (contract §20): with start Monday 09:00 and complete_before Monday 17:00, the occurrence
 * of Wednesday 09:00 gets Wednesday 17:00 local, across daylight-saving changes too.
 */
export function shiftToOccurrence(s: Schedule, templateMs: number, occurrenceMs: number): number {
  const start = parseLocal(s.start)!;
  const delta = instantToWall(s.timezone, templateMs) - start;
  return wallToInstant(s.timezone, instantToWall(s.timezone, occurrenceMs) + delta);
}
