import { CLOSED_STATES } from "../tasks/types";

/**
 * Auto-assign (contract §7): each new task goes to the account's active worker with the fewest
 * open tasks, ties broken by the earliest account role. Counts start from D1 and grow as this
 * order's tasks are handed out, so one order's tasks spread over the workers.
 *
 * Two orders auto-assigned at the same instant may both see the same counts: the balance is a
 * heuristic, not an invariant, so it is not worth serializing orders for.
 */
export async function pickAssignees(db: D1Database, accountId: string, count: number): Promise<string[]> {
  if (count === 0) return [];
  const closed = CLOSED_STATES.map((s) => `'${s}'`).join(", ");
  const { results } = await db
    .prepare(
      `SELECT r.user_id AS id, r.created_at AS since,
         (SELECT COUNT(*) FROM tasks t WHERE t.account_id = r.account_id AND t.assignee_id = r.user_id
            AND t.state NOT IN (${closed})) AS open
       FROM account_roles r JOIN users u ON u.id = r.user_id
       WHERE r.account_id = ? AND r.role = 'worker' AND r.is_active = 1 AND r.state = 'active' AND u.is_active = 1
       ORDER BY r.created_at, r.id`,
    )
    .bind(accountId)
    .all<{ id: string; since: number; open: number }>();
  if (results.length === 0) return [];
  // Rows come in role order, so the index is the tie-break rank.
  const workers = results.map((w, rank) => ({ ...w, rank }));
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let best = workers[0];
    for (const w of workers) if (w.open < best.open || (w.open === best.open && w.rank < best.rank)) best = w;
    out.push(best.id);
    best.open++;
  }
  return out;
}
