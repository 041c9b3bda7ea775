/**
 * Keeps one token's requests under the service's rate limit instead of running into it.
 *
 * The service allows each token a number of requests a second (contract §10: 20 by default)
 * and answers 429 with `Retry-After` past it. A page that fires a burst (the field app's
 * refresh reads each task's documents and form responses at once) used to spend the second's
 * quota and leave the worker's own commands to a 429 and the outbox's next retry, seconds
 * later. So every request of a client waits here for a slot:
 *
 * - at most `quota − HEADROOM` requests start in any `WINDOW_MS`, a sliding window, which is
 *   stricter than the server's fixed one-second windows; the quota is read from each answer's
 *   `RateLimit-Policy` (`q=`, draft-ietf-httpapi-ratelimit-headers), so a deployment's setting
 *   is followed without the page knowing it;
 * - writes (anything but GET and HEAD: a command, an upload's record) go before reads that
 *   wait, so what the worker did is sent first;
 * - a 429 all the same (another tab with the same token) stops every request of the pacer for
 *   its `Retry-After` (RFC 9110 §10.2.3: seconds or an HTTP date), then the request is sent
 *   again, up to `RETRIES` times. A 429 means the server did nothing, so a repeat is safe.
 */

export const WINDOW_MS = 1000;
/** Requests kept in hand below the quota: a request's arrival may fall in another window than its start. */
export const HEADROOM = 2;
export const RETRIES = 3;
/** The longest `Retry-After` honoured here; longer, the 429 is the caller's. */
const MAX_WAIT_MS = 30_000;

type Waiter = { write: boolean; go: () => void };

export type Pacer = {
  fetch: (request: Request) => Promise<Response>;
  /** The quota in force (requests a window), as last read from the server. */
  readonly quota: number;
};

/** Seconds or an HTTP date (RFC 9110 §10.2.3), as milliseconds from now; 1 s when absent. */
export function retryAfterMs(value: string | null, now = Date.now()): number {
  if (!value) return 1000;
  const s = Number(value);
  const ms = Number.isFinite(s) ? s * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) ? Math.max(0, ms) : 1000;
}

/** The `q=` of a `RateLimit-Policy` field (`"default";q=20;w=1`), or null. */
export function policyQuota(value: string | null): number | null {
  const m = value ? /(?:^|;)\s*q=(\d+)/.exec(value) : null;
  const q = m ? Number(m[1]) : Number.NaN;
  return q > 0 ? q : null;
}

export function pacer(
  send: (request: Request) => Promise<Response> = (r) => fetch(r),
  opts: { quota?: number; windowMs?: number } = {},
): Pacer {
  const windowMs = opts.windowMs ?? WINDOW_MS;
  let quota = opts.quota ?? 20;
  const starts: number[] = [];
  const queue: Waiter[] = [];
  let blockedUntil = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const pump = () => {
    if (timer) return;
    while (queue.length) {
      const now = performance.now();
      while (starts.length && starts[0] <= now - windowMs) starts.shift();
      const room = Math.max(1, quota - HEADROOM);
      const wait = Math.max(blockedUntil - now, starts.length >= room ? starts[0] + windowMs - now : 0);
      if (wait > 0) {
        timer = setTimeout(() => {
          timer = null;
          pump();
        }, wait);
        return;
      }
      starts.push(now);
      queue.shift()!.go();
    }
  };

  const slot = (write: boolean) =>
    new Promise<void>((go) => {
      // Writes keep their order among themselves, ahead of every read that waits.
      const at = write ? queue.findIndex((w) => !w.write) : -1;
      queue.splice(at < 0 ? queue.length : at, 0, { write, go });
      pump();
    });

  return {
    get quota() {
      return quota;
    },
    async fetch(request: Request) {
      const write = request.method !== "GET" && request.method !== "HEAD";
      for (let attempt = 0; ; attempt++) {
        // The body is read by a send: each attempt sends a copy, the original kept for the next.
        const copy = attempt < RETRIES ? request.clone() : request;
        await slot(write);
        const response = await send(copy);
        const q = policyQuota(response.headers.get("RateLimit-Policy"));
        if (q) quota = q;
        if (response.status !== 429 || attempt >= RETRIES) return response;
        const wait = retryAfterMs(response.headers.get("Retry-After"));
        if (wait > MAX_WAIT_MS) return response;
        blockedUntil = Math.max(blockedUntil, performance.now() + wait);
        await response.body?.cancel();
      }
    },
  };
}

/** One pacer per token: the server counts per token, whatever client sends. */
const byToken = new Map<string, Pacer>();
export function pacerFor(token: string | null): Pacer {
  const key = token ?? "";
  const known = byToken.get(key);
  if (known) return known;
  const p = pacer();
  byToken.set(key, p);
  return p;
}
