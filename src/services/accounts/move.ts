import { ACCOUNT_DATA_TABLES, type AccountDataTable } from "../../db/account-tables";
import {
  copyRows,
  copyUsers,
  DIRECTORY,
  databaseNamed,
  directoryOf,
  forgetPlacement,
  PLACEMENT_TTL_MS,
  shardNames,
  upsertRows,
} from "../../db/shards";
import { sha256Hex } from "../../lib/crypto";

/**
 * Moving an account to another database (contract §24, `npm run accounts:move`). The script
 * writes a request into the directory's `account_moves`; the cron carries it out here, one
 * bounded step at a time, each step's outcome written back to that row, so a crash, a timeout or
 * a deploy resumes at the step it stopped in:
 *
 * 1. requested → marked: the account's writes answer 503 with `Retry-After` (its row's
 *    `moving_until`, a lease every step renews; requests read it in their token check, and a
 *    task's object's write proof fails once it changes). Reads go on from the source.
 * 2. marked → copying: after SETTLE_MS (writes that passed their check before the mark land),
 *    leftovers of an earlier attempt are cleared from the target, the global rows its requests
 *    join are copied there (the account, its roles, its members and their tokens), then every
 *    table of account data (db/account-tables.ts), in key order, a page per step.
 * 3. verifying: each table's rows and a SHA-256 over them, read back from both sides, must match;
 *    a mismatch (work no request made, e.g. a queue consumer, wrote meanwhile) copies again from
 *    the start, at most MAX_ATTEMPTS times.
 * 4. switching: the directory's `accounts.shard` names the target (one statement: before it the
 *    account is whole on the source, after it whole on the target).
 * 5. draining: DRAIN_MS, so every isolate's cached placement has expired (db/shards.ts).
 * 6. deleting: the source's rows go, children first, a page per step; then the lease ends.
 *
 * Before the switch a move that keeps failing gives up (`failed`): the target's partial copy is
 * removed and the lease cleared, the account stays whole where it was. A lease that lapsed (the
 * cron was away longer than LEASE_MS, so writes resumed on the source) starts the copy again.
 */

const LEASE_MS = 60_000;
const SETTLE_MS = 3_000;
export const DRAIN_MS = PLACEMENT_TTL_MS + 3_000;
const PAGE = 100;
const DELETE_PAGE = 500;
const MAX_ATTEMPTS = 5;
/** A cron run's time for moves (a Worker's cron may run for 15 minutes of wall time). */
const BUDGET_MS = 45_000;
/** How long past its budget a run's hold on a move lasts, should the run die without letting go. */
const CLAIM_SLACK_MS = 30_000;

export type MovePhase =
  | "requested"
  | "marked"
  | "copying"
  | "verifying"
  | "switching"
  | "draining"
  | "deleting"
  | "done"
  | "failed";

export type MoveRow = {
  account_id: string;
  source: string | null;
  target: string;
  phase: MovePhase;
  table_index: number;
  cursor: string | null;
  rows_copied: number;
  rows_deleted: number;
  attempts: number;
  detail: string | null;
  requested_at: number;
  updated_at: number;
  marked_at: number | null;
  switched_at: number | null;
  finished_at: number | null;
  claimed_until: number | null;
};

type Detail = {
  tables?: Record<string, { rows: number; sha256: string }>;
  error?: string;
  restarts?: number;
};

/**
 * Asks for a move: what scripts/accounts-move.mjs writes (tests call this). A finished or failed
 * move may be asked again; the first step starts it afresh.
 */
export async function requestMove(env: Env, accountId: string, target: string, now = Date.now()) {
  await directoryOf(env)
    .prepare(
      `INSERT INTO account_moves (account_id, target, phase, requested_at, updated_at) VALUES (?, ?, 'requested', ?, ?)
  ON CONFLICT (account_id) DO UPDATE SET target = excluded.target, phase = 'requested',
    attempts = 0, detail = NULL, requested_at = excluded.requested_at, updated_at = excluded.updated_at
  WHERE account_moves.phase IN ('done', 'failed')`,
    )
    .bind(accountId, target, now, now)
    .run();
}

export type MoveFigures = {
  moves: number;
  rows_copied: number;
  rows_deleted: number;
  finished: number;
  failed: number;
};

/**
 * The cron's part: every move not finished, advanced step by step within the run's budget.
 * `now` is the cron's time (tests move it); the wall clock measures the budget and the waits.
 */
export async function advanceMoves(env: Env, now = Date.now(), budgetMs = BUDGET_MS): Promise<MoveFigures> {
  const directory = directoryOf(env);
  const { results } = await directory
    .prepare("SELECT * FROM account_moves WHERE phase NOT IN ('done', 'failed') ORDER BY requested_at")
    .all<MoveRow>();
  const figures: MoveFigures = { moves: 0, rows_copied: 0, rows_deleted: 0, finished: 0, failed: 0 };
  const started = Date.now();
  const clock = () => now + (Date.now() - started);
  const deadline = started + budgetMs;
  for (const listed of results) {
    // Held by this run alone (the cron fires every minute; a local script calls it more often):
    // a run that finds the move held by another leaves it to that one.
    const claim = deadline + CLAIM_SLACK_MS;
    const held = await directory
      .prepare(
        "UPDATE account_moves SET claimed_until = ? WHERE account_id = ? AND (claimed_until IS NULL OR claimed_until < ?) RETURNING *",
      )
      .bind(claim, listed.account_id, Date.now())
      .first<MoveRow>();
    if (!held || held.phase === "done" || held.phase === "failed") continue;
    figures.moves++;
    let move = held;
    try {
      while (Date.now() < deadline) {
        const before = move;
        let next: MoveRow | number;
        try {
          next = await step(env, move, clock());
        } catch (err) {
          if (!(err instanceof Superseded)) {
            move = await stepFailed(env, move, err, clock()).catch(() => move);
            if (move.phase === "failed") figures.failed++;
          }
          break;
        }
        if (typeof next === "number") {
          // A wait (the settle, the drain): slept here when the run has the time, else next run.
          if (Date.now() + next >= deadline) break;
          await new Promise((r) => setTimeout(r, next as number));
          continue;
        }
        move = next;
        figures.rows_copied += move.rows_copied - before.rows_copied;
        figures.rows_deleted += move.rows_deleted - before.rows_deleted;
        if (move.phase === "done") figures.finished++;
        if (move.phase === "failed") figures.failed++;
        if (move.phase === "done" || move.phase === "failed") break;
      }
    } finally {
      await directory
        .prepare("UPDATE account_moves SET claimed_until = NULL WHERE account_id = ? AND claimed_until = ?")
        .bind(listed.account_id, claim)
        .run();
    }
  }
  return figures;
}

/** One step of a move: its row as the step left it, or the milliseconds to wait before the next. */
async function step(env: Env, m: MoveRow, now: number): Promise<MoveRow | number> {
  const directory = directoryOf(env);
  if (m.phase === "requested") {
    const account = await directory
      .prepare("SELECT shard FROM accounts WHERE id = ?")
      .bind(m.account_id)
      .first<{ shard: string | null }>();
    const source = account?.shard ?? DIRECTORY;
    const problem = !account
      ? "No such account."
      : !shardNames(env).includes(m.target)
        ? `${m.target} is not a shard this Worker has (SHARDS: ${shardNames(env).join(", ") || "none"}).`
        : source === m.target
          ? `The account already lives in ${m.target}.`
          : null;
    const afresh = {
      source,
      table_index: 0,
      cursor: null,
      rows_copied: 0,
      rows_deleted: 0,
      switched_at: null,
      finished_at: null,
    };
    if (problem)
      return save(env, m, {
        ...afresh,
        phase: "failed",
        detail: JSON.stringify({ error: problem }),
        finished_at: now,
      });
    await lease(env, m.account_id, [source], now);
    return save(env, m, { ...afresh, phase: "marked", marked_at: now });
  }
  const source = databaseNamed(env, m.source);
  const target = databaseNamed(env, m.target);
  // Up to the switch itself (which a run may reach a minute after the verification, in the next
  // cron run), the lease must have held throughout, or what was verified may be stale.
  const beforeSwitch = ["marked", "copying", "verifying", "switching"].includes(m.phase);
  if (beforeSwitch && !(await renew(env, m, now))) {
    const placed = await directory
      .prepare("SELECT shard FROM accounts WHERE id = ?")
      .bind(m.account_id)
      .first<string | null>("shard");
    // The lease lapsed: writes went on at the source meanwhile. Start over; unless the switch
    // was made and only its record is missing (a crash between the two): then the account is
    // whole at the target, and the move goes on from there.
    if (placed !== m.target) return save(env, m, { phase: "requested", cursor: null, table_index: 0 });
  }
  switch (m.phase) {
    case "marked": {
      const wait = (m.marked_at ?? now) + SETTLE_MS - now;
      if (wait > 0) return wait;
      await clearTarget(target, m.account_id);
      await copyGlobals(env, m.account_id, m.target, source);
      return save(env, m, { phase: "copying", table_index: 0, cursor: null, rows_copied: 0 });
    }
    case "copying": {
      const table = ACCOUNT_DATA_TABLES[m.table_index];
      if (!table) return save(env, m, { phase: "verifying", table_index: 0, cursor: null });
      const rows = await page(source, table, m.account_id, m.cursor, PAGE);
      await upsertRows(target, table.table, table.key, rows);
      const last = rows.at(-1);
      return save(env, m, {
        rows_copied: m.rows_copied + rows.length,
        ...(rows.length < PAGE
          ? { table_index: m.table_index + 1, cursor: null }
          : { cursor: JSON.stringify(table.key.map((k) => last?.[k])) }),
      });
    }
    case "verifying": {
      const table = ACCOUNT_DATA_TABLES[m.table_index];
      const detail = parseDetail(m);
      if (!table) return save(env, m, { phase: "switching" });
      const [from, to] = await Promise.all([
        digest(source, table, m.account_id),
        digest(target, table, m.account_id),
      ]);
      if (from.rows !== to.rows || from.sha256 !== to.sha256) {
        const restarts = (detail.restarts ?? 0) + 1;
        if (restarts > MAX_ATTEMPTS) throw new Error(`${table.table} differs after ${MAX_ATTEMPTS} copies`);
        // Something wrote to the source during the copy: copy again from a clean target.
        return save(env, m, {
          phase: "marked",
          marked_at: now - SETTLE_MS,
          detail: JSON.stringify({
            ...detail,
            restarts,
            error: `${table.table}: ${from.rows} rows at the source, ${to.rows} copied`,
          }),
        });
      }
      detail.tables = { ...detail.tables, [table.table]: from };
      return save(env, m, { table_index: m.table_index + 1, detail: JSON.stringify(detail) });
    }
    case "switching": {
      // The global rows once more (a token revoked or a member added during the copy), then the
      // one statement that moves the account: the directory's entry.
      await copyGlobals(env, m.account_id, m.target, source);
      await target.prepare("UPDATE accounts SET shard = ? WHERE id = ?").bind(m.target, m.account_id).run();
      await directory
        .prepare("UPDATE accounts SET shard = ? WHERE id = ?")
        .bind(m.target, m.account_id)
        .run();
      forgetPlacement(m.account_id);
      return save(env, m, { phase: "draining", switched_at: now });
    }
    case "draining": {
      await lease(env, m.account_id, [m.target], now);
      const wait = (m.switched_at ?? now) + DRAIN_MS - now;
      if (wait > 0) return wait;
      // Tokens revoked in the drain by an isolate that still placed the account at the source.
      await copyGlobals(env, m.account_id, m.target, source);
      return save(env, m, { phase: "deleting", table_index: ACCOUNT_DATA_TABLES.length - 1, cursor: null });
    }
    case "deleting": {
      await lease(env, m.account_id, [m.target], now);
      const table = ACCOUNT_DATA_TABLES[m.table_index];
      if (table) {
        const deleted = await deletePage(source, table, m.account_id);
        return save(env, m, {
          rows_deleted: m.rows_deleted + deleted,
          ...(deleted < DELETE_PAGE ? { table_index: m.table_index - 1 } : {}),
        });
      }
      if (m.source !== DIRECTORY) await dropGlobals(source, m.account_id, m.target);
      for (const db of new Set([directory, target]))
        await db.prepare("UPDATE accounts SET moving_until = NULL WHERE id = ?").bind(m.account_id).run();
      return save(env, m, { phase: "done", finished_at: now });
    }
    default:
      throw new Error(`a move in phase ${m.phase} has nothing to do`);
  }
}

/** A failed step: tried again next run; before the switch, given up after MAX_ATTEMPTS. */
async function stepFailed(env: Env, m: MoveRow, err: unknown, now: number): Promise<MoveRow> {
  console.error(
    JSON.stringify({
      level: "error",
      type: "account_move",
      account: m.account_id,
      phase: m.phase,
      error: String(err),
    }),
  );
  const detail = { ...parseDetail(m), error: `${m.phase}: ${String(err)}` };
  const attempts = m.attempts + 1;
  const beforeSwitch = ["requested", "marked", "copying", "verifying"].includes(m.phase);
  if (!beforeSwitch || attempts < MAX_ATTEMPTS)
    return save(env, m, { attempts, detail: JSON.stringify(detail) });
  // Given up: whole at the source, as before (the target's partial copy removed, writes open).
  if (m.source) {
    await clearTarget(databaseNamed(env, m.target), m.account_id);
    await dropGlobals(databaseNamed(env, m.target), m.account_id, m.source);
    for (const db of new Set([directoryOf(env), databaseNamed(env, m.source)]))
      await db.prepare("UPDATE accounts SET moving_until = NULL WHERE id = ?").bind(m.account_id).run();
  }
  return save(env, m, { phase: "failed", attempts, detail: JSON.stringify(detail), finished_at: now });
}

const parseDetail = (m: MoveRow): Detail => (m.detail ? (JSON.parse(m.detail) as Detail) : {});

/** The move's row changed under this run (it should not, as runs hold their moves): it stops. */
class Superseded extends Error {}

/**
 * The step's outcome written to the move's row, if the row is still as this run read it
 * (`updated_at` as a version: two overlapping cron runs never both advance a move).
 */
async function save(env: Env, m: MoveRow, change: Partial<MoveRow>): Promise<MoveRow> {
  const next = { ...m, ...change, updated_at: Math.max(m.updated_at + 1, Date.now()) };
  const columns = Object.keys(change) as (keyof MoveRow)[];
  const r = await directoryOf(env)
    .prepare(
      `UPDATE account_moves SET ${[...columns, "updated_at"].map((c) => `${c} = ?`).join(", ")}
  WHERE account_id = ? AND updated_at = ?`,
    )
    .bind(...columns.map((c) => next[c]), next.updated_at, m.account_id, m.updated_at)
    .run();
  if (r.meta.changes !== 1) throw new Superseded();
  return next;
}

/** Sets the write lease on the account's rows in the directory and in `names`' databases. */
async function lease(env: Env, accountId: string, names: string[], now: number) {
  const dbs = new Set([directoryOf(env), ...names.map((n) => databaseNamed(env, n))]);
  for (const db of dbs)
    await db
      .prepare("UPDATE accounts SET moving_until = ? WHERE id = ?")
      .bind(now + LEASE_MS, accountId)
      .run();
}

/** Renews the lease where requests read it (the source) if it still holds; false when it lapsed. */
async function renew(env: Env, m: MoveRow, now: number): Promise<boolean> {
  const held = await databaseNamed(env, m.source)
    .prepare("UPDATE accounts SET moving_until = ? WHERE id = ? AND moving_until >= ?")
    .bind(now + LEASE_MS, m.account_id, now)
    .run();
  if (held.meta.changes !== 1) return false;
  await lease(env, m.account_id, [m.source ?? DIRECTORY], now);
  return true;
}

/** A page of the account's rows of `table` after `cursor` (the last key of the page before), in key order. */
async function page(
  db: D1Database,
  t: AccountDataTable,
  accountId: string,
  cursor: string | null,
  size: number,
): Promise<Record<string, unknown>[]> {
  const key = t.key.join(", ");
  const after = cursor ? `AND (${key}) > (${t.key.map(() => "?").join(", ")})` : "";
  const { results } = await db
    .prepare(`SELECT * FROM ${t.table} WHERE ${t.where} ${after} ORDER BY ${key} LIMIT ${size}`)
    // A key of bytes (db/uuid-bytes.ts) came back from D1 as an array of numbers.
    .bind(
      accountId,
      ...(cursor ? (JSON.parse(cursor) as unknown[]) : []).map((v) =>
        Array.isArray(v) ? new Uint8Array(v as number[]) : v,
      ),
    )
    .all<Record<string, unknown>>();
  return results;
}

/**
 * The account's rows of `table` in one database: how many, and a SHA-256 over them (each page's
 * rows as JSON, column names sorted, BLOBs as hex; chained page by page), so the two sides of a
 * copy compare by reading, not by trusting the writes.
 */
export async function digest(db: D1Database, t: AccountDataTable, accountId: string) {
  let rows = 0;
  let sha256 = "";
  let cursor: string | null = null;
  for (;;) {
    const got = await page(db, t, accountId, cursor, 500);
    if (got.length === 0) break;
    rows += got.length;
    const text = JSON.stringify(
      got.map((r) =>
        Object.keys(r)
          .sort()
          .map((c) => {
            const v = r[c];
            return Array.isArray(v)
              ? `x'${v.map((b: number) => b.toString(16).padStart(2, "0")).join("")}'`
              : v;
          }),
      ),
    );
    sha256 = await sha256Hex(sha256 + text);
    const last = got.at(-1)!;
    cursor = JSON.stringify(t.key.map((k) => last[k]));
    if (got.length < 500) break;
  }
  return { rows, sha256 };
}

/** Deletes up to DELETE_PAGE of the account's rows of `table`; how many went. */
async function deletePage(db: D1Database, t: AccountDataTable, accountId: string): Promise<number> {
  const key = t.key.join(", ");
  const r = await db
    .prepare(
      `DELETE FROM ${t.table} WHERE (${key}) IN (SELECT ${key} FROM ${t.table} WHERE ${t.where} LIMIT ${DELETE_PAGE})`,
    )
    .bind(accountId)
    .run();
  return r.meta.changes;
}

/** The account's data removed from `db`, children first (what an earlier attempt left there). */
async function clearTarget(db: D1Database, accountId: string) {
  for (const t of [...ACCOUNT_DATA_TABLES].reverse())
    while ((await deletePage(db, t, accountId)) === DELETE_PAGE);
}

/**
 * The global rows the account's requests join, copied from the directory to the target: the
 * account (with its write lease), stubs of its members' other accounts (their foreign keys),
 * the members, their roles in this account, and their tokens. Idempotent: an upsert each.
 */
async function copyGlobals(env: Env, accountId: string, targetName: string, source: D1Database) {
  const directory = directoryOf(env);
  const target = databaseNamed(env, targetName);
  await copyRows(directory, target, "accounts", "id = ?", [accountId]);
  // The live flag (services/live: writes poke the stream object while it is in the future) is
  // written on the account's own database, not the directory's row copied above: carried over,
  // so the streams opened before the move go on receiving the writes made after it.
  const live = await source
    .prepare("SELECT live_until FROM accounts WHERE id = ?")
    .bind(accountId)
    .first<{ live_until: number | null }>();
  if (live?.live_until)
    await target
      .prepare("UPDATE accounts SET live_until = MAX(COALESCE(live_until, 0), ?) WHERE id = ?")
      .bind(live.live_until, accountId)
      .run();
  const { results: members } = await directory
    .prepare("SELECT DISTINCT user_id AS id FROM account_roles WHERE account_id = ?")
    .bind(accountId)
    .all<{ id: string }>();
  await copyUsers(
    directory,
    target,
    members.map((r) => r.id),
  );
  await copyRows(directory, target, "account_roles", "account_id = ?", [accountId]);
}

/**
 * At a shard the account left (or, after a move given up, the target it never reached): its roles go; its own row stays, a stub that says where the
 * account went, since members' copies there (kept for their other accounts) may name it. Those
 * copies stay: a request for this account no longer reads them.
 */
async function dropGlobals(db: D1Database, accountId: string, livesIn: string) {
  await db.prepare("DELETE FROM account_roles WHERE account_id = ?").bind(accountId).run();
  await db
    .prepare("UPDATE accounts SET shard = ?, moving_until = NULL WHERE id = ?")
    .bind(livesIn, accountId)
    .run();
}
