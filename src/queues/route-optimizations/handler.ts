import { inAccount } from "../../db/shards";
import { failOptimization, runOptimization } from "../../services/route-optimizations/run";
import { RoutingUnavailableError } from "../../services/routing";
import type { OptimizationMessage } from "./message";

/** Retries before an optimization is marked failed (wrangler.jsonc: max_retries 3). */
const LAST_ATTEMPT = 3;

/**
 * Consumer of fd-route-optimizations: one job per message. A temporary failure (the routing
 * service down) is retried with back-off; on the last attempt, or for an error that a retry
 * cannot mend, the optimization is `failed` with the reason.
 */
export async function handleOptimizationBatch(
  batch: MessageBatch<OptimizationMessage>,
  env: Env,
): Promise<void> {
  for (const message of batch.messages) {
    try {
      await runOptimization(await inAccount(env, message.body.accountId), message.body);
      message.ack();
    } catch (err) {
      const temporary = err instanceof RoutingUnavailableError;
      console.error(JSON.stringify({ level: "error", queue: "route-optimizations", error: String(err) }));
      if (temporary && message.attempts < LAST_ATTEMPT) {
        message.retry({ delaySeconds: 30 * 2 ** (message.attempts - 1) });
        continue;
      }
      await failOptimization(
        await inAccount(env, message.body.accountId),
        message.body,
        err instanceof Error ? err.message : String(err),
      );
      message.ack();
    }
  }
}
