import { pool } from "../../lib/pool";
import { type DeliverOptions, processDelivery } from "../../services/webhooks/deliver";
import { type DeliveryMessage, isDeliveryMessage } from "./message";

/**
 * Workers keep at most six outbound connections open per invocation; more concurrent fetches
 * wait for a slot while their 15 s timeout already runs, so attempts go six at a time.
 */
const CONCURRENCY = 6;

/**
 * Delivers webhook attempts. A message is acked once its outcome is written (success, a
 * rescheduled retry with its own new message, or the webhook failed); only an unexpected error
 * (D1 unavailable, ...) retries the same message, which is still valid because nothing was
 * written, so the receiver may see the same `webhook-id` again: at-least-once delivery.
 */
export async function handleWebhookBatch(
  batch: MessageBatch<DeliveryMessage>,
  env: Env,
  opts: DeliverOptions = {},
): Promise<void> {
  await pool(batch.messages, CONCURRENCY, async (m) => {
    const body = m.body;
    if (!isDeliveryMessage(body)) {
      console.error(
        JSON.stringify({ level: "error", queue: "webhooks", error: "malformed message", id: m.id }),
      );
      m.ack();
      return;
    }
    try {
      await processDelivery(env, body, opts);
      m.ack();
    } catch (err) {
      console.error(
        JSON.stringify({
          level: "error",
          queue: "webhooks",
          delivery: "deliveryId" in body ? body.deliveryId : `${body.webhookId}/${body.eventId}`,
          error: String(err),
        }),
      );
      m.retry({ delaySeconds: Math.min(300, 5 * 2 ** Math.min(m.attempts, 6)) });
    }
  });
}
