/**
 * Waits until `ready()` gives something (not undefined), checking on timers of the caller's
 * own, or gives `fallback` once `ms` have passed. For a request that waits for another request
 * of its isolate (group commit): on Workers a request resumed by another request's promise runs
 * on in that request's context, and its I/O is then cancelled when that request ends first
 * ("Cannot perform I/O on behalf of a different request"); a timer of its own resumes it in its
 * own context. The timers also keep the wait from looking hung to the runtime, and a request
 * cancelled before it answered holds no one up for longer than `ms`.
 */
export async function pollFor<T, F>(ready: () => T | undefined, ms: number, fallback: F): Promise<T | F> {
  const until = Date.now() + ms;
  for (let polls = 0, pause = 1; ; polls++) {
    const value = ready();
    if (value !== undefined) return value;
    if (Date.now() >= until) return fallback;
    await new Promise((resolve) => setTimeout(resolve, pause));
    // Every millisecond at first (a write takes a few), then less often.
    if (polls >= 8) pause = Math.min(pause * 2, 16);
  }
}
