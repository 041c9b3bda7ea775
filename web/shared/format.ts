import { lang } from "./i18n";

/**
 * The browser's own tag for the chosen language when it has one (en-GB writes 09:00, en-US
 * 9:00 AM), else the language alone.
 */
const tag = () =>
  (navigator.languages ?? []).find((l) => l.toLowerCase().split("-")[0] === lang.value) ?? lang.value;

/** Dates and times in the account's time zone (contract Part four), in the user's language. */
export function timeRange(from: string | null, to: string | null, zone: string): string | null {
  if (!from && !to) return null;
  const time = new Intl.DateTimeFormat(tag(), { timeZone: zone, hour: "2-digit", minute: "2-digit" });
  const f = from ? time.format(new Date(from)) : "";
  const tt = to ? time.format(new Date(to)) : "";
  return `${f}–${tt}`;
}

/**
 * A time of day in the account's time zone (an ETA), in the user's language. When `day`
 * (`YYYY-MM-DD`, the day on screen) is given and the instant falls on another day there, the
 * weekday and date come first ("Tue 1 Dec, 05:05"): a time alone would read as that day's.
 */
export function timeOfDay(at: string, zone: string, day?: string): string {
  const when = new Date(at);
  const other = day !== undefined && todayIn(zone, when) !== day;
  return new Intl.DateTimeFormat(tag(), {
    timeZone: zone,
    hour: "2-digit",
    minute: "2-digit",
    ...(other ? { weekday: "short", day: "numeric", month: "short" } : {}),
  }).format(when);
}

/** Today's date (`YYYY-MM-DD`) in `zone`. */
export function todayIn(zone: string, now = new Date()): string {
  // en-CA formats a date as YYYY-MM-DD.
  return new Intl.DateTimeFormat("en-CA", {
    timeZone: zone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(now);
}

/** The offset of `zone` at `at`, in minutes east of UTC. */
function offsetMinutes(zone: string, at: number): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(new Date(at));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(n("year"), n("month") - 1, n("day"), n("hour"), n("minute"), n("second"));
  return Math.round((wall - at) / 60000);
}

/** A wall-clock date and time in `zone` as an instant (ms). */
export function wallToInstant(date: string, time: string, zone: string): number {
  const [y, m, d] = date.split("-").map(Number);
  const [hh, mm] = time.split(":").map(Number);
  const wall = Date.UTC(y, m - 1, d, hh, mm);
  let guess = wall - offsetMinutes(zone, wall) * 60000;
  guess = wall - offsetMinutes(zone, guess) * 60000;
  return guess;
}

/** An instant as the wall-clock `YYYY-MM-DDTHH:MM` in `zone` (the value of a datetime-local input). */
export function wallOf(at: string | number, zone: string): string {
  const ms = new Date(at).getTime();
  const wall = new Date(ms + offsetMinutes(zone, ms) * 60000);
  return wall.toISOString().slice(0, 16);
}

/** The day `YYYY-MM-DD` in `zone` as [start, end) instants. */
export function dayRange(date: string, zone: string) {
  const [y, m, d] = date.split("-").map(Number);
  const next = new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
  return { start: wallToInstant(date, "00:00", zone), end: wallToInstant(next, "00:00", zone) };
}

export function formatKm(m: number | null | undefined) {
  return m == null
    ? "–"
    : `${new Intl.NumberFormat(tag(), { maximumFractionDigits: 1 }).format(m / 1000)} km`;
}

export function formatDuration(s: number | null | undefined) {
  if (s == null) return "–";
  const h = Math.floor(s / 3600);
  const min = Math.round((s % 3600) / 60);
  return `${h} h ${String(min).padStart(2, "0")} min`;
}

/** A task's address's first line: how both apps name a task (contract §26, §27). */
export const firstLine = (task: {
  address?: { formatted_address?: string | null; raw_address?: string | null } | null;
}) => (task.address?.formatted_address || task.address?.raw_address || "").split(/\n|,/)[0].trim() || "—";
