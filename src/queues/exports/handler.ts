import { inAccount } from "../../db/shards";
import { failExport, JobError, runExportStep } from "../../services/exports/run";
import type { ExportMessage } from "./message";

/** Attempts before an export is marked failed (wrangler.jsonc: max_retries 5). */
const LAST_ATTEMPT = 5;

/**
 * Consumer of fd-exports: one step per message (./services/exports/run.ts). A failure is
 * retried with back-off (D1 or R2 hiccups); a reason no retry can mend (the creator lost their
 * role), or the last attempt, fails the export with `error_message`.
 */
export async function handleExportBatch(batch: MessageBatch<ExportMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    try {
      await runExportStep(await inAccount(env, message.body.accountId), message.body);
      message.ack();
    } catch (err) {
      console.error(JSON.stringify({ level: "error", queue: "exports", error: String(err) }));
      if (!(err instanceof JobError) && message.attempts < LAST_ATTEMPT) {
        message.retry({ delaySeconds: 5 * 2 ** (message.attempts - 1) });
        continue;
      }
      // A reason the job gives (JobError) is shown; an internal one stays in the log above.
      const reason =
        err instanceof JobError
          ? err.message
          : `The export stopped on an internal error after ${message.attempts} attempts (logged with its id).`;
      await failExport(await inAccount(env, message.body.accountId), message.body, reason);
      message.ack();
    }
  }
}
