/**
 * Per-token rate limit (contract §10): `limit` requests per one-second window, counted by a
 * Durable Object per key (durable-objects/rate-limiter) so that every isolate sees one
 * counter. To keep that object off the path of most requests, an isolate leases a slice of
 * the window's tokens and spends them locally.
 *
 * Only plain numbers are kept at module level. A promise (or any I/O object) created while one
 * request or event runs must never be awaited by another: workerd fails the second one ("This
 * promise was created by a request that has since ended") once the first has finished, which
 * once turned every anonymous request into a 500 after a cron run. So concurrent requests of
 * an isolate each ask for their own lease; the object hands out slices, never more than the
 * window holds.
 */
type Lease = { resetAt: number; tokens: number; remaining: number };
const leases = new Map<string, Lease>();
const WINDOW_MS = 1000;

export type RateLimitResult = { allowed: boolean; remaining: number; resetMs: number; limit: number };

/** How many tokens one lease asks for: a quarter of the window, so a few isolates can share it. */
const leaseSize = (limit: number) => Math.max(1, Math.ceil(limit / 4));

async function refill(env: Env, key: string, limit: number): Promise<Lease> {
  const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(key));
  const r = await stub.lease(limit, WINDOW_MS, leaseSize(limit));
  const fresh = { resetAt: r.resetAt, tokens: r.granted, remaining: r.remaining };
  // A concurrent request of this isolate may have leased meanwhile: keep both slices.
  const held = leases.get(key);
  if (held && held.resetAt === fresh.resetAt) {
    held.tokens += fresh.tokens;
    held.remaining = Math.min(held.remaining, fresh.remaining);
    return held;
  }
  leases.set(key, fresh);
  return fresh;
}

export async function consume(env: Env, counter: string, limit: number): Promise<RateLimitResult> {
  if (leases.size > 10_000) leases.clear(); // stale keys of past windows
  // A lease is for one limit: a changed setting starts from the object's count, not a stale slice.
  const key = `${limit}|${counter}`;
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = Date.now();
    let lease = leases.get(key);
    if (!lease || lease.resetAt <= now || lease.tokens <= 0) {
      if (lease && lease.resetAt > now && lease.remaining <= 0) {
        return { allowed: false, remaining: 0, resetMs: lease.resetAt - now, limit };
      }
      lease = await refill(env, key, limit);
      if (lease.tokens <= 0)
        return { allowed: false, remaining: 0, resetMs: Math.max(0, lease.resetAt - Date.now()), limit };
    }
    if (lease.tokens > 0 && lease.resetAt > Date.now()) {
      lease.tokens--;
      return {
        allowed: true,
        remaining: lease.tokens + lease.remaining,
        resetMs: lease.resetAt - Date.now(),
        limit,
      };
    }
  }
  return { allowed: false, remaining: 0, resetMs: WINDOW_MS, limit };
}
