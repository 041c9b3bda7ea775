import { inStatement } from "../../db/in-list";
import { accountEnv, perDatabase } from "../../db/shards";
import { taskWriter } from "../../durable-objects/task/client";
import { COMMAND_SELECT } from "./apply/statements";
import type { Actor, CommandInput, CommandOutcome, CommandRow } from "./types";

/**
 * Every command accepted with `Prefer: respond-async` reaches a final state (contract §6):
 * the queue consumer applies it; when its message is lost (the queue send failed after the
 * row was written, the consumer died mid-batch, retries ran out), the cron sweep, a
 * synchronous replay of the same `external_id`, or the dead-letter consumer applies it
 * instead. All of them go through the task's Durable Object, whose guard
 * (`state = 'pending'`) makes a second application change nothing.
 */

/** Default age after which a pending command is the sweep's (its queue message had time to run). */
export const PENDING_SWEEP_AFTER_MS = 120_000;
const SWEEP_LIMIT = 500;
const NO_ROLE = "The command's user no longer has an active role in the account.";

export const rowToInput = (r: CommandRow): CommandInput => ({
  id: r.id,
  externalId: r.external_id,
  taskId: r.task_id,
  action: r.action as CommandInput["action"],
  time: r.time,
  assigneeId: r.assignee_id,
  taskData: JSON.parse(r.task_data || "{}"),
  notes: r.notes,
  location: r.location ? JSON.parse(r.location) : null,
});

/** The actor a command was sent by, as that user's role in the account stands now. */
async function actorFor(env: Env, accountId: string, userId: string | null): Promise<Actor | null> {
  const row = await env.DB.prepare(
    `SELECT r.role, a.feature_allow_worker_reordering, a.transit_active_limit, a.failed_reasons
     FROM accounts a
     JOIN account_roles r ON r.account_id = a.id AND r.user_id = ? AND r.is_active = 1 AND r.state = 'active'
     JOIN users u ON u.id = r.user_id AND u.is_active = 1
     WHERE a.id = ?`,
  )
    .bind(userId, accountId)
    .first<{
      role: Actor["role"];
      feature_allow_worker_reordering: number;
      transit_active_limit: number | null;
      failed_reasons: string;
    }>();
  if (!row) return null;
  return {
    userId,
    role: row.role,
    accountId,
    allowWorkerReordering: Boolean(row.feature_allow_worker_reordering),
    transitActiveLimit: row.transit_active_limit,
    failedReasons: JSON.parse(row.failed_reasons || "[]"),
  };
}

/** Final state for commands nobody may apply any more (rejected, with the reason). */
export async function rejectPending(env: Env, ids: string[], reason: string): Promise<void> {
  if (!ids.length) return;
  const now = Date.now();
  await inStatement(
    env.DB,
    "UPDATE task_commands SET state = 'rejected', error_message = ?, rejected_at = ?, updated_at = ? WHERE state = 'pending' AND id IN (UUID_LIST)",
    [reason, now, now],
    ids,
  ).run();
}

/**
 * Applies stored pending rows, grouped by task and sender, through each task's Durable Object.
 * Answers the outcomes by command id.
 */
export async function applyPendingRows(
  env: Env,
  rows: CommandRow[],
  baseUrl: string,
): Promise<Map<string, CommandOutcome>> {
  if (rows.length) env = await accountEnv(env, rows[0].account_id);
  const groups = new Map<string, CommandRow[]>();
  for (const r of rows) {
    if (r.state !== "pending") continue;
    const k = `${r.account_id}|${r.task_id}|${r.user_id ?? ""}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const out = new Map<string, CommandOutcome>();
  for (const group of groups.values()) {
    const first = group[0];
    const actor = await actorFor(env, first.account_id, first.user_id);
    if (!actor) {
      await rejectPending(
        env,
        group.map((r) => r.id),
        NO_ROLE,
      );
      continue;
    }
    // Creation order: the order the client sent them in.
    group.sort((a, b) => a.created_at - b.created_at || a.id.localeCompare(b.id));
    const outcomes = await taskWriter(env, first.task_id).applyPending({
      actor,
      taskId: first.task_id,
      commands: group.map(rowToInput),
      baseUrl,
    });
    for (const o of outcomes) out.set(o.row.id, o);
  }
  return out;
}

/** The cron's sweep: pending commands older than `olderThanMs` are applied now. */
export const sweepPendingCommands = perDatabase(async function sweepPendingCommands(
  env: Env,
  opts: { olderThanMs?: number; limit?: number } = {},
): Promise<number> {
  const cutoff = Date.now() - (opts.olderThanMs ?? sweepAfterMs(env));
  const { results } = await env.DB.prepare(
    `${COMMAND_SELECT} WHERE state = 'pending' AND created_at <= ? ORDER BY created_at, task_commands.id LIMIT ?`,
  )
    .bind(cutoff, opts.limit ?? SWEEP_LIMIT)
    .all<CommandRow>();
  if (!results.length) return 0;
  console.warn(JSON.stringify({ level: "warn", event: "pending_commands_swept", count: results.length }));
  await applyPendingRows(env, results, env.PUBLIC_BASE_URL ?? "");
  return results.length;
});

export function sweepAfterMs(env: { PENDING_COMMAND_SWEEP_SECONDS?: string }): number {
  const n = Number(env.PENDING_COMMAND_SWEEP_SECONDS);
  return env.PENDING_COMMAND_SWEEP_SECONDS && Number.isFinite(n) && n >= 0
    ? n * 1000
    : PENDING_SWEEP_AFTER_MS;
}
