/**
 * Leases of the queued jobs (exports, imports, route optimizations). A job's row is written
 * before its queue message is sent, so a send that fails after the row is saved, a message lost
 * with a dev server, or a consumer that dies mid-step would leave the job `running` for ever.
 * Each row therefore carries a lease: set when the job is queued, renewed by every step that
 * makes progress. The cron (./sweep.ts) re-queues a job whose lease lapsed, at most
 * `JOB_MAX_REQUEUES` times in a row without progress, then fails it with a reason. Steps are
 * idempotent (each kind commits its progress by compare-and-set), so a re-queued message that
 * meets a slow original applies nothing twice.
 */

export const DEFAULT_JOB_LEASE_SECONDS = 600;
export const DEFAULT_JOB_MAX_REQUEUES = 3;

const setting = (value: string | undefined, fallback: number) => {
  const n = Number(value);
  return value !== undefined && Number.isInteger(n) && n > 0 ? n : fallback;
};

/**
 * `JOB_LEASE_SECONDS` (600): longer than one step may take (a route optimization's solve, a
 * step of an export), including the queue's own retries with back-off.
 */
export function jobSettings(env: Env) {
  const vars = env as unknown as Record<string, string | undefined>;
  return {
    leaseMs: setting(vars.JOB_LEASE_SECONDS, DEFAULT_JOB_LEASE_SECONDS) * 1000,
    maxRequeues: setting(vars.JOB_MAX_REQUEUES, DEFAULT_JOB_MAX_REQUEUES),
  };
}

/** The lease a job gets when queued or when a step commits progress. */
export const leaseUntil = (env: Env, now = Date.now()) => now + jobSettings(env).leaseMs;

/** The reason a cancelled job shows in `error_message` (its state is `failed`). */
export const CANCELLED = "Cancelled.";
