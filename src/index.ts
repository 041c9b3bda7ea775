export default {
  async fetch(_req: Request): Promise<Response> {
    return new Response("ok");
  },
} satisfies ExportedHandler<Env>;

export class TaskDO {}
export class RateLimiterDO {}
