/**
 * A geocoding retry (fd-geocode queue). The write that could not geocode has already stored
 * the task (or contact address) with `geocode_failed_at`, or un-geocoded when the request's
 * geocoding budget ran out; the handler geocodes it again and stores the outcome.
 */
export type GeocodeMessage = {
  accountId: string;
  taskId?: string;
  contactAddressId?: string;
  /** An account role whose start/end address (the worker's depots) is to be geocoded. */
  accountRoleId?: string;
  /** Origin of the API the write came through: `task.updated` events carry absolute URLs. */
  baseUrl?: string;
};

/** The part of a Queue binding a producer needs (tests pass a recorder). */
export type GeocodeQueue = {
  sendBatch(messages: Iterable<MessageSendRequest<GeocodeMessage>>): Promise<unknown>;
};

/** A queue accepts at most 100 messages per sendBatch. */
const SEND_BATCH_MAX = 100;

/**
 * Sends retries after the write has committed. A failure to enqueue is logged, not raised:
 * the write itself succeeded, and the record stays findable with
 * `address__geocode_failed_at__isnull=false` / `address__geocoded_at__isnull=true`.
 */
export async function enqueueGeocodeRetries(queue: GeocodeQueue, messages: GeocodeMessage[]): Promise<void> {
  for (let i = 0; i < messages.length; i += SEND_BATCH_MAX) {
    try {
      await queue.sendBatch(messages.slice(i, i + SEND_BATCH_MAX).map((body) => ({ body })));
    } catch (err) {
      console.error(
        JSON.stringify({ level: "error", msg: "geocode retry not enqueued", error: String(err) }),
      );
    }
  }
}
