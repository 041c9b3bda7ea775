import { ApiError } from "../../http/errors";

/**
 * Sign-in failure limits (contract §2): failures are counted per username and per client
 * address, whatever token the request carries, so neither many tokens nor many addresses
 * multiply an attacker's guesses. Past `SIGN_IN_MAX_FAILURES` failures within
 * `SIGN_IN_WINDOW_SECONDS`, the key is blocked for `SIGN_IN_BACKOFF_SECONDS`, doubling with
 * each block in a row (capped at a day); a blocked key gets 429 with Retry-After (RFC 9110
 * §10.2.3) even for the right password, or the guessing would go on. Counts live in D1 and
 * change in one UPSERT per key, so concurrent failures never read the same count.
 */
export type SignInLimitEnv = {
  DB: D1Database;
  SIGN_IN_MAX_FAILURES?: string;
  SIGN_IN_WINDOW_SECONDS?: string;
  SIGN_IN_BACKOFF_SECONDS?: string;
};

const MAX_BACKOFF_MS = 24 * 3600 * 1000;

function setting(v: string | undefined, fallback: number): number {
  const n = Number(v);
  return v !== undefined && v !== "" && Number.isFinite(n) && n >= 0 ? n : fallback;
}

export function signInSettings(env: SignInLimitEnv) {
  return {
    maxFailures: setting(env.SIGN_IN_MAX_FAILURES, 10),
    windowMs: setting(env.SIGN_IN_WINDOW_SECONDS, 900) * 1000,
    backoffMs: setting(env.SIGN_IN_BACKOFF_SECONDS, 60) * 1000,
  };
}

export function signInKeys(username: string, clientIp: string | undefined): string[] {
  return [`user:${username.trim().toLowerCase()}`, `ip:${clientIp?.trim() || "unknown"}`];
}

const throttled = (retryMs: number) => {
  const s = Math.max(1, Math.ceil(retryMs / 1000));
  return new ApiError(429, "throttled", `Too many failed sign-ins. Expected available in ${s} second(s).`, {
    "Retry-After": String(s),
  });
};

/** 429 when any of the keys is blocked now. */
export async function assertSignInAllowed(env: SignInLimitEnv, keys: string[]): Promise<void> {
  if (signInSettings(env).maxFailures === 0) return;
  const now = Date.now();
  const { results } = await env.DB.prepare(
    "SELECT MAX(blocked_until) AS until FROM sign_in_failures WHERE key IN (?, ?) AND blocked_until > ?",
  )
    .bind(keys[0], keys[1], now)
    .all<{ until: number | null }>();
  const until = results[0]?.until;
  if (until) throw throttled(until - now);
}

/** Counts one failure for each key; throws 429 when this failure reached the limit. */
export async function recordSignInFailure(env: SignInLimitEnv, keys: string[]): Promise<void> {
  const { maxFailures, windowMs, backoffMs } = signInSettings(env);
  if (maxFailures === 0) return;
  const now = Date.now();
  const windowFloor = now - windowMs;
  // One statement per key: a window older than SIGN_IN_WINDOW_SECONDS starts over (and a block
  // that ended a full window ago forgets its strikes); reaching the limit sets the block, with
  // the back-off doubled per strike, and starts a new count.
  const stmts = keys.map((key) =>
    env.DB.prepare(
      `INSERT INTO sign_in_failures (key, window_start, failures, strikes, blocked_until)
       VALUES (?1, ?2, 1, CASE WHEN ?4 <= 1 THEN 1 ELSE 0 END, CASE WHEN ?4 <= 1 THEN ?2 + ?5 END)
       ON CONFLICT (key) DO UPDATE SET
         strikes = CASE
           WHEN (CASE WHEN window_start <= ?3 THEN 1 ELSE failures + 1 END) >= ?4
             THEN (CASE WHEN COALESCE(blocked_until, 0) <= ?3 THEN 0 ELSE strikes END) + 1
           WHEN COALESCE(blocked_until, 0) <= ?3 THEN 0
           ELSE strikes END,
         blocked_until = CASE
           WHEN (CASE WHEN window_start <= ?3 THEN 1 ELSE failures + 1 END) >= ?4
             THEN ?2 + MIN(?6, ?5 * (1 << MIN(CASE WHEN COALESCE(blocked_until, 0) <= ?3 THEN 0 ELSE strikes END, 20)))
           ELSE blocked_until END,
         failures = CASE
           WHEN (CASE WHEN window_start <= ?3 THEN 1 ELSE failures + 1 END) >= ?4 THEN 0
           WHEN window_start <= ?3 THEN 1
           ELSE failures + 1 END,
         window_start = CASE
           WHEN window_start <= ?3 OR (CASE WHEN window_start <= ?3 THEN 1 ELSE failures + 1 END) >= ?4 THEN ?2
           ELSE window_start END
       RETURNING blocked_until`,
    ).bind(key, now, windowFloor, maxFailures, backoffMs, MAX_BACKOFF_MS),
  );
  const rows = await env.DB.batch<{ blocked_until: number | null }>(stmts);
  const until = Math.max(0, ...rows.map((r) => r.results[0]?.blocked_until ?? 0));
  if (until > now) throw throttled(until - now);
}

/** A successful sign-in clears the username's count (never the address's: one valid account must not reset it). */
export async function clearSignInFailures(env: SignInLimitEnv, keys: string[]): Promise<void> {
  await env.DB.prepare("DELETE FROM sign_in_failures WHERE key = ?").bind(keys[0]).run();
}
