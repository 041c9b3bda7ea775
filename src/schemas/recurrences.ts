import { z } from "@hono/zod-openapi";
import { dateTime } from "../http/openapi";
import { paginationQuery } from "../http/pagination";

// Recurrences (contract §20). Shapes only; the rule, the local times, the zone, the assignee
// and the template (checked exactly as POST /tasks/ or POST /orders/ checks a body) are the
// service's business, answered in the same DRF error shape.

const localDateTime = (description: string) =>
  z
    .string()
    .max(64)
    .openapi({
      description: `${description} Local date-time without offset, \`YYYY-MM-DDTHH:MM:SS\`, read in \`timezone\` (an offset is 400).`,
      example: "2026-03-02T09:00:00",
    });

export const RECURRENCE_KINDS = ["task", "order"] as const;

/** `recurrence` of POST /tasks/ and POST /orders/: the body itself is the template. */
export const RecurrenceShortcutSchema = z
  .object({
    rule: z
      .string()
      .max(1000)
      .openapi({ description: "RFC 5545 RRULE value, e.g. `FREQ=WEEKLY;BYDAY=MO,WE`." }),
    start: localDateTime("First occurrence (DTSTART)."),
    end: localDateTime("No occurrence after it.").nullable().optional(),
    timezone: z
      .string()
      .max(64)
      .optional()
      .openapi({ description: "IANA zone; default: the account's `timezone`." }),
    assignee: z.string().nullable().optional().openapi({
      description: "User URL: every occurrence is assigned to this user (overrides the body's `assignee`).",
    }),
  })
  .openapi("RecurrenceShortcut", {
    description:
      "Write-only, on create. Makes a recurrence with the rest of the body as its template and answers 201 with its first occurrence, made at once; the cron makes the others (contract §20).",
  });

export type RecurrenceShortcut = z.infer<typeof RecurrenceShortcutSchema>;

export const RecurrenceWriteSchema = z.object({
  rule: z.string().max(1000).openapi({
    description:
      "RFC 5545 RRULE value, e.g. `FREQ=WEEKLY;BYDAY=MO,WE`. Refused: COUNT with UNTIL, FREQ=SECONDLY/MINUTELY, BY* values outside RFC 5545's ranges (e.g. BYHOUR 0–23), rules with no occurrence, and rules with more occurrences in one horizon than the limit (README, Recurrences).",
  }),
  start: localDateTime("First occurrence (DTSTART)."),
  end: localDateTime("No occurrence after it; null: no end.").nullable().optional(),
  timezone: z
    .string()
    .max(64)
    .optional()
    .openapi({ description: "IANA zone; default: the account's `timezone`." }),
  assignee: z.string().nullable().optional().openapi({
    description: "User URL or null. Overrides the template's `assignee`.",
  }),
  kind: z.enum(RECURRENCE_KINDS).openapi({ description: "What each occurrence makes." }),
  template: z.record(z.string(), z.any()).openapi({
    description:
      "The body of POST /tasks/ (kind `task`) or POST /orders/ (kind `order`, one order, no `external_id`), validated as such. " +
      "`complete_after`, `complete_before` and `scheduled_time` are moved to each occurrence, keeping their local distance from `start`.",
  }),
  is_active: z.boolean().optional().openapi({ description: "false stops the occurrences not yet made." }),
});

export type RecurrenceWriteBody = z.infer<typeof RecurrenceWriteSchema>;

export const RecurrencePatchSchema = RecurrenceWriteSchema.partial().openapi("RecurrencePatch");

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
