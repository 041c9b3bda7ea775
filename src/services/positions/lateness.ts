import { inAccount } from "../../db/shards";
import { reverse } from "../../http/urls";
import { type EtaTask, etas, OPEN_STATES } from "../eta";
import { bulkEventStatements } from "../events/outbox";

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
