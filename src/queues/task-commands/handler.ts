import { taskWriter } from "../../durable-objects/task/client";
import { dispatchPendingEvents } from "../../services/events/dispatch";
import { pokeAccount } from "../../services/live";
import { accountHasTemplates, relayNotifications } from "../../services/notifications/send";
import { type PendingMessage, pendingCommands } from "../../services/task-commands";

/**
 * Applies asynchronous commands. Each message holds one task's command keys; the TaskDO moves
 * rows from `pending` to their outcome under a `state = 'pending'` guard, so a redelivery after
 * a crash (before ack) finds them applied and changes nothing.
 */
export async function handleCommandBatch(batch: MessageBatch<PendingMessage>, env: Env): Promise<void> {
  /** Accounts whose commands were applied, with a base URL for their links. */
  const applied = new Map<string, string>();
  await Promise.all(
    batch.messages.map(async (m) => {
      try {
        const commands = await pendingCommands(env, m.body);
        await taskWriter(env, m.body.taskId).applyPending({ ...m.body, commands });
        applied.set(m.body.actor.accountId, m.body.baseUrl);
        m.ack();
      } catch (err) {
        console.error(JSON.stringify({ level: "error", queue: "task-commands", error: String(err) }));
        m.retry({ delaySeconds: Math.min(60, 2 ** m.attempts) });
      }
    }),
  );
  // Relay the outcomes' events to webhooks, and the notifications they planned, now rather
  // than at the next sweep.
  await dispatchPendingEvents(env).catch((err) =>
    console.error(
      JSON.stringify({ level: "error", queue: "task-commands", error: `dispatch: ${String(err)}` }),
    ),
  );
  for (const [accountId, baseUrl] of applied) {
    await (async () => {
      if (await accountHasTemplates(env, accountId)) await relayNotifications(env, baseUrl, { accountId });
      // Live streams of the account get the outcomes now (a cheap call when none is open).
      await pokeAccount(env, accountId);
    })().catch((err) =>
      console.error(
        JSON.stringify({ level: "error", queue: "task-commands", error: `notifications: ${String(err)}` }),
      ),
    );
  }
}
