import { createApp } from "./app";

export { RateLimiterDO } from "./durable-objects/rate-limiter";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;

export class TaskDO {}
