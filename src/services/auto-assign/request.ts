import { accountEnv } from "../../db/shards";
import { ValidationError } from "../../http/errors";
import { parseHyperlink } from "../../http/urls";
import type { Principal } from "../auth/principal";
import { streamOf } from "../live";
import { dayBounds } from "../tasks/list";
import type { AutoAssignResult } from ".";

const NO_MATCH = "Invalid hyperlink - No URL match.";
const DOES_NOT_EXIST = "Invalid hyperlink - Object does not exist.";
/** Tasks one call of a day places at most: the first by window start (the rest: call again). */
const DAY_LIMIT = 500;

/**
 * `POST /tasks/auto_assign/` (contract §29): the listed tasks (each a task of the account, or
 * the call is 400 naming each bad item and nothing is placed), or a day's unassigned tasks by
 * window start; placed by the account's stream object, one insertion at a time per account.
 */
export async function autoAssignRequest(
  env: Env,
  p: Principal,
  body: { tasks: string[] } | { day: string },
  baseUrl: string,
): Promise<AutoAssignResult[]> {
  const db = (await accountEnv(env, p.accountId)).DB;
  let ids: string[];
  if ("tasks" in body) {
    // The syntax here; whether each is a task of the account, in the insertion's own read.
    const parsed = body.tasks.map((t) => parseHyperlink(t, "tasks"));
    const errors: Record<string, string[]> = {};
    parsed.forEach((id, i) => {
      if (!id) errors[i] = [NO_MATCH];
    });
    if (Object.keys(errors).length) throw new ValidationError({ tasks: errors });
    ids = parsed as string[];
  } else {
    const account = await db
      .prepare("SELECT timezone FROM accounts WHERE id = ?")
      .bind(p.accountId)
      .first<{ timezone: string }>();
    const day = dayBounds(body.day, account?.timezone ?? "UTC");
    if (!day) throw new ValidationError({ day: ["Enter a valid date (YYYY-MM-DD)."] });
    const { results } = await db
      .prepare(
        `SELECT id FROM tasks WHERE account_id = ? AND state = 'unassigned'
           AND ((COALESCE(complete_after, complete_before) < ? AND COALESCE(complete_before, complete_after) >= ?)
             OR (scheduled_time >= ? AND scheduled_time < ?))
         ORDER BY COALESCE(complete_after, scheduled_time, complete_before), id LIMIT ?`,
      )
      .bind(p.accountId, day.end, day.start, day.start, day.end, DAY_LIMIT)
      .all<{ id: string }>();
    ids = results.map((r) => r.id);
  }
  if (!ids.length) return [];
  const out = await streamOf(env, p.accountId).autoAssign(p.accountId, ids, baseUrl);
  if ("missing" in out)
    throw new ValidationError({ tasks: Object.fromEntries(out.missing.map((i) => [i, [DOES_NOT_EXIST]])) });
  return out;
}
