import { createApp } from "./app";
import { handleGeocodeBatch } from "./queues/geocode/handler";
import { handleCommandBatch } from "./queues/task-commands/handler";

export { RateLimiterDO } from "./durable-objects/rate-limiter";
export { TaskDO } from "./durable-objects/task";

const app = createApp();

/** Queue consumers by queue name (wrangler.jsonc); dead-letter queues are not consumed here. */
const consumers: Record<string, (batch: MessageBatch<any>, env: Env) => Promise<void>> = {
  "fd-task-commands": handleCommandBatch,
  "fd-geocode": handleGeocodeBatch,
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
} satisfies ExportedHandler<Env>;
