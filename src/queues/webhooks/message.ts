/**
 * A webhook delivery to attempt (fd-webhooks queue): the delivery row is the truth (its
 * payload, attempts, state); the message only says which one and when it was due, so a
 * redelivered or stale message is harmless. A delivery is keyed by its webhook and its event
 * (migration 0025); a message queued before that names the delivery by the id it had then.
 */
export type DeliveryMessage =
  | { webhookId: string; eventId: string; due: number }
  | { deliveryId: string; due: number };

/** A delivery row's key, as RETURNING gives it. */
export type DeliveryKey = { webhook_id: string; event_id: string; legacy_id?: string | null };

/** What a message for this delivery says. */
export const messageOf = (d: DeliveryKey, due: number): DeliveryMessage => ({
  webhookId: d.webhook_id,
  eventId: d.event_id,
  due,
});

/** Whether a queue body is a delivery message (either shape). */
export function isDeliveryMessage(body: unknown): body is DeliveryMessage {
  if (!body || typeof body !== "object") return false;
  const b = body as Record<string, unknown>;
  if (typeof b.due !== "number") return false;
  return (
    typeof b.deliveryId === "string" || (typeof b.webhookId === "string" && typeof b.eventId === "string")
  );
}

/** One queue message per delivery (a queue takes at most 100 messages per sendBatch). */
export async function enqueueDeliveries(env: Env, deliveries: DeliveryKey[], due: number) {
  for (let i = 0; i < deliveries.length; i += 100) {
    await env.WEBHOOKS_QUEUE.sendBatch(
      deliveries.slice(i, i + 100).map((d) => ({ body: messageOf(d, due), contentType: "json" as const })),
    );
  }
}
