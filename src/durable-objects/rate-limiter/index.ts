import { DurableObject } from "cloudflare:workers";

/**
 * A fixed one-second window per key. In memory is enough: a Durable Object is one
 * instance worldwide, and losing a window's count on eviction only forgives one second.
 */
export class RateLimiterDO extends DurableObject<Env> {
  private windowStart = 0;
  private count = 0;

  hit(limit: number, windowMs: number): { allowed: boolean; remaining: number; resetMs: number } {
    const now = Date.now();
    if (now - this.windowStart >= windowMs) {
      this.windowStart = now - (now % windowMs);
      this.count = 0;
    }
    const resetMs = this.windowStart + windowMs - now;
    if (this.count >= limit) return { allowed: false, remaining: 0, resetMs };
    this.count++;
    return { allowed: true, remaining: limit - this.count, resetMs };
  }
}
