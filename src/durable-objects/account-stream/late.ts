import { accountDatabase, inAccount } from "../../db/shards";
import { accountHasWebhooks, dispatchSoon } from "../../services/events/dispatch";
import { type LateTask, lateEventStatements, lateTasks } from "../../services/positions/lateness";
import type { PositionStore } from "./positions";

/** Lateness notes (task → window) are forgotten this long after their window closed. */
const LATE_NOTE_KEEP_MS = 2 * 86_400_000;

/**
 * `task.late` (contract §28) for the tasks of `users` that are late now, once per task and
 * window: the window each was told for is kept in the account's stream object's own storage,
 * so a check made again (a position, a command, the cron) tells nothing twice and a new window
 * (`complete_before` changed) tells again. Returns how many were told.
 */
export async function notifyLate(
  ctx: DurableObjectState,
  env: Env,
  positions: PositionStore,
  q: { accountId: string; users: string[]; now: number; baseUrl: string },
): Promise<number> {
  const sql = ctx.storage.sql;
  sql.exec("CREATE TABLE IF NOT EXISTS late_told (task TEXT PRIMARY KEY, window INTEGER NOT NULL)");
  const { late, statements } = await lateTasks(env, q.accountId, q.users, q.now);
  positions.countStatements(statements);
  const fresh: LateTask[] = late.filter((t) => {
    const told = sql.exec("SELECT window FROM late_told WHERE task = ?", t.id).toArray()[0];
    return !told || told.window !== t.complete_before;
  });
  if (fresh.length) {
    const db = await accountDatabase(env, q.accountId);
    await db.batch(lateEventStatements(db, q.accountId, fresh, q.baseUrl, q.now));
    positions.countStatements(1);
    for (const t of fresh)
      sql.exec("INSERT OR REPLACE INTO late_told (task, window) VALUES (?, ?)", t.id, t.complete_before);
    // Webhooks hear of it now, as after a request's write (http/relay.ts), not at the cron's sweep.
    if (await accountHasWebhooks(await inAccount(env, q.accountId), q.accountId)) dispatchSoon(ctx, env);
  }
  sql.exec("DELETE FROM late_told WHERE window < ?", q.now - LATE_NOTE_KEEP_MS);
  return fresh.length;
}
