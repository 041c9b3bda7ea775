/**
 * A webhook delivery to attempt (fd-webhooks queue): the delivery row is the truth (its
 * payload, attempts, state); the message only says which one and when it was due, so a
 * redelivered or stale message is harmless.
 */
export type DeliveryMessage = { deliveryId: string; due: number };

/** One queue message per delivery (a queue takes at most 100 messages per sendBatch). */
export async function enqueueDeliveries(env: Env, ids: string[], due: number) {
  for (let i = 0; i < ids.length; i += 100) {
    await env.WEBHOOKS_QUEUE.sendBatch(
      ids.slice(i, i + 100).map((deliveryId) => ({
        body: { deliveryId, due } satisfies DeliveryMessage,
        contentType: "json" as const,
      })),
    );
  }
}
