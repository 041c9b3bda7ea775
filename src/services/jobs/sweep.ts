import { perDatabase } from "../../db/shards";
/**
 * The cron's sweep of job leases (./lease.ts): a queued or running export, import or route
 * optimization whose lease lapsed gets its queue message again (the step it was at), at most
 * `JOB_MAX_REQUEUES` times in a row without progress; then it fails with a reason in words.
 * A re-queue claims the job by compare-and-set on the old lease, so two cron runs never send
 * two messages for one lapse.
 */
import type { ExportMessage } from "../../queues/exports/message";
import type { ImportMessage } from "../../queues/imports/message";
import type { OptimizationMessage } from "../../queues/route-optimizations/message";
import { failExport } from "../exports/run";
import { failImport } from "../imports/apply";
import { failOptimization } from "../route-optimizations/run";
import { jobSettings } from "./lease";

type LapsedRow = {
  id: string;
  account_id: string;
  base_url: string | null;
  lease_expires_at: number;
  lease_attempts: number;
  step: number;
};

type JobKind = {
  table: "data_exports" | "data_imports" | "route_optimizations";
  noun: string;
  send(env: Env, row: LapsedRow, baseUrl: string): Promise<unknown>;
  fail(env: Env, row: LapsedRow, reason: string): Promise<void>;
};

const exportMessage = (row: LapsedRow, baseUrl: string): ExportMessage => ({
  exportId: row.id,
  accountId: row.account_id,
  baseUrl,
  step: row.step,
});
const importMessage = (row: LapsedRow, baseUrl: string): ImportMessage => ({ importId: row.id, baseUrl });
const optimizationMessage = (row: LapsedRow, baseUrl: string): OptimizationMessage => ({
  accountId: row.account_id,
  optimizationId: row.id,
  baseUrl,
});

const KINDS: JobKind[] = [
  {
    table: "data_exports",
    noun: "export",
    send: (env, row, baseUrl) => env.EXPORTS_QUEUE.send(exportMessage(row, baseUrl)),
    fail: (env, row, reason) => failExport(env, exportMessage(row, ""), reason),
  },
  {
    table: "data_imports",
    noun: "import",
    send: (env, row, baseUrl) => env.IMPORTS_QUEUE.send(importMessage(row, baseUrl)),
    fail: (env, row, reason) => failImport(env, importMessage(row, ""), reason),
  },
  {
    table: "route_optimizations",
    noun: "route optimization",
    send: (env, row, baseUrl) => env.OPTIMIZATIONS_QUEUE.send(optimizationMessage(row, baseUrl)),
    fail: (env, row, reason) => failOptimization(env, optimizationMessage(row, ""), reason),
  },
];

export type JobSweep = { requeued: number; failed: number };

/** One cron pass: at most `limit` lapsed jobs of each kind. */
export const sweepJobLeases = perDatabase(async function sweepJobLeases(
  env: Env,
  now = Date.now(),
  limit = 50,
): Promise<JobSweep> {
  const { leaseMs, maxRequeues } = jobSettings(env);
  const out: JobSweep = { requeued: 0, failed: 0 };
  for (const kind of KINDS) {
    const step = kind.table === "data_exports" ? "step" : "0 AS step";
    const { results } = await env.DB.prepare(
      `SELECT id, account_id, base_url, lease_expires_at, lease_attempts, ${step} FROM ${kind.table}
       WHERE state IN ('queued', 'running') AND lease_expires_at <= ? ORDER BY lease_expires_at LIMIT ?`,
    )
      .bind(now, limit)
      .all<LapsedRow>();
    for (const row of results) {
      if (row.lease_attempts >= maxRequeues) {
        await kind.fail(
          env,
          row,
          `The ${kind.noun} stopped making progress: it was queued again ${row.lease_attempts} times without finishing a step.`,
        );
        out.failed++;
        continue;
      }
      const claimed = await env.DB.prepare(
        `UPDATE ${kind.table} SET lease_attempts = lease_attempts + 1, lease_expires_at = ?
         WHERE id = ? AND lease_expires_at = ? AND state IN ('queued', 'running')`,
      )
        .bind(now + leaseMs, row.id, row.lease_expires_at)
        .run();
      if (!claimed.meta.changes) continue;
      const vars = env as unknown as Record<string, string | undefined>;
      await kind.send(env, row, row.base_url ?? vars.PUBLIC_BASE_URL ?? "");
      out.requeued++;
    }
  }
  return out;
});
