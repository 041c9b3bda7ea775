import { createApp } from "./app";
import { onEveryDatabase } from "./db/shards";
import { logLine } from "./http/log";
import { DEAD_LETTER_SOURCES, handleDeadLetterBatch } from "./queues/dead-letters/handler";
import { handleExportBatch } from "./queues/exports/handler";
import { handleFilesBatch } from "./queues/files/handler";
import { handleGeocodeBatch } from "./queues/geocode/handler";
import { handleImportBatch } from "./queues/imports/handler";
import { baseQueueName } from "./queues/names";
import { handleNotificationBatch } from "./queues/notifications/handler";
import { handleOptimizationBatch } from "./queues/route-optimizations/handler";
import { handleSmsBatch } from "./queues/sms/handler";
import { handleCommandBatch } from "./queues/task-commands/handler";
import { handleWebhookBatch } from "./queues/webhooks/handler";
import { advanceMoves } from "./services/accounts/move";
import { sweepWebhooks } from "./services/events/dispatch";
import { sweepExpiredExportFiles } from "./services/exports/lifecycle";
import { sweepJobLeases } from "./services/jobs/sweep";
import { sweepNotifications } from "./services/notifications/send";
import { sweepPositions } from "./services/positions";
import { cronAutoAssign, cronLateness } from "./services/positions/cron";
import { sweepRecurrences } from "./services/recurrences";
import { sweepRetention } from "./services/retention/sweep";
import { rearmOverdueSchedules } from "./services/task-commands";
import { sweepPendingCommands } from "./services/task-commands/recovery";

export { AccountStreamDO } from "./durable-objects/account-stream";
export { RateLimiterDO } from "./durable-objects/rate-limiter";
export { TaskDO } from "./durable-objects/task";

const app = createApp();

/** Queue consumers by queue name (wrangler.jsonc, without the environment's suffix), dead-letter queues included. */
const consumers: Record<string, (batch: MessageBatch<any>, env: Env) => Promise<void>> = {
  "fd-task-commands": handleCommandBatch,
  "fd-geocode": handleGeocodeBatch,
  "fd-files": handleFilesBatch,
  "fd-webhooks": handleWebhookBatch,
  "fd-route-optimizations": handleOptimizationBatch,
  "fd-sms": handleSmsBatch,
  "fd-notifications": handleNotificationBatch,
  "fd-exports": handleExportBatch,
  "fd-imports": handleImportBatch,
  ...Object.fromEntries(Object.keys(DEAD_LETTER_SOURCES).map((q) => [q, handleDeadLetterBatch])),
};

export default {
  fetch: app.fetch,
  async queue(batch, env) {
    const started = Date.now();
    const handler = consumers[baseQueueName(batch.queue, env)];
    if (!handler) {
      console.error(JSON.stringify({ level: "error", error: `no consumer for queue ${batch.queue}` }));
      batch.retryAll();
      return;
    }
    let outcome = "ok";
    try {
      await handler(batch, env);
    } catch (err) {
      outcome = "error";
      throw err;
    } finally {
      logLine({
        type: "queue",
        queue: batch.queue,
        messages: batch.messages.length,
        outcome,
        duration_ms: Date.now() - started,
      });
    }
  },
  /**
   * Cron (wrangler.jsonc `triggers`, every minute): the safety nets for work handed off after a
   * write commits: the webhook outbox sweeper, scheduled tasks whose alarm was never armed,
   * asynchronous commands still pending after their message was lost, and notifications planned
   * by writes that had no request to relay them (queue consumers, alarms); and the recurrences'
   * occurrences within the horizon (contract §20); jobs whose lease lapsed (services/jobs), and
   * export files past `EXPORT_FILE_TTL_DAYS`; rows past their retention window, into the archive.
   */
  async scheduled(controller, env, ctx) {
    const started = Date.now();
    ctx.waitUntil(
      // Each sweep runs on every database that holds accounts (the directory's own and each
      // shard, contract §24), its figures added up.
      Promise.allSettled([
        onEveryDatabase(env, sweepWebhooks),
        onEveryDatabase(env, rearmOverdueSchedules),
        onEveryDatabase(env, sweepPendingCommands),
        onEveryDatabase(env, sweepNotifications),
        onEveryDatabase(env, sweepRecurrences),
        onEveryDatabase(env, sweepJobLeases),
        onEveryDatabase(env, sweepExpiredExportFiles),
        // The cron's own time: tests and the bench move the clock through it.
        onEveryDatabase(env, (db) => sweepRetention(db, controller.scheduledTime)),
        // Accounts moving between databases (`npm run accounts:move`, contract §24): the
        // directory's list, a step at a time.
        advanceMoves(env, controller.scheduledTime),
        // Workers' trails past their account's window: deleted (contract §28).
        onEveryDatabase(env, (db) => sweepPositions(db.DB, controller.scheduledTime)),
        // Tasks that time alone made late (contract §28).
        onEveryDatabase(env, (db) => cronLateness(db, controller.scheduledTime)),
        // New unassigned tasks of accounts with auto-assign, for writes no request made (contract §29).
        cronAutoAssign(env),
      ]).then((all) => {
        const [sweep, , , notifications, recurring, jobs, expired, retention, moves, trails, late, placed] =
          all;
        for (const r of all) {
          if (r.status === "rejected")
            console.error(
              JSON.stringify({
                level: "error",
                type: "cron",
                error: String(r.reason),
                stack: (r.reason as Error)?.stack,
              }),
            );
        }
        logLine({
          type: "cron",
          cron: controller.cron,
          outcome: all.every((r) => r.status === "fulfilled") ? "ok" : "error",
          events_relayed: sweep.status === "fulfilled" ? sweep.value.events : null,
          deliveries_requeued: sweep.status === "fulfilled" ? sweep.value.requeued : null,
          notifications_queued: notifications.status === "fulfilled" ? notifications.value : null,
          occurrences_made: recurring.status === "fulfilled" ? recurring.value.made : null,
          jobs_requeued: jobs.status === "fulfilled" ? jobs.value.requeued : null,
          jobs_failed: jobs.status === "fulfilled" ? jobs.value.failed : null,
          export_files_expired: expired.status === "fulfilled" ? expired.value : null,
          archived_rows: retention.status === "fulfilled" ? retention.value.archived : null,
          archive_objects: retention.status === "fulfilled" ? retention.value.objects : null,
          expired_records_deleted: retention.status === "fulfilled" ? retention.value.deleted : null,
          retention_ms: retention.status === "fulfilled" ? retention.value.ms : null,
          accounts_moving: moves.status === "fulfilled" ? moves.value.moves : null,
          accounts_moved: moves.status === "fulfilled" ? moves.value.finished : null,
          account_moves_failed: moves.status === "fulfilled" ? moves.value.failed : null,
          account_rows_copied: moves.status === "fulfilled" ? moves.value.rows_copied : null,
          account_rows_deleted: moves.status === "fulfilled" ? moves.value.rows_deleted : null,
          position_slices_deleted: trails.status === "fulfilled" ? trails.value : null,
          workers_checked_late: late.status === "fulfilled" ? late.value : null,
          tasks_auto_assigned: placed.status === "fulfilled" ? placed.value : null,
          duration_ms: Date.now() - started,
        });
      }),
    );
  },
} satisfies ExportedHandler<Env>;
