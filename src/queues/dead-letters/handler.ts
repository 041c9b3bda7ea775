import { inAccount } from "../../db/shards";
import { uuidv7 } from "../../lib/ids";
import type { PendingMessage } from "../../services/task-commands";
import { applyPendingRows, rejectPending } from "../../services/task-commands/recovery";
import { storedCommands } from "../../services/task-commands/store";
import { baseQueueName } from "../names";

/** Dead-letter queue → the queue its messages died on (wrangler.jsonc `dead_letter_queue`). */
export const DEAD_LETTER_SOURCES: Record<string, string> = {
  "fd-task-commands-dlq": "fd-task-commands",
  "fd-webhooks-dlq": "fd-webhooks",
  "fd-files-dlq": "fd-files",
  "fd-geocode-dlq": "fd-geocode",
  "fd-route-optimizations-dlq": "fd-route-optimizations",
  "fd-sms-dlq": "fd-sms",
  "fd-notifications-dlq": "fd-notifications",
  "fd-exports-dlq": "fd-exports",
  "fd-imports-dlq": "fd-imports",
};

const BODY_LIMIT = 16 * 1024;

/**
 * Asynchronous commands whose message died still get a final state: one more application
 * through the task's Durable Object, else `rejected` with the reason. Answers what happened.
 */
async function finishCommands(env: Env, msg: PendingMessage): Promise<string> {
  const rows = (await storedCommands(env, msg.actor.accountId, msg.externalIds)).filter(
    (r) => r.state === "pending",
  );
  if (!rows.length) return "retries exhausted; the commands were already final";
  try {
    await applyPendingRows(env, rows, msg.baseUrl);
    return `retries exhausted; ${rows.length} pending command(s) applied from the dead-letter queue`;
  } catch (err) {
    const reason = `Could not be applied: ${String(err).slice(0, 500)}`;
    await rejectPending(
      env,
      rows.map((r) => r.id),
      reason,
    );
    return `retries exhausted; ${rows.length} pending command(s) rejected: ${reason}`;
  }
}

/**
 * Consumer of every dead-letter queue: records each message and why it died (`dead_letters`),
 * gives asynchronous commands a final state, and alerts with one structured log line
 * (`"alert": "dead_letter"`) that log-based alerting can match.
 */
export async function handleDeadLetterBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const queue = baseQueueName(batch.queue, env);
  const source = DEAD_LETTER_SOURCES[queue] ?? queue;
  for (const m of batch.messages) {
    try {
      const reason =
        source === "fd-task-commands"
          ? await finishCommands(
              await inAccount(env, (m.body as PendingMessage).actor.accountId),
              m.body as PendingMessage,
            )
          : `retries exhausted on ${source}`;
      const body = JSON.stringify(m.body ?? null).slice(0, BODY_LIMIT);
      await env.DB.prepare(
        "INSERT INTO dead_letters (id, queue, body, reason, created_at) VALUES (?, ?, ?, ?, ?)",
      )
        .bind(uuidv7(), source, body, reason, Date.now())
        .run();
      console.error(
        JSON.stringify({ level: "error", alert: "dead_letter", queue: source, message_id: m.id, reason }),
      );
      m.ack();
    } catch (err) {
      console.error(JSON.stringify({ level: "error", queue: batch.queue, error: String(err) }));
      m.retry({ delaySeconds: 30 });
    }
  }
}
