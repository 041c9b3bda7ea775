import { DurableObject } from "cloudflare:workers";

/**
 * The counter of one rate-limit key (a token, or a client address), in fixed one-second
 * windows. In memory is enough: a Durable Object is one instance worldwide, and losing a
 * window's count on eviction only forgives one second.
 *
 * Isolates lease tokens (several at a time) and spend them locally (http/rate-limit.ts), so
 * the object is asked once per lease, not once per request. Grants never exceed the limit
 * within a window, so the limit holds across isolates; tokens leased but unspent when the
 * window ends are simply lost (conservative).
 */
export class RateLimiterDO extends DurableObject<Env> {
  private windowStart = 0;
  private count = 0;

  lease(
    limit: number,
    windowMs: number,
    want: number,
  ): { granted: number; remaining: number; resetAt: number } {
    const now = Date.now();
    if (now - this.windowStart >= windowMs) {
      this.windowStart = now - (now % windowMs);
      this.count = 0;
    }
    const granted = Math.max(0, Math.min(want, limit - this.count));
    this.count += granted;
    return { granted, remaining: limit - this.count, resetAt: this.windowStart + windowMs };
  }
}
