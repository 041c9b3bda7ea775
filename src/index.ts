import { createApp } from "./app";
import { logLine } from "./http/log";
import { handleFilesBatch } from "./queues/files/handler";
import { handleGeocodeBatch } from "./queues/geocode/handler";
import { handleCommandBatch } from "./queues/task-commands/handler";
import { handleWebhookBatch } from "./queues/webhooks/handler";
import { sweepWebhooks } from "./services/events/dispatch";
import { rearmOverdueSchedules } from "./services/task-commands";

export { RateLimiterDO } from "./durable-objects/rate-limiter";
export { TaskDO } from "./durable-objects/task";

const app = createApp();

/** Queue consumers by queue name (wrangler.jsonc, without the environment's suffix). */
const consumers: Record<string, (batch: MessageBatch<any>, env: Env) => Promise<void>> = {
  "fd-task-commands": handleCommandBatch,
  "fd-geocode": handleGeocodeBatch,
  "fd-files": handleFilesBatch,
  "fd-webhooks": handleWebhookBatch,
};

export default {
  fetch: app.fetch,
  async queue(batch, env) {
    const started = Date.now();
    // Deployed environments suffix their queue names (wrangler.jsonc `QUEUE_SUFFIX`).
    const suffix = env.QUEUE_SUFFIX ?? "";
    const base = suffix && batch.queue.endsWith(suffix) ? batch.queue.slice(0, -suffix.length) : batch.queue;
    const handler = consumers[base];
    if (!handler) {
      console.error(JSON.stringify({ level: "error", error: `no consumer for queue ${batch.queue}` }));
      batch.retryAll();
      return;
    }
    let outcome = "ok";
    try {
      await handler(batch, env);
    } catch (err) {
      outcome = "error";
      throw err;
    } finally {
      logLine({
        type: "queue",
        queue: batch.queue,
        messages: batch.messages.length,
        outcome,
        duration_ms: Date.now() - started,
      });
    }
  },
  /**
   * Cron (wrangler.jsonc `triggers`, every minute): the safety nets for work handed off after a
   * write commits: the webhook outbox sweeper, and scheduled tasks whose alarm was never armed.
   */
  async scheduled(controller, env, ctx) {
    const started = Date.now();
    ctx.waitUntil(
      Promise.allSettled([sweepWebhooks(env), rearmOverdueSchedules(env)]).then(([sweep, rearm]) => {
        for (const r of [sweep, rearm]) {
          if (r.status === "rejected")
            console.error(
              JSON.stringify({
                level: "error",
                type: "cron",
                error: String(r.reason),
                stack: (r.reason as Error)?.stack,
              }),
            );
        }
        logLine({
          type: "cron",
          cron: controller.cron,
          outcome: sweep.status === "fulfilled" && rearm.status === "fulfilled" ? "ok" : "error",
          events_relayed: sweep.status === "fulfilled" ? sweep.value.events : null,
          deliveries_requeued: sweep.status === "fulfilled" ? sweep.value.requeued : null,
          duration_ms: Date.now() - started,
        });
      }),
    );
  },
} satisfies ExportedHandler<Env>;
