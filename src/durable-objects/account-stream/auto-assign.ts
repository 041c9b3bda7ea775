import { accountDatabase, inAccount } from "../../db/shards";
import {
  type AutoAssignResult,
  autoAssign,
  type LatestPositions,
  newDayCache,
} from "../../services/auto-assign";
import { accountHasWebhooks, dispatchSoon } from "../../services/events/dispatch";
import { dayIn } from "../../services/route-optimizations/build";

/** A sweep looks this far behind its last pass: a write committed late is still seen. */
const OVERLAP_MS = 10_000;
/** Tasks one sweep takes at most (the rest the next pass). */
const SWEEP_LIMIT = 200;

/**
 * Auto-assign's single writer per account (contract §29): the account's stream object runs
 * every insertion of the account one after the other, so two tasks arriving together are placed
 * one against the routes the other left, never both into the last room of one route.
 *
 * A write of the account wakes a sweep (http/relay.ts, the cron each minute as the safety net):
 * it reads the tasks changed since its last pass that are unassigned, located, and due today,
 * and inserts them in window order. Each task's version is noted once tried, so a task that fits
 * nowhere gets one `task.auto_assign_failed` per change, not one per sweep.
 */
export class AutoAssigner {
  private chain: Promise<unknown> = Promise.resolve();
  private sweeping: Promise<number> | null = null;
  private again = false;
  /** Today's routes as last read (services/auto-assign `DayCache`): only what changed is read again. */
  private readonly day = newDayCache();

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    /**
     * The workers' latest positions as this object holds them (exact, and no D1 read): a
     * position answered 202 a moment ago decides a route.
     */
    private readonly latest: LatestPositions,
  ) {}

  /** Runs `work` after every insertion before it (one at a time per account). */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * `POST /tasks/auto_assign/`: these tasks, now, in this order; or, when some are not the
   * account's tasks, their indexes and nothing placed.
   */
  run(
    accountId: string,
    taskIds: string[],
    baseUrl: string,
  ): Promise<AutoAssignResult[] | { missing: number[] }> {
    return this.serial(() => this.insert(accountId, taskIds, baseUrl, true));
  }

  private async insert(accountId: string, taskIds: string[], baseUrl: string, strict = false) {
    const results = await autoAssign(this.env, accountId, taskIds, baseUrl, {
      announce: true,
      cache: this.day,
      strict,
      latest: this.latest,
    });
    if ("missing" in results) return results;
    if (
      results.some((r) => r.reason) &&
      (await accountHasWebhooks(await inAccount(this.env, accountId), accountId))
    )
      dispatchSoon(this.ctx, this.env);
    return results;
  }

  /** A sweep soon; sweeps asked for while one runs are folded into one more pass. */
  sweep(accountId: string, baseUrl: string): Promise<number> {
    if (this.sweeping) {
      this.again = true;
      return this.sweeping;
    }
    this.sweeping = (async () => {
      let placed = 0;
      do {
        this.again = false;
        placed += await this.serial(() => this.pass(accountId, baseUrl));
      } while (this.again);
      return placed;
    })().finally(() => {
      this.sweeping = null;
    });
    return this.sweeping;
  }

  private async pass(accountId: string, baseUrl: string): Promise<number> {
    const sql = this.ctx.storage.sql;
    sql.exec(
      "CREATE TABLE IF NOT EXISTS auto_assign_tried (task TEXT PRIMARY KEY, version INTEGER NOT NULL, at INTEGER NOT NULL)",
    );
    const now = Date.now();
    const db = await accountDatabase(this.env, accountId);
    const account = await db
      .prepare("SELECT timezone, auto_assign, updated_at FROM accounts WHERE id = ?")
      .bind(accountId)
      .first<{ timezone: string; auto_assign: string; updated_at: number }>();
    if (account?.auto_assign !== "insert") return 0;
    // Tasks that became unassigned while the setting was off are not swept up when it is turned on.
    const from = Math.max(
      ((await this.ctx.storage.get<number>("auto_assign_from")) ?? now - 60_000) - OVERLAP_MS,
      account.updated_at,
    );
    const today = dayIn(now, account.timezone);
    const { results } = await db
      .prepare(
        `SELECT id, version, updated_at, complete_after, complete_before, scheduled_time,
           json_extract(address, '$.location.coordinates[0]') IS NOT NULL AS located FROM tasks
         WHERE account_id = ? AND updated_at >= ? AND state = 'unassigned' ORDER BY updated_at, id LIMIT ?`,
      )
      .bind(accountId, from, SWEEP_LIMIT)
      .all<{
        id: string;
        version: number;
        updated_at: number;
        complete_after: number | null;
        complete_before: number | null;
        scheduled_time: number | null;
        located: number;
      }>();
    const due = results.filter((t) => {
      const tried = sql.exec("SELECT version FROM auto_assign_tried WHERE task = ?", t.id).toArray()[0];
      if (tried && tried.version === t.version) return false;
      if (!t.located) return false;
      // A window or a scheduled time on today, in the account's zone (contract §29).
      const day = (ms: number | null) => (ms === null ? null : dayIn(ms, account.timezone));
      const [a, b, s] = [day(t.complete_after), day(t.complete_before), day(t.scheduled_time)];
      return s === today || ((a !== null || b !== null) && (a ?? b)! <= today && (b ?? a)! >= today);
    });
    due.sort(
      (x, y) =>
        (x.complete_after ?? x.scheduled_time ?? x.complete_before ?? 0) -
          (y.complete_after ?? y.scheduled_time ?? y.complete_before ?? 0) || (x.id < y.id ? -1 : 1),
    );
    const out = due.length
      ? await this.insert(
          accountId,
          due.map((t) => t.id),
          baseUrl,
        )
      : [];
    for (const t of due)
      sql.exec(
        "INSERT OR REPLACE INTO auto_assign_tried (task, version, at) VALUES (?, ?, ?)",
        t.id,
        t.version,
        now,
      );
    sql.exec("DELETE FROM auto_assign_tried WHERE at < ?", now - 2 * 86_400_000);
    const last = results.length === SWEEP_LIMIT ? results[results.length - 1].updated_at + OVERLAP_MS : now;
    await this.ctx.storage.put("auto_assign_from", last);
    if (results.length === SWEEP_LIMIT) this.again = true;
    return "missing" in out ? 0 : out.filter((r) => r.assigneeId).length;
  }
}
