import { createApp } from "./app";

export { RateLimiterDO } from "./durable-objects/rate-limiter";
export { TaskDO } from "./durable-objects/task";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
