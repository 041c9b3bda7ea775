import { deliverNotification } from "../../services/notifications/send";
import type { NotificationMessage } from "./message";

/**
 * Consumer of fd-notifications. Back-off of a failed e-mail is a new delayed message (its fence
 * moves with it, services/notifications/send.ts); a throw here (D1 or the queue unavailable)
 * retries the same message, whose fence still matches.
 */
export async function handleNotificationBatch(
  batch: MessageBatch<NotificationMessage>,
  env: Env,
): Promise<void> {
  for (const message of batch.messages) {
    try {
      await deliverNotification(env, message.body);
      message.ack();
    } catch (err) {
      console.error(JSON.stringify({ level: "error", queue: "notifications", error: String(err) }));
      message.retry({ delaySeconds: Math.min(3600, 30 * 2 ** (message.attempts - 1)) });
    }
  }
}
