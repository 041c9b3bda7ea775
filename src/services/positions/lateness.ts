import { inAccount } from "../../db/shards";
import { reverse } from "../../http/urls";
import { type EtaTask, etas, OPEN_STATES } from "../eta";
import { bulkEventStatements } from "../events/outbox";
import { streamOf } from "../live";

/**
 * Lateness (contract §28): a task is late when its ETA (services/eta) is after its
 * `complete_before`. The account's stream object checks a worker's tasks shortly after the
 * position or command that may make one late, and every minute from the cron (time alone moves
 * ETAs); it makes `task.late` once per task and window. Here: which tasks are late now.
 */

export type LateTask = { id: string; eta: number; complete_before: number };

const OPEN_SQL = OPEN_STATES.map((s) => `'${s}'`).join(",");

/** The unfinished tasks of `users` that have a window's end, and which of them are late at `now`. */
export async function lateTasks(
  base: Env,
  accountId: string,
  users: string[],
  now: number,
): Promise<{ late: LateTask[]; statements: number }> {
  if (!users.length) return { late: [], statements: 0 };
  const env = await inAccount(base, accountId);
  const { results } = await env.DB.prepare(
    `SELECT id, account_id, state, assignee_id, route_id, address, duration_seconds, complete_after, complete_before
     FROM tasks WHERE account_id = ? AND assignee_id IN (SELECT value FROM json_each(?)) AND state IN (${OPEN_SQL})
       AND complete_before IS NOT NULL`,
  )
    .bind(accountId, JSON.stringify(users))
    .all<EtaTask>();
  if (!results.length) return { late: [], statements: 1 };
  const computed = await etas(env, results, now);
  const late: LateTask[] = [];
  for (const t of results) {
    const e = computed.get(t.id);
    if (e && "late" in e && e.late) late.push({ id: t.id, eta: e.eta, complete_before: t.complete_before! });
  }
  // The tasks' read, then the ETAs' batch (services/eta: four statements).
  return { late, statements: 5 };
}

/** The `task.late` events of `tasks` (contract §28), in as few statements as D1's limits allow. */
export function lateEventStatements(
  db: D1Database,
  accountId: string,
  tasks: LateTask[],
  baseUrl: string,
  now: number,
): D1PreparedStatement[] {
  const iso = (ms: number) => new Date(ms).toISOString();
  return bulkEventStatements(
    db,
    accountId,
    tasks.map((t) => ({
      type: "task.late" as const,
      objectId: t.id,
      data: {
        task: reverse(baseUrl, "tasks", t.id),
        eta: iso(t.eta),
        complete_before: iso(t.complete_before),
      },
    })),
    { now, onlyIfExistsIn: "tasks" },
  );
}

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
