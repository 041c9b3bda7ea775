/**
 * Runs `fn` over `items` concurrently, at most `n` at a time, each item once, in order of
 * start. Workers keep at most six outbound connections open per invocation (D1 calls, fetches),
 * so callers doing I/O pass 6 or less: more would only queue inside the runtime while their
 * timeouts already run.
 */
export async function pool<T>(items: Iterable<T>, n: number, fn: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, queue.length) }, async () => {
      while (next < queue.length) await fn(queue[next++]);
    }),
  );
}
