import { retrySchedule } from "../webhooks/schedule";
/**
 * Retention windows (contract §23): how long each kind of row stays in D1 before the cron moves
 * it to the archive (R2) and deletes it. Each window is a setting (days), documented in
 * docs/configuration.md; finished tasks follow their account's `data_retention_days` instead
 * (./tasks.ts). Rows are found by their id: every table below is keyed by a UUIDv7 minted when
 * the row was made (RFC 9562 §5.7: the first 48 bits are the Unix time in ms; a delivery by its
 * event's), so "older than the window" and "made on this day" are ranges of the primary key.
 */

export type RetainedKind = {
  /** The archive's name of the kind (`GET /archives/` `kind`). */
  kind: string;
  table: string;
  /** The setting and its default (days). */
  setting: string;
  defaultDays: number;
  /** Which rows may go once past the window (besides their age): never unfinished work. */
  where?: string;
  /** `account`: archived per account, listed to its admins; `service`: the operator's own rows. */
  scope: "account" | "service";
  /**
   * How the table is keyed (migration 0025): `id` (a rowid table with its UUIDv7 primary key),
   * `account` (clustered on (account_id, id)), `webhook` (clustered on (webhook_id, event_id),
   * the event's id being the row's time).
   */
  keyed?: "id" | "account" | "webhook";
  /**
   * The window is at least the webhook retry schedule's span and a day (`WEBHOOK_RETRY_SCHEDULE`):
   * a schedule longer than the window stretches the window rather than cut deliveries short.
   */
  coversRetries?: boolean;
};

export const RETAINED: readonly RetainedKind[] = [
  // Deliveries before their events: a delivery never outlives the event it delivered.
  // Only final ones (succeeded, or failed after the last attempt): a delivery still owed
  // (pending, or held while its webhook is failed) stays, whatever its age, and so does its event.
  {
    kind: "webhook_deliveries",
    table: "webhook_deliveries",
    setting: "WEBHOOK_DELIVERIES_RETENTION_DAYS",
    defaultDays: 30,
    where: "d.state IN ('succeeded', 'failed')",
    scope: "account",
    keyed: "webhook",
    coversRetries: true,
  },
  // 30 days, as integrators know from Stripe's events.
  {
    kind: "events",
    table: "events",
    setting: "EVENTS_RETENTION_DAYS",
    defaultDays: 30,
    where:
      "NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.state IN ('pending', 'held'))",
    scope: "account",
    keyed: "account",
    coversRetries: true,
  },
  // Whatever their state: an SMS still queued after 90 days will not be sent any more.
  { kind: "sms", table: "sms", setting: "SMS_RETENTION_DAYS", defaultDays: 90, scope: "account" },
  {
    kind: "emails",
    table: "outbound_emails",
    setting: "EMAIL_RETENTION_DAYS",
    defaultDays: 90,
    scope: "account",
  },
  {
    kind: "task_exports",
    table: "data_exports",
    setting: "JOBS_RETENTION_DAYS",
    defaultDays: 90,
    where: "state IN ('completed', 'failed')",
    scope: "account",
  },
  {
    kind: "imports",
    table: "data_imports",
    setting: "JOBS_RETENTION_DAYS",
    defaultDays: 90,
    where: "state IN ('completed', 'failed')",
    scope: "account",
  },
  {
    kind: "route_optimizations",
    table: "route_optimizations",
    setting: "JOBS_RETENTION_DAYS",
    defaultDays: 90,
    where: "state IN ('completed', 'failed')",
    scope: "account",
  },
  {
    kind: "dead_letters",
    table: "dead_letters",
    setting: "DEAD_LETTERS_RETENTION_DAYS",
    defaultDays: 90,
    scope: "service",
  },
];

/** The service's own archive rows (dead letters) are kept under this account id, listed to nobody. */
export const SERVICE_SCOPE = "_service";

const DAY_MS = 86_400_000;

/** A window in days from its setting (a positive integer), else its default. */
export function windowDays(env: Env, setting: string, fallback: number): number {
  const v = (env as unknown as Record<string, string | undefined>)[setting];
  const n = Number(v);
  return v !== undefined && v !== "" && Number.isInteger(n) && n > 0 ? n : fallback;
}

/** A kind's window in days: its setting, stretched over the retry schedule where it must cover it. */
export function retainedDays(env: Env, k: RetainedKind): number {
  const days = windowDays(env, k.setting, k.defaultDays);
  if (!k.coversRetries) return days;
  const span = retrySchedule(env.WEBHOOK_RETRY_SCHEDULE).reduce((a, b) => a + b, 0);
  return Math.max(days, Math.ceil(span / 86_400) + 1);
}

/** Rows made before this instant are past their window. */
export const cutoffOf = (env: Env, k: RetainedKind, now: number) => now - retainedDays(env, k) * DAY_MS;

/**
 * The smallest UUIDv7 of an instant (ms): its 48-bit time, then the version and variant bits
 * and zeros. Every UUIDv7 minted at or after `ms` sorts at or after it as text (lower-case hex,
 * dashes at fixed places), so `id < idFloor(t)` is "made before t".
 */
export function idFloor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0").slice(-12);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}

/** The time (ms) a UUIDv7 was minted at. */
export const idTime = (id: string) => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

/** `YYYY-MM-DD` (UTC) of an instant, and the instants that bound that day. */
export function dayOf(ms: number): { day: string; start: number; end: number } {
  const start = Math.floor(ms / DAY_MS) * DAY_MS;
  return { day: new Date(start).toISOString().slice(0, 10), start, end: start + DAY_MS };
}

/** The windows in force, for `/events/` and the docs: `{kind: days}`. */
export function windowsOf(env: Env): Record<string, number> {
  return Object.fromEntries(RETAINED.map((k) => [k.kind, windowDays(env, k.setting, k.defaultDays)]));
}

/** How far back `/events/` reaches: older events are in the archive (or about to be). */
export function eventsRetainedSince(env: Env, now = Date.now()) {
  const events = RETAINED.find((k) => k.kind === "events")!;
  return cutoffOf(env, events, now);
}
