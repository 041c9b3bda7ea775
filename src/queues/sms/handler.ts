import { inAccount } from "../../db/shards";
import { sendQueuedSms } from "../../services/sms";
import type { SmsMessage } from "./message";

/** Consumer of fd-sms: a provider outage is retried with back-off (30 s, 1 min, ... 1 h). */
export async function handleSmsBatch(batch: MessageBatch<SmsMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    try {
      const outcome = await sendQueuedSms(await inAccount(env, message.body.accountId), message.body);
      if (outcome === "retry")
        message.retry({ delaySeconds: Math.min(3600, 30 * 2 ** (message.attempts - 1)) });
      else message.ack();
    } catch (err) {
      console.error(JSON.stringify({ level: "error", queue: "sms", error: String(err) }));
      message.retry({ delaySeconds: Math.min(3600, 30 * 2 ** (message.attempts - 1)) });
    }
  }
}
