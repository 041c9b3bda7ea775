import { z } from "@hono/zod-openapi";
import { dateTime, jsonSchemaRules, schemaRef, when } from "../http/openapi";
import { paginationQuery } from "../http/pagination";
import { DAY } from "../http/timezones";
import { hyperlinkSchema } from "../http/urls";
import { TimeZoneSchema } from "./time-zones";

// Recurrences (contract §20). Shapes only; the rule, the local times, the zone, the assignee
// and the template (checked exactly as POST /tasks/ or POST /orders/ checks a body) are the
// service's business, answered in the same DRF error shape. The document states them as JSON
// Schema (issue 46): the patterns and rules below are those checks written out.

const HHMMSS = "T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$";
/**
 * A local date-time as domain/recurrence.ts `parseLocal` takes it: `YYYY-MM-DDTHH:MM:SS`, a day
 * of the API's (`DAY`: one that exists, from 1970 to 2099).
 */
export const LOCAL_DATE_TIME_PATTERN = `^${DAY}${HHMMSS}`;

const DAYS = "(?:MO|TU|WE|TH|FR|SA|SU)";
const BYDAY = `(?:;BYDAY=${DAYS}(?:,${DAYS}){0,6})?`;
/**
 * The RRULE values the document states: FREQ first, then INTERVAL, BYDAY, COUNT, in that order.
 * Every value it matches the service takes, from any start (an occurrence within ten years, at
 * most one a day, so never past the horizon's limit). The service takes more of RFC 5545 (any
 * order, UNTIL, BYMONTHDAY, BYHOUR...; the `rule` description and domain/recurrence.ts
 * `parseRule`): those are refused or taken by the rule's own expansion, which no pattern states.
 */
export const RRULE_PATTERN =
  "^(?:RRULE:)?FREQ=(?:DAILY(?:;INTERVAL=[1-9]\\d?)?" +
  `|(?:WEEKLY|MONTHLY)(?:;INTERVAL=[1-9]\\d?)?${BYDAY}` +
  `|YEARLY(?:;INTERVAL=[1-9])?${BYDAY})` +
  "(?:;COUNT=[1-9]\\d{0,2})?$";

const localDateTime = (description: string) =>
  z
    .string()
    .max(64)
    .openapi({
      description: `${description} Local date-time without offset, \`YYYY-MM-DDTHH:MM:SS\`, read in \`timezone\` (an offset is 400).`,
      example: "2026-03-02T09:00:00",
      pattern: LOCAL_DATE_TIME_PATTERN,
    });

const ruleText = (description: string) =>
  z
    .string()
    .max(1000)
    .openapi({
      description: `${description} The pattern is the part of RFC 5545 whose every value the service takes, from any \`start\`; it takes more (see above).`,
      pattern: RRULE_PATTERN,
      example: "FREQ=WEEKLY;BYDAY=MO,WE",
    });

const recurrenceZone = TimeZoneSchema.optional().openapi({
  description: "IANA zone; default: the account's `timezone`.",
});

export const RECURRENCE_KINDS = ["task", "order"] as const;

/** `recurrence` of POST /tasks/ and POST /orders/: the body itself is the template. */
export const RecurrenceShortcutSchema = z
  .object({
    rule: ruleText("RFC 5545 RRULE value, e.g. `FREQ=WEEKLY;BYDAY=MO,WE`."),
    start: localDateTime("First occurrence (DTSTART)."),
    end: localDateTime("No occurrence after it; not before `start`.").nullable().optional(),
    timezone: recurrenceZone,
    assignee: hyperlinkSchema(
      "users",
      "User URL: every occurrence is assigned to this user (overrides the body's `assignee`).",
      { blank: true },
    )
      .nullable()
      .optional(),
  })
  .openapi("RecurrenceShortcut", {
    description:
      "Write-only, on create. Makes a recurrence with the rest of the body as its template and answers 201 with its first occurrence, made at once; the cron makes the others (contract §20).",
  });

export type RecurrenceShortcut = z.infer<typeof RecurrenceShortcutSchema>;

export const RecurrenceWriteSchema = z.object({
  rule: ruleText(
    "RFC 5545 RRULE value, e.g. `FREQ=WEEKLY;BYDAY=MO,WE`. Refused: COUNT with UNTIL, FREQ=SECONDLY/MINUTELY, BY* values outside RFC 5545's ranges (e.g. BYHOUR 0–23), rules with no occurrence, and rules with more occurrences in one horizon than the limit (README, Recurrences).",
  ),
  start: localDateTime("First occurrence (DTSTART)."),
  end: localDateTime("No occurrence after it, not before `start`; null: no end.").nullable().optional(),
  timezone: recurrenceZone,
  assignee: hyperlinkSchema("users", "User URL or null. Overrides the template's `assignee`.", {
    blank: true,
  })
    .nullable()
    .optional(),
  kind: z.enum(RECURRENCE_KINDS).openapi({ description: "What each occurrence makes." }),
  template: z.record(z.string(), z.any()).openapi({
    description:
      "The body of POST /tasks/ (kind `task`) or POST /orders/ (kind `order`, one order, no `external_id`), validated as such. " +
      "`complete_after`, `complete_before` and `scheduled_time` are moved to each occurrence, keeping their local distance from `start`.",
  }),
  is_active: z.boolean().optional().openapi({ description: "false stops the occurrences not yet made." }),
});

export type RecurrenceWriteBody = z.infer<typeof RecurrenceWriteSchema>;

/**
 * The template of each `kind` (api/recurrences `parseTemplate`, then the service: checked as
 * POST /tasks/ or as POST /orders/ checks one order, without `external_id`), as JSON Schema.
 */
export const RECURRENCE_TEMPLATE_RULES = jsonSchemaRules({
  allOf: [
    when(
      { required: ["kind"], properties: { kind: { const: "task" } } },
      { properties: { template: schemaRef("TaskCreate") } },
    ),
    when(
      { required: ["kind"], properties: { kind: { const: "order" } } },
      {
        properties: {
          template: { allOf: [schemaRef("OrderCreate")], properties: { external_id: { enum: [null, ""] } } },
        },
      },
    ),
  ],
});

export const RecurrencePatchSchema = RecurrenceWriteSchema.partial().openapi(
  "RecurrencePatch",
  RECURRENCE_TEMPLATE_RULES,
);

export const RecurrenceSchema = z
  .object({
    id: z.string().uuid(),
    url: z.string().url(),
    account: z.string().url(),
    rule: z.string(),
    start: z.string().openapi({ description: "Local date-time, in `timezone`." }),
    end: z.string().nullable(),
    timezone: z.string(),
    assignee: z.string().url().nullable(),
    kind: z.enum(RECURRENCE_KINDS),
    template: z.record(z.string(), z.any()).openapi({ description: "Times in it are UTC." }),
    is_active: z.boolean(),
    next_occurrence: dateTime()
      .nullable()
      .openapi({ description: "Read-only: the next occurrence not yet made; null when none is left." }),
    created_by: z.string().url().nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("Recurrence");

export const RecurrenceListQuery = z
  .object({
    ...paginationQuery,
    kind: z.enum(RECURRENCE_KINDS).optional(),
    is_active: z.enum(["true", "false"]).optional(),
  })
  .strict();
