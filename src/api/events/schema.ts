import { z } from "@hono/zod-openapi";
import { commaList, dateTime } from "../../http/openapi";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../../http/pagination";
import { type RenderCtx, ts } from "../../http/serialize";
import type { EventRow } from "../../services/events/list";
import { EVENT_TYPES } from "../../services/events/outbox";

export type { EventRow };

export const EventSchema = z
  .object({
    id: z.string().uuid().openapi({ description: "UUIDv7: events sort by id in the order they happened." }),
    type: z.enum(EVENT_TYPES),
    created_at: dateTime(),
    data: z.record(z.string(), z.any()).openapi({
      description:
        "The same `data` as the webhook body; task, document and signature events carry the task inline.",
    }),
  })
  .openapi("Event");

// Checked by the service (services/events/list.ts), stated here as JSON Schema (issue 46).
const cursorField = (description: string) =>
  z
    .string()
    .optional()
    .openapi({ description: `${description} Give \`after\` or \`before\`, not both.`, format: "uuid" });

export const EventListQuery = z
  .object({
    after: cursorField("Events after this event id (exclusive): the id of the last event you processed."),
    before: cursorField("Events before this event id (exclusive), for walking back (`previous`)."),
    type: z
      .string()
      .optional()
      .openapi({
        description: "Only these event names (comma-separated).",
        example: "task.state_changed",
        ...commaList(EVENT_TYPES),
      }),
    page_size: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_PAGE_SIZE)
      .optional()
      .openapi({ description: `Items per page (default ${DEFAULT_PAGE_SIZE}, max ${MAX_PAGE_SIZE}).` }),
  })
  .strict();

export function serializeEvent(r: RenderCtx, e: EventRow) {
  return {
    id: e.id,
    type: e.type,
    created_at: ts(r, e.created_at),
    data: JSON.parse(e.text) as Record<string, unknown>,
  };
}
