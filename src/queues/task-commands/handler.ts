import { inAccount } from "../../db/shards";
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
export async function handleCommandBatch(batch: MessageBatch<PendingMessage>, base: Env): Promise<void> {
  const env = base;
  /** Accounts whose commands were applied, with a base URL for their links. */
  const applied = new Map<string, string>();
  await Promise.all(
    batch.messages.map(async (m) => {
      try {
        const account = await inAccount(env, m.body.actor.accountId);
        const commands = await pendingCommands(account, m.body);
        await taskWriter(account, m.body.taskId).applyPending({ ...m.body, commands });
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
  for (const [accountId, baseUrl] of applied) {
    const env = await inAccount(base, accountId);
    await dispatchPendingEvents(env).catch((err) =>
      console.error(
        JSON.stringify({ level: "error", queue: "task-commands", error: `dispatch: ${String(err)}` }),
      ),
    );
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
