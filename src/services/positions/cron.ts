import { streamOf } from "../live";

/**
 * The cron's part (each minute): time alone makes tasks late, so every account's assigned,
 * unfinished tasks whose window ends within a day either side of now are checked by their
 * account's stream object (which makes each `task.late` once). Reads the partial index
 * `tasks_open_due_idx` (open assigned tasks only). Returns the number of workers checked.
 */
export const cronLatenessSql = `SELECT DISTINCT account_id, assignee_id FROM tasks INDEXED BY tasks_open_due_idx
  WHERE complete_before BETWEEN ? AND ? AND assignee_id IS NOT NULL AND state IN ('assigned', 'accepted', 'transit', 'active')`;

export async function cronLateness(env: Env, now: number): Promise<number> {
  const { results } = await env.DB.prepare(cronLatenessSql)
    .bind(now - 86_400_000, now + 86_400_000)
    .all<{ account_id: string; assignee_id: string }>();
  const byAccount = new Map<string, string[]>();
  for (const r of results)
    byAccount.get(r.account_id)?.push(r.assignee_id) ?? byAccount.set(r.account_id, [r.assignee_id]);
  const baseUrl = env.PUBLIC_BASE_URL ?? "";
  await Promise.all(
    [...byAccount].map(([accountId, users]) => streamOf(env, accountId).checkLate(accountId, users, baseUrl)),
  );
  return results.length;
}

/**
 * Auto-assign's safety net (contract §29), each minute: accounts with `auto_assign` `insert`
 * sweep their new unassigned tasks, for the writes no request made (imports, queued commands,
 * recurrences) and any sweep a request's end did not finish.
 */
export async function cronAutoAssign(env: Env): Promise<number> {
  const { results } = await env.DB.prepare("SELECT id FROM accounts WHERE auto_assign = 'insert'").all<{
    id: string;
  }>();
  const baseUrl = env.PUBLIC_BASE_URL ?? "";
  const placed = await Promise.all(results.map((a) => streamOf(env, a.id).autoAssignSoon(a.id, baseUrl)));
  return placed.reduce((x, y) => x + y, 0);
}
