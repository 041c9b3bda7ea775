/**
 * Time-zone arithmetic on `Intl` (the IANA database the runtime ships), pure: a zone's offset at
 * an instant, and whether a name is a zone. Shared by `Accept-Timezone` (contract §1) and
 * recurrence expansion (contract §20).
 */

/**
 * Formatters kept for the isolate's life, by use and zone: building an `Intl.DateTimeFormat`
 * costs far more than formatting with it (auto-assign asks for the day on every insertion).
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

function kept(key: string, make: () => Intl.DateTimeFormat): Intl.DateTimeFormat {
  let f = formatters.get(key);
  if (!f) {
    f = make();
    formatters.set(key, f);
  }
  return f;
}

const formatter = (zone: string) =>
  kept(
    `time ${zone}`,
    () =>
      new Intl.DateTimeFormat("en-US", {
        timeZone: zone,
        hourCycle: "h23",
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        second: "2-digit",
      }),
  );

/** The day of `ms` in `zone`, `YYYY-MM-DD`. */
export const dayIn = (ms: number, zone: string): string =>
  kept(
    `day ${zone}`,
    () =>
      new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }),
  ).format(ms);

/** True for a zone `Intl` knows (IANA names, `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** Offset of `zone` at instant `ms`, in ms east of UTC. */
export function zoneOffsetMs(zone: string, ms: number): number {
  const parts = formatter(zone).formatToParts(new Date(ms));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const asUtc = Date.UTC(
    get("year"),
    get("month") - 1,
    get("day"),
    get("hour"),
    get("minute"),
    get("second"),
  );
  return asUtc - Math.floor(ms / 1000) * 1000;
}
