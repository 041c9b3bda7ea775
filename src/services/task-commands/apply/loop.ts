/**
 * Applies commands to ONE task, in order. Runs inside that task's Durable Object (the single
 * writer of the task's commands).
 *
 * Each command is one D1 batch (one transaction):
 *   1. the task UPDATE, guarded by the task's state (its `version` and `last_command_id`:
 *      atState in statements.ts) and, for transit/active, by the worker's transit/active count
 *      (contract §5: check and write in one atomic step); it stamps `last_command_id` with
 *      this command;
 *   2. the command row (and its events) as `accepted` where the task names this command;
 *   3. the command row (and its event) as `rejected` where it does not and the version is
 *      unchanged (so only the limit can have failed).
 * If another writer (an order upsert, a geocoding result) moved the version meanwhile, neither
 * 2 nor 3 writes anything and the command is decided again on the fresh task.
 */

import { accountEnv } from "../../../db/shards";
import { userIdOf } from "../../../domain/metafields";
import { decide } from "../../../domain/task-state-machine";
import { enqueueGeocodeRetries } from "../../../queues/geocode/message";
import { proofGuard, proofHolds, proofStatement, type TokenRow, type WriteProof } from "../../auth/tokens";
import type { SharedBase } from "../../events/outbox";
import { definitionOf, type MetafieldRow } from "../../metafields";
import type { TaskRow } from "../../tasks/types";
import { storedCommands } from "../store";
import type { Actor, CommandInput, CommandOutcome, CommandRow } from "../types";
import {
  carriesTaskData,
  decisionInput,
  type MetafieldContext,
  NO_METAFIELDS,
  planRun,
  project,
} from "./plan";
import {
  appliedGuard,
  atState,
  contactAddressUpdate,
  type Guard,
  LIMIT_MESSAGE,
  limitGuard,
  loadCommand,
  loadTask,
  outcomeEvents,
  outcomeStatement,
  rowOf,
  whereAtState,
  writeRun,
} from "./statements";

export type ApplyOptions = {
  /** Rows exist as `pending` (asynchronous mode) and move to their outcome. */
  pending?: boolean;
  /** Origin for the absolute URLs in event payloads. */
  baseUrl: string;
  /** The task as the caller last saw it (the TaskDO's memory); read from D1 when absent. */
  task?: TaskRow | null;
  /**
   * The caller's token check, carried by this write (http/first-batch.ts): every write of the
   * first batch is guarded by the token's row being the proven one, so nothing is written for a
   * token that no longer holds; the row is read only when that batch wrote nothing.
   */
  proof?: WriteProof;
};

/** The token's row as the batch that carried a WriteProof read it, and that batch's clock. */
export type ProvenToken = { row: TokenRow | null; now: number };

export type AppliedTask = {
  outcomes: CommandOutcome[];
  /** The task after the commands, as stored (null: it does not exist). */
  task: TaskRow | null;
  geocode: boolean;
  rescheduled: boolean;
  /** With a proof: the token's row as the first batch read it (absent if no batch ran whole). */
  token?: ProvenToken;
  /** With a proof: the row was not the proven one, so nothing was written. */
  tokenMismatch?: boolean;
};

/** Commands per D1 batch: bounds one transaction (a few statements per command). */
export const COMMANDS_PER_BATCH = 50;

type Planned = {
  cmd: CommandInput;
  createdAt: number;
  now: number;
  /** Index of the statement whose `changes` tells the outcome, per kind. */
  kind: "rejected" | "guarded";
  rejectedAt?: number;
  updateAt?: number;
  limitAt?: number;
  error?: string;
  before?: TaskRow;
  after?: TaskRow;
  geocode?: boolean;
  rescheduled?: boolean;
  /** The contact address this command re-addressed (geocoded once the command applied). */
  contactAddressId?: string;
};

/**
 * Applies `commands` (all for `taskId`) in order, in as few D1 round trips as it can.
 *
 * The commands are planned against the task as it would be after each previous one (each
 * assumed to succeed), and a chunk of them is sent as ONE batch: every statement of a command
 * is guarded by the version the plan expects, so if one command does not go as planned (the
 * transit/active limit refused it, or another writer moved the task), every later command of
 * the chunk finds its guard false and writes nothing. The results say where the plan broke;
 * the rest is planned again on the task as stored. One round trip per chunk in the common
 * case, and never a command applied on a state it was not decided on.
 *
 * In asynchronous mode the pending rows are read first; a row no longer pending was applied by
 * an earlier delivery and is returned as is. In sync mode a replayed `external_id` never gets
 * here (the service answers it), and a concurrent duplicate is refused by the unique index.
 */
export async function applyToTask(
  env: Env,
  actor: Actor,
  taskId: string,
  commands: CommandInput[],
  opts: ApplyOptions,
): Promise<AppliedTask> {
  env = await accountEnv(env, actor.accountId);
  const db = env.DB;
  const pending = !!opts.pending;
  const [firstRead, storedRows, mf] = await Promise.all([
    opts.task !== undefined ? opts.task : loadTask(db, actor.accountId, taskId),
    pending
      ? storedCommands(
          env,
          actor.accountId,
          commands.map((c) => c.externalId),
        )
      : [],
    loadMetafieldContext(db, actor.accountId, commands),
  ]);
  let task: TaskRow | null = firstRead;
  const stored = new Map(storedRows.map((r) => [r.external_id, r]));
  const outcomes: CommandOutcome[] = [];
  let geocode = false;
  let rescheduled = false;
  const contactAddresses: string[] = [];
  let next = 0;
  let stale = 0;
  let chunkSize = COMMANDS_PER_BATCH;

  // The token's check rides on the first batch only: once it held, later batches of this call
  // need it no more than they would after a check made before the call.
  let proof = opts.proof ? { ...opts.proof, now: Date.now() } : null;
  let token: ProvenToken | undefined;
  const guarded = (g: Guard): Guard => {
    if (!proof) return g;
    const t = proofGuard(proof, proof.now);
    return { sql: `(${g.sql}) AND ${t.sql}`, params: [...g.params, ...t.params] };
  };
  let forceSlow = false;
  while (next < commands.length) {
    // A run of commands that cannot meet the transit/active limit goes as one coalesced write.
    if (!pending && task && !forceSlow && chunkSize > 1 && !proof) {
      const run = planRun(actor, task, commands, next, chunkSize, Date.now, mf);
      if (run.length >= 2) {
        const r = await writeRun(db, actor, task, run, opts.baseUrl);
        if (r === "applied") {
          for (const e of run) {
            outcomes.push({
              row: rowOf(actor, e.cmd, e.error ? "rejected" : "accepted", e.error ?? "", e.now, e.now),
              replay: false,
            });
            geocode ||= e.geocode;
            rescheduled ||= e.rescheduled;
          }
          task = run[run.length - 1].after;
          next += run.length;
          stale = 0;
          continue;
        }
        // Not as planned (another writer moved the task, or a duplicate external_id): the
        // command-by-command path below finds out which, on the task as stored.
        forceSlow = true;
        if (r === "stale") task = await loadTask(db, actor.accountId, taskId);
        continue;
      }
    }
    forceSlow = false;
    // Plan a chunk on the predicted task.
    const plan: Planned[] = [];
    const statements: D1PreparedStatement[] = [];
    // The chunk's events share one stored task: each command below is guarded by the version
    // the ones before it leave, so its events exist only when theirs do (events/outbox.ts).
    const shared: SharedBase = { base: null };
    let predicted = task;
    let k = next;
    for (; k < commands.length && plan.length < chunkSize; k++) {
      const cmd = commands[k];
      const existing = stored.get(cmd.externalId);
      if (existing && existing.state !== "pending") {
        if (plan.length) break; // resolve the planned ones first, in order
        outcomes.push({ row: existing, replay: true });
        next = k + 1;
        continue;
      }
      if (existing) cmd.id = existing.id;
      const now = Date.now();
      const createdAt = existing?.created_at ?? now;
      if (!predicted) {
        const error = "The task does not exist.";
        const guard = guarded({ sql: "NOT EXISTS (SELECT 1 FROM tasks WHERE id = ?)", params: [taskId] });
        plan.push({ cmd, createdAt, now, kind: "rejected", rejectedAt: statements.length, error });
        statements.push(outcomeStatement(db, actor, cmd, pending, "rejected", now, error, guard));
        continue;
      }
      const at = guarded(atState(predicted));
      const decision = decide(decisionInput(actor, predicted, cmd, mf));
      if (!decision.ok) {
        const row = rowOf(actor, cmd, "rejected", decision.error, now, createdAt);
        plan.push({
          cmd,
          createdAt,
          now,
          kind: "rejected",
          rejectedAt: statements.length,
          error: decision.error,
        });
        statements.push(outcomeStatement(db, actor, cmd, pending, "rejected", now, decision.error, at));
        statements.push(...outcomeEvents(db, opts.baseUrl, row, predicted, false, now, at, shared));
        continue;
      }
      const {
        after,
        changes,
        geocode: newAddress,
      } = project(predicted, cmd, decision.state, decision.assigneeId, now);
      const columns = Object.keys(changes);
      let limitSql = "";
      const limitParams: unknown[] = [];
      if (decision.usesTransitSlot && decision.assigneeId) {
        // NULL limit → the comparison is NULL → COALESCE lets it pass (no limit).
        limitSql = ` AND COALESCE((SELECT (SELECT COUNT(*) FROM tasks t2 WHERE t2.account_id = a.id AND t2.assignee_id = ?
            AND t2.state IN ('transit', 'active') AND t2.id <> ?) < a.transit_active_limit FROM accounts a WHERE a.id = ?), 1)`;
        limitParams.push(decision.assigneeId, taskId, actor.accountId);
      }
      if (proof) {
        const t = proofGuard(proof, proof.now);
        limitSql += ` AND ${t.sql}`;
        limitParams.push(...t.params);
      }
      const entry: Planned = {
        cmd,
        createdAt,
        now,
        kind: "guarded",
        updateAt: statements.length,
        before: predicted,
        after,
        geocode: newAddress,
        rescheduled: "scheduled_time" in changes,
      };
      const where = whereAtState(predicted);
      statements.push(
        db
          .prepare(
            `UPDATE tasks SET ${columns.map((c) => `${c} = ?`).join(", ")}, version = version + 1, last_command_id = ?
             WHERE ${where.sql}${limitSql}`,
          )
          .bind(
            ...columns.map((c) => (changes as Record<string, unknown>)[c]),
            cmd.id,
            ...where.params,
            ...limitParams,
          ),
      );
      const applied = appliedGuard(taskId, cmd.id);
      // When the limit refuses this command, only the base stored before it exists.
      const sharedBefore: SharedBase = { base: shared.base };
      statements.push(outcomeStatement(db, actor, cmd, pending, "accepted", now, "", applied));
      const contactUpdate = contactAddressUpdate(db, actor, predicted, cmd, now, applied);
      if (contactUpdate) {
        statements.push(contactUpdate);
        entry.contactAddressId = predicted.contact_address_id!;
      }
      statements.push(
        ...outcomeEvents(
          db,
          opts.baseUrl,
          rowOf(actor, cmd, "accepted", "", now, createdAt),
          after,
          after.state !== predicted.state,
          now,
          applied,
          shared,
        ),
      );
      if (decision.usesTransitSlot && decision.assigneeId) {
        // Only the limit can refuse this update while the version is as planned.
        const limited = guarded(limitGuard(cmd.id, predicted));
        entry.limitAt = statements.length;
        statements.push(outcomeStatement(db, actor, cmd, pending, "rejected", now, LIMIT_MESSAGE, limited));
        statements.push(
          ...outcomeEvents(
            db,
            opts.baseUrl,
            rowOf(actor, cmd, "rejected", LIMIT_MESSAGE, now, createdAt),
            predicted,
            false,
            now,
            limited,
            sharedBefore,
          ),
        );
      }
      plan.push(entry);
      predicted = after;
    }
    if (!plan.length) continue;

    let results: D1Result[];
    try {
      if (proof) {
        const rest = await db.batch(statements);
        // Every write of the batch is guarded by the proof, directly or through the task's
        // guarded update, so one row written shows that it held: the token's row was the proven
        // one (same fingerprint, unexpired at proof.now). Only a batch that wrote nothing (the
        // proof failed, or the plan did: another writer moved the task) reads the row to tell.
        const wrote = rest.some((r) => (r.meta.changes ?? 0) > 0);
        const row = wrote
          ? { fingerprint: proof.fingerprint }
          : await proofStatement(db, proof).first<TokenRow>();
        token = { row, now: proof.now };
        // Not the proven row, or expired since: every write of the batch found its guard false.
        if (!proofHolds(row, proof, proof.now)) {
          return { outcomes: [], task, geocode: false, rescheduled: false, token, tokenMismatch: true };
        }
        proof = null;
        results = rest;
      } else results = await db.batch(statements);
    } catch (err) {
      // The batch rolled back whole (a proof it carried is carried again by the next one).
      // A new external_id was stored meanwhile by another task's object (the unique index
      // rolled the batch back whole): redo this stretch one command at a time to find it.
      if (!/UNIQUE constraint failed/i.test(String(err))) throw err;
      if (plan.length > 1) {
        chunkSize = 1;
        continue;
      }
      outcomes.push({ row: await replayOnConflict(db, actor, plan[0].cmd, err), replay: true });
      next += 1;
      chunkSize = COMMANDS_PER_BATCH;
      continue;
    }

    // Walk the plan until it breaks.
    let broke = false;
    for (const p of plan) {
      if (p.kind === "rejected") {
        if (results[p.rejectedAt!].meta.changes !== 1) {
          broke = true;
          break;
        }
        outcomes.push({ row: rowOf(actor, p.cmd, "rejected", p.error!, p.now, p.createdAt), replay: false });
      } else if (results[p.updateAt!].meta.changes > 0) {
        task = p.after!;
        geocode ||= !!p.geocode;
        if (p.contactAddressId) contactAddresses.push(p.contactAddressId);
        rescheduled ||= !!p.rescheduled;
        outcomes.push({ row: rowOf(actor, p.cmd, "accepted", "", p.now, p.createdAt), replay: false });
      } else if (p.limitAt !== undefined && results[p.limitAt].meta.changes === 1) {
        outcomes.push({
          row: rowOf(actor, p.cmd, "rejected", LIMIT_MESSAGE, p.now, p.createdAt),
          replay: false,
        });
        task = p.before!;
        next += 1;
        broke = true; // later commands were planned on the refused update
        stale = 0;
        break;
      } else {
        broke = true;
        break;
      }
      next += 1;
      stale = 0;
    }
    if (broke) {
      // Either a planned outcome did not hold (another writer moved the task) or the limit
      // changed the course: continue from the task as stored.
      if (++stale > 5) throw new Error(`task ${taskId} keeps changing; commands not applied`);
      task = await loadTask(db, actor.accountId, taskId);
    }
    chunkSize = COMMANDS_PER_BATCH;
  }
  if (contactAddresses.length) {
    await enqueueGeocodeRetries(
      env.GEOCODE_QUEUE,
      contactAddresses.map((contactAddressId) => ({ accountId: actor.accountId, contactAddressId })),
    );
  }
  return { outcomes, task, geocode, rescheduled, token };
}

export type AppliedOne =
  | (AppliedTask & { error?: undefined })
  | {
      error: Record<string, string[]>;
      task: TaskRow | null;
      outcomes: [];
      geocode: false;
      rescheduled: false;
      token?: ProvenToken;
      tokenMismatch?: undefined;
    };

const DOES_NOT_EXIST = "Invalid hyperlink - Object does not exist.";

/**
 * One command, checked by the task's object itself instead of by lookups beforehand (the
 * phone's common case: one round trip to D1 when the object remembers its task). The task
 * must be of the caller's account, and a reused `external_id` must name the same task and
 * action; either failure is a field error, with nothing applied.
 */
export async function applyOne(
  env: Env,
  actor: Actor,
  taskId: string,
  cmd: CommandInput,
  opts: ApplyOptions,
): Promise<AppliedOne> {
  let task = opts.task !== undefined ? opts.task : await loadTask(env.DB, actor.accountId, taskId);
  if (task && task.account_id !== actor.accountId) task = null;
  if (!task) {
    const stale = opts.task !== undefined ? await loadTask(env.DB, actor.accountId, taskId) : null;
    if (!stale)
      return {
        error: { task: [DOES_NOT_EXIST] },
        task: null,
        outcomes: [],
        geocode: false,
        rescheduled: false,
      };
    task = stale;
  }
  const applied = await applyToTask(env, actor, taskId, [cmd], { ...opts, task });
  if (applied.tokenMismatch) return applied;
  const [outcome] = applied.outcomes;
  if (outcome.replay && (outcome.row.task_id !== taskId || outcome.row.action !== cmd.action)) {
    return {
      error: { external_id: ["A command with this external_id already exists for another task or action."] },
      task: applied.task,
      outcomes: [],
      geocode: false,
      rescheduled: false,
      token: applied.token,
    };
  }
  return applied;
}

/**
 * The same external_id was written meanwhile for another task (in another Durable Object):
 * the unique index rolled this batch back whole. Report what is stored.
 */
async function replayOnConflict(
  db: D1Database,
  actor: Actor,
  cmd: CommandInput,
  err: unknown,
): Promise<CommandRow> {
  if (!/UNIQUE constraint failed/i.test(String(err))) throw err;
  const row = await loadCommand(db, actor.accountId, cmd.externalId);
  if (!row) throw err;
  return row;
}

/**
 * What the metafield checks of these commands need (contract §12), read beside the task: the
 * account's task definitions when a command completes or updates metafields, and which users
 * named by `assignee` metafield values belong to the account.
 */
async function loadMetafieldContext(
  db: D1Database,
  accountId: string,
  commands: CommandInput[],
): Promise<MetafieldContext> {
  const sent = sentMetafields(commands);
  if (!needsMetafieldContext(commands)) return NO_METAFIELDS;
  const [defs, users] = await db.batch([
    db.prepare("SELECT * FROM metafields WHERE account_id = ? AND applies_to = 'tasks'").bind(accountId),
    db
      .prepare(
        "SELECT user_id FROM account_roles WHERE account_id = ? AND state = 'active' AND user_id IN (SELECT value FROM json_each(?))",
      )
      .bind(accountId, JSON.stringify(sent.flatMap((m) => Object.values(m).flatMap(userIdsIn)))),
  ]);
  return {
    definitions: (defs.results as MetafieldRow[]).map(definitionOf),
    accountUsers: new Set((users.results as { user_id: string }[]).map((r) => r.user_id)),
  };
}

/** The `task_data.metafields` objects the commands send. */
function sentMetafields(commands: CommandInput[]): Record<string, unknown>[] {
  return commands.flatMap((c) => {
    const m = carriesTaskData(c.action) ? (c.taskData as Record<string, unknown>).metafields : undefined;
    return m && typeof m === "object" ? [m as Record<string, unknown>] : [];
  });
}

/** Whether deciding these commands needs the account's metafield definitions (loadMetafieldContext). */
export const needsMetafieldContext = (commands: CommandInput[]) =>
  sentMetafields(commands).length > 0 || commands.some((c) => c.action === "complete");

/** User ids a metafield value may name (a user URL or UUID); checked against definitions later. */
function userIdsIn(value: unknown): string[] {
  const id = typeof value === "string" ? userIdOf(value) : null;
  return id ? [id] : [];
}
