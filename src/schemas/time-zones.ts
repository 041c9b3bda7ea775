import { z } from "@hono/zod-openapi";
import { TIME_ZONE_NAMES } from "../domain/data/time-zone-names";

/**
 * An IANA time zone name, as accounts and recurrences take it (issue 46: the list the service
 * checks against, stated). The service asks the runtime's `Intl` (domain/time-zones.ts
 * `isTimeZone`), which also takes these names in another letter case and UTC offsets
 * (`+02:00`); the document lists the names (domain/data/time-zone-names.ts).
 */
export const TimeZoneSchema = z
  .string()
  .max(64)
  .openapi("TimeZone", {
    description:
      "An IANA time zone name (tz database Zone or Link, e.g. `Europe/Helsinki`, `UTC`). The service takes what the Workers runtime's `Intl` takes: these, also in another letter case, and UTC offsets such as `+02:00`.",
    enum: [...TIME_ZONE_NAMES],
  });
