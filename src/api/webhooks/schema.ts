import { z } from "@hono/zod-openapi";
import { dateTime } from "../../http/openapi";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { EVENT_TYPES } from "../../services/events/outbox";
import { DELIVERY_STATES, type DeliveryRow, WEBHOOK_STATES, type WebhookRow } from "../../services/webhooks";

// The names and the URL's scheme are checked by the service (services/webhooks), with its own
// messages; the document states the same rules as JSON Schema (issue 46).
const EventsField = z
  .array(z.string().openapi({ enum: [...EVENT_TYPES] }))
  .max(100)
  .openapi({
    description: `Event names to receive; empty = every event. Names: ${EVENT_TYPES.join(", ")}.`,
    example: ["task.state_changed", "task_command.rejected"],
  });

const UrlField = z
  .string()
  .max(2000)
  .openapi({
    description:
      "The receiver's address: https, and not a loopback, private, link-local, CGNAT or metadata host " +
      "(checked by name and IP literal; unless the deployment sets WEBHOOKS_ALLOW_PRIVATE).",
    example: "https://example.com/hooks/field-dispatch",
    format: "uri",
    pattern: "^https://",
  });

export const WebhookSchema = z
  .object({
    id: z.string().uuid().openapi({ description: "The webhook lives at `{base_url}/webhooks/{id}/`." }),
    url: z.string().openapi({ description: "The receiver's address (not a link to this object)." }),
    events: z.array(z.string()),
    state: z.enum(WEBHOOK_STATES).openapi({
      description:
        "`failed` after 410 Gone or the last failed attempt; set `active` to resume the held deliveries.",
    }),
    failed_at: dateTime().nullable(),
    fail_message: z.string(),
    form_response_events: z.boolean().openapi({
      description: "Also deliver `form_response.completed` (it is never delivered without this flag).",
    }),
    account: z.string().url(),
    created_by: z.string().url().nullable(),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("Webhook");

export const WebhookCreatedSchema = WebhookSchema.extend({
  secret: z.string().openapi({
    description:
      "Standard Webhooks signing secret (`whsec_` + base64 of 32 bytes). Shown in this response only: store it.",
  }),
}).openapi("WebhookWithSecret");

export const WebhookCreateSchema = z
  .object({
    url: UrlField,
    events: EventsField.optional(),
    form_response_events: z.boolean().optional(),
  })
  .openapi("WebhookCreate");

export const WebhookReplaceSchema = WebhookCreateSchema.extend({
  state: z.enum(WEBHOOK_STATES).optional(),
}).openapi("WebhookUpdate");

export const WebhookPatchSchema = z
  .object({
    url: UrlField,
    events: EventsField,
    form_response_events: z.boolean(),
    state: z.enum(WEBHOOK_STATES).openapi({
      description: "`active` resumes a failed webhook (held deliveries are sent); `failed` pauses it.",
    }),
  })
  .partial()
  .openapi("WebhookPatch");

export function serializeWebhook(r: RenderCtx, w: WebhookRow, withSecret = false) {
  return {
    id: w.id,
    url: w.url,
    events: JSON.parse(w.events || "[]") as string[],
    state: w.state,
    failed_at: ts(r, w.failed_at),
    fail_message: w.fail_message ?? "",
    form_response_events: Boolean(w.form_response_events),
    account: link(r, "accounts", w.account_id),
    created_by: link(r, "users", w.created_by),
    created_at: ts(r, w.created_at),
    updated_at: ts(r, w.updated_at),
    ...(withSecret ? { secret: w.secret } : {}),
  };
}

export const DeliverySchema = z
  .object({
    id: z
      .string()
      .uuid()
      .openapi({
        description:
          "Sent as `webhook-id`: the same on every attempt. The event's id (unique within the webhook: an event " +
          "sent to two webhooks has the same `webhook-id` at both, the Standard Webhooks message id); a delivery " +
          "made before the outbox was re-keyed (migration 0025) keeps the id it had.",
      }),
    url: z.string().url(),
    webhook: z.string().url(),
    event: z.string().url().openapi({ description: "The event (`GET /events/{id}/`)." }),
    event_type: z.string(),
    state: z.enum(DELIVERY_STATES).openapi({
      description:
        "`pending` (queued or waiting to retry), `succeeded`, `held` (the webhook is failed), " +
        "`failed` (this delivery failed the webhook: 410 or out of attempts).",
    }),
    attempts: z.number().int().openapi({ description: "Attempts since the delivery was last (re)started." }),
    next_attempt_at: dateTime().nullable(),
    last_status_code: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "null: no response (timeout, network)." }),
    last_error: z.string(),
    created_at: dateTime(),
    updated_at: dateTime(),
  })
  .openapi("WebhookDelivery");

export const DeliveryListQuery = z.object({ state: z.enum(DELIVERY_STATES).optional() });

export function serializeDelivery(r: RenderCtx, d: DeliveryRow) {
  const webhook = link(r, "webhooks", d.webhook_id);
  const id = d.legacy_id ?? d.event_id;
  return {
    id,
    url: `${webhook}deliveries/${id}/`,
    webhook,
    event: link(r, "events", d.event_id),
    event_type: d.event_type,
    state: d.state,
    attempts: d.attempts,
    next_attempt_at: ts(r, d.next_attempt_at),
    last_status_code: d.last_status_code ?? null,
    last_error: d.last_error ?? "",
    created_at: ts(r, d.created_at),
    updated_at: ts(r, d.updated_at),
  };
}
