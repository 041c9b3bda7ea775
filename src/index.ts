import { createApp } from "./app";
import { DEAD_LETTER_SOURCES, handleDeadLetterBatch } from "./queues/dead-letters/handler";
import { handleFilesBatch } from "./queues/files/handler";
import { handleGeocodeBatch } from "./queues/geocode/handler";
import { handleCommandBatch } from "./queues/task-commands/handler";
import { handleWebhookBatch } from "./queues/webhooks/handler";
import { sweepWebhooks } from "./services/events/dispatch";
import { rearmOverdueSchedules } from "./services/task-commands";
import { sweepPendingCommands } from "./services/task-commands/recovery";

export { RateLimiterDO } from "./durable-objects/rate-limiter";
export { TaskDO } from "./durable-objects/task";

const app = createApp();

/** Queue consumers by queue name (wrangler.jsonc), dead-letter queues included. */
const consumers: Record<string, (batch: MessageBatch<any>, env: Env) => Promise<void>> = {
  "fd-task-commands": handleCommandBatch,
  "fd-geocode": handleGeocodeBatch,
  "fd-files": handleFilesBatch,
  "fd-webhooks": handleWebhookBatch,
  ...Object.fromEntries(Object.keys(DEAD_LETTER_SOURCES).map((q) => [q, handleDeadLetterBatch])),
};

export default {
  fetch: app.fetch,
  async queue(batch, env) {
    const handler = consumers[batch.queue];
    if (!handler) {
      console.error(JSON.stringify({ level: "error", error: `no consumer for queue ${batch.queue}` }));
      batch.retryAll();
      return;
    }
    await handler(batch, env);
  },
  /**
   * Cron (wrangler.jsonc `triggers`, every minute): the safety nets for work handed off after a
   * write commits: the webhook outbox sweeper, scheduled tasks whose alarm was never armed, and
   * asynchronous commands still pending after their message was lost.
   */
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(Promise.all([sweepWebhooks(env), rearmOverdueSchedules(env), sweepPendingCommands(env)]));
  },
} satisfies ExportedHandler<Env>;
