/**
 * Retry timing of webhook deliveries. The schedule is the wait before each retry, so a
 * delivery gets `1 + schedule.length` attempts; the default spans about two and a half days
 * (the back-off Standard Webhooks recommends and Svix uses), read from the
 * `WEBHOOK_RETRY_SCHEDULE` setting (`"5s,5m,30m,2h"`: numbers with s/m/h/d, bare = seconds).
 */
export const DEFAULT_RETRY_SCHEDULE = "5s,5m,30m,2h,5h,10h,10h,14h,20h";

/** Cloudflare Queues delays a message by at most 12 hours; longer waits are chained. */
export const MAX_QUEUE_DELAY_SECONDS = 43_200;

/** A receiver's `Retry-After` may stretch a wait, but never beyond a day. */
export const MAX_RETRY_AFTER_SECONDS = 86_400;

export const DEFAULT_TIMEOUT_SECONDS = 15;

const UNIT: Record<string, number> = { "": 1, s: 1, m: 60, h: 3600, d: 86_400 };

/** Seconds of each wait; an unreadable setting falls back to the default (and says so). */
export function retrySchedule(setting: string | undefined): number[] {
  const parse = (s: string) =>
    s
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)
      .map((p) => {
        const m = /^(\d+(?:\.\d+)?)\s*([smhd]?)$/i.exec(p);
        if (!m) throw new Error(`bad step "${p}"`);
        return Math.max(0, Math.round(Number(m[1]) * UNIT[m[2].toLowerCase()]));
      });
  if (setting?.trim()) {
    try {
      return parse(setting);
    } catch (err) {
      console.error(
        JSON.stringify({ level: "error", error: `WEBHOOK_RETRY_SCHEDULE ignored: ${String(err)}` }),
      );
    }
  }
  return parse(DEFAULT_RETRY_SCHEDULE);
}

export function timeoutMs(setting: string | undefined): number {
  const n = Number(setting);
  return (Number.isFinite(n) && n > 0 ? n : DEFAULT_TIMEOUT_SECONDS) * 1000;
}

/**
 * `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP-date. Returns seconds from
 * `now`, capped, or null when absent or unreadable.
 */
export function retryAfterSeconds(value: string | null, now: number): number | null {
  if (!value) return null;
  const v = value.trim();
  let secs: number;
  if (/^\d+$/.test(v)) secs = Number(v);
  else {
    const at = Date.parse(v);
    if (Number.isNaN(at)) return null;
    secs = Math.ceil((at - now) / 1000);
  }
  return Math.min(Math.max(secs, 0), MAX_RETRY_AFTER_SECONDS);
}
