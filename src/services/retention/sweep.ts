import { perDatabase } from "../../db/shards";
/**
 * The cron's retention pass (contract §23): rows past their window go to the archive, bounded
 * per run (`ARCHIVE_ROWS_PER_RUN` rows, and a time budget), oldest first, resumable: parts a
 * run left unfinished are finished first by the next. Records nobody needs archived (sign-in
 * limits, spent and expired tokens) are deleted past their own windows. `now` is the cron's
 * scheduled time, so a test or the bench can move the clock.
 */
import { type ArchiveSource, archivePart, unfinishedParts } from "./archive";
import { oldestPastWindow, tableSource } from "./sources";
import { oldestFinishedTask, retainingAccounts, taskSource } from "./tasks";
import { dayOf, idTime, RETAINED, windowDays } from "./windows";

export type RetentionRun = { archived: number; objects: number; deleted: number; failed: number; ms: number };

const DAY_MS = 86_400_000;

/**
 * Records kept for no one, deleted past their windows (`?1` the cutoff). Each reads only the
 * rows it deletes, through an index (migration 0030): the cron runs every minute.
 */
export const SPENT_RECORDS = {
  authTokens:
    "DELETE FROM auth_tokens WHERE (revoked_at IS NOT NULL AND revoked_at < ?1) OR (expires_at IS NOT NULL AND expires_at < ?1)",
  userTokens: "DELETE FROM user_tokens WHERE (used_at IS NOT NULL AND used_at < ?1) OR (expires_at < ?1)",
  signInFailures:
    "DELETE FROM sign_in_failures WHERE window_start < ?1 AND (blocked_until IS NULL OR blocked_until < ?1)",
  streamTickets: "DELETE FROM stream_tickets WHERE expires_at < ?1",
};

function setting(env: Env, name: string, fallback: number) {
  const n = Number((env as unknown as Record<string, string | undefined>)[name]);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

export const sweepRetention = perDatabase(async function sweepRetention(
  env: Env,
  now = Date.now(),
): Promise<RetentionRun> {
  const started = Date.now();
  const budget = setting(env, "ARCHIVE_ROWS_PER_RUN", 20_000);
  const deadline = started + setting(env, "ARCHIVE_SECONDS_PER_RUN", 20) * 1000;
  const out: RetentionRun = { archived: 0, objects: 0, deleted: 0, failed: 0, ms: 0 };
  const more = () => out.archived < budget && Date.now() < deadline;
  // One part's failure (R2 or D1 down a moment, a verification that failed) is logged and left
  // for the next run, which resumes it; the other parts of this run go on.
  const run = async (source: ArchiveSource, accountId: string, dayStart: number) => {
    try {
      const done = await archivePart(env, source, accountId, dayStart, now);
      if (done) {
        out.archived += done.rows;
        out.objects++;
      }
      return done;
    } catch (err) {
      out.failed++;
      console.error(
        JSON.stringify({
          level: "error",
          type: "retention",
          kind: source.kind,
          account: accountId,
          error: String(err),
        }),
      );
      return null;
    }
  };

  const sources = new Map<string, ArchiveSource>(RETAINED.map((k) => [k.kind, tableSource(k, now)]));
  const accounts = await retainingAccounts(env.DB);
  const daysOf = new Map(accounts.map((a) => [a.id, a.data_retention_days]));
  // 1. What a stopped run left half done.
  for (const p of await unfinishedParts(env.DB)) {
    if (!more()) break;
    const source =
      p.kind === "tasks"
        ? taskSource(daysOf.get(p.account_id) ?? Number.MAX_SAFE_INTEGER / DAY_MS, now)
        : sources.get(p.kind);
    if (source) await run(source, p.account_id, p.start);
  }
  // 2. Each kind, oldest day first.
  for (const k of RETAINED) {
    const source = sources.get(k.kind)!;
    while (more()) {
      const oldest = await oldestPastWindow(env, k, now);
      if (!oldest) break;
      if (!(await run(source, oldest.account_id, dayOf(idTime(oldest.id)).start))) break;
    }
  }
  // 3. Finished tasks of the accounts that keep them a bounded time.
  for (const a of accounts) {
    const source = taskSource(a.data_retention_days, now);
    while (more()) {
      const oldest = await oldestFinishedTask(env.DB, a.id, a.data_retention_days, now);
      if (!oldest) break;
      if (!(await run(source, a.id, dayOf(oldest.updated_at).start))) break;
    }
  }
  // 4. Records kept for no one: deleted past their windows, not archived.
  const tokens = now - windowDays(env, "TOKENS_RETENTION_DAYS", 30) * DAY_MS;
  const signIns = now - windowDays(env, "SIGN_IN_RECORDS_RETENTION_DAYS", 1) * DAY_MS;
  const results = await env.DB.batch([
    env.DB.prepare(SPENT_RECORDS.authTokens).bind(tokens),
    env.DB.prepare(SPENT_RECORDS.userTokens).bind(tokens),
    env.DB.prepare(SPENT_RECORDS.signInFailures).bind(signIns),
    // Live stream tickets live 60 seconds; a spent or lapsed one is kept a day for the logs.
    env.DB.prepare(SPENT_RECORDS.streamTickets).bind(now - DAY_MS),
  ]);
  out.deleted = results.reduce((n, r) => n + (r.meta.changes ?? 0), 0);
  out.ms = Date.now() - started;
  return out;
});
