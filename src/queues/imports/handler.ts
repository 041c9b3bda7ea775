import { FileProblem, failImport, JobError, runImportStep } from "../../services/imports/apply";
import type { ImportMessage } from "./message";

/** Attempts before an import is marked failed (wrangler.jsonc: max_retries 5). */
const LAST_ATTEMPT = 5;

/**
 * Consumer of fd-imports: one step per message (services/imports/apply.ts). A file that cannot
 * be imported (not UTF-8, not CSV, too many rows) or a creator without a role fails the import
 * at once with the reason; other errors are retried with back-off, then fail it.
 */
export async function handleImportBatch(batch: MessageBatch<ImportMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    try {
      await runImportStep(env, message.body);
      message.ack();
    } catch (err) {
      const final = err instanceof FileProblem || err instanceof JobError;
      if (!final) console.error(JSON.stringify({ level: "error", queue: "imports", error: String(err) }));
      if (!final && message.attempts < LAST_ATTEMPT) {
        message.retry({ delaySeconds: 5 * 2 ** (message.attempts - 1) });
        continue;
      }
      // A reason about the file or the job is shown; an internal one stays in the log above.
      const reason = final
        ? (err as Error).message
        : `The import stopped on an internal error after ${message.attempts} attempts (logged with its id).`;
      await failImport(env, message.body, reason, err instanceof FileProblem ? err.error : null);
      message.ack();
    }
  }
}
