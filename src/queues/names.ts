/**
 * A queue's name without its environment's suffix (wrangler.jsonc `QUEUE_SUFFIX`: staging's
 * queues end in `-staging` so both environments fit in one Cloudflare account). Handlers are
 * looked up, and dead letters recorded, by this name.
 */
export function baseQueueName(queue: string, env: { QUEUE_SUFFIX?: string }): string {
  const suffix = env.QUEUE_SUFFIX ?? "";
  return suffix && queue.endsWith(suffix) ? queue.slice(0, -suffix.length) : queue;
}
