import { DurableObject } from "cloudflare:workers";
import { reported } from "../../db/session";
import { inAccount } from "../../db/shards";
import { enqueueGeocodeRetries } from "../../queues/geocode/message";
import type { WriteProof } from "../../services/auth/tokens";
import {
  type AppliedTask,
  applyOne,
  applyScheduledMove,
  applyToTask,
} from "../../services/task-commands/apply";
import type { Actor, CommandInput, CommandOutcome } from "../../services/task-commands/types";
import type { TaskRow } from "../../services/tasks/types";
import {
  type DeleteTaskArgs,
  deleteTaskInPlace,
  type UpdateTaskArgs,
  updateTaskInPlace,
} from "../../services/tasks/write";

type ScheduleRecord = { accountId: string; taskId: string; at: number; baseUrl: string };
type CommandArgs = { actor: Actor; taskId: string; commands: CommandInput[]; baseUrl: string };

/**
 * One instance per task (idFromName(task id)): the single writer of that task. A Durable
 * Object's input gate does not hold other calls while we await D1 (a network call), so the
 * writes are chained explicitly: each runs after the previous one settled, in arrival order,
 * and two writes to one task never interleave (contract §6). D1 stays the source of truth;
 * the DO's own storage keeps only the scheduled-time alarm.
 */
export class TaskDO extends DurableObject<Env> {
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * The task as the last command batch left it (undefined: not known). Only a hint: every
   * write is guarded by the task's version, and a stale hint costs one re-read.
   */
  private task: TaskRow | null | undefined = undefined;

  /** Runs `work` after every earlier write of this task has finished: the single writer. */
  protected oneAtATime<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Applies commands for this task in the given order (sync mode). `task` is the row the
   * caller read while resolving the request: a hint used when this object has none, so a
   * batch costs this task one D1 round trip, not a read and a write.
   */
  async applyCommands(args: CommandArgs & { task?: TaskRow }) {
    return this.oneAtATime(() =>
      reported(this.env, args.actor.accountId, async (env) => {
        const ofActor = (row: TaskRow | null | undefined) =>
          row?.account_id === args.actor.accountId ? row : undefined;
        return this.after(
          args,
          await applyToTask(env, args.actor, args.taskId, args.commands, {
            baseUrl: args.baseUrl,
            task: ofActor(this.task) ?? ofActor(args.task),
          }),
        );
      }),
    );
  }

  /**
   * One command, validated here (see applyOne): a field error, or its outcome. With `proof`,
   * the caller's token check rides on the command's batch (services/auth/tokens.ts, WriteProof):
   * the answer then carries the token's row as that batch read it, for the caller to settle,
   * and `tokenMismatch` when the row was not the proven one (nothing was written).
   */
  async applyOne(args: {
    actor: Actor;
    taskId: string;
    command: CommandInput;
    baseUrl: string;
    proof?: WriteProof;
  }) {
    return this.oneAtATime(() =>
      reported(this.env, args.actor.accountId, async (env) => {
        const r = await applyOne(env, args.actor, args.taskId, args.command, {
          baseUrl: args.baseUrl,
          task: this.task,
          proof: args.proof,
        });
        if (r.tokenMismatch) return { tokenMismatch: true, token: r.token };
        if (r.error) {
          this.task = r.task ?? undefined;
          return { error: r.error, token: r.token };
        }
        const [outcome] = await this.after({ ...args, commands: [args.command] }, r);
        return { outcome, token: r.token };
      }),
    );
  }

  /** Moves stored `pending` commands to their outcome (asynchronous mode, from the queue). */
  async applyPending(args: CommandArgs) {
    return this.oneAtATime(() =>
      reported(this.env, args.actor.accountId, async (env) =>
        this.after(
          args,
          await applyToTask(env, args.actor, args.taskId, args.commands, { ...args, pending: true }),
        ),
      ),
    );
  }

  /** Follow-ups of applied commands: geocode a new address, re-arm a moved scheduled time. */
  private async after(args: CommandArgs, applied: AppliedTask): Promise<CommandOutcome[]> {
    const task = applied.task;
    // A missing task is not remembered: only a row read from D1 is.
    this.task = task ?? undefined;
    if (task && applied.geocode) {
      await enqueueGeocodeRetries(this.env.GEOCODE_QUEUE, [
        { accountId: task.account_id, taskId: task.id, baseUrl: args.baseUrl },
      ]);
    }
    if (task && applied.rescheduled && task.state === "scheduled") {
      await this.arm({
        accountId: task.account_id,
        taskId: task.id,
        at: task.scheduled_time,
        baseUrl: args.baseUrl,
      });
    }
    return applied.outcomes;
  }

  /** PATCH / PUT of this task (services/tasks/write.ts). */
  async update(args: UpdateTaskArgs) {
    this.task = undefined;
    return this.oneAtATime(() =>
      reported(this.env, args.principal.accountId, (env) => updateTaskInPlace(env, args)),
    );
  }

  /** DELETE of this task (services/tasks/write.ts). */
  async destroy(args: DeleteTaskArgs) {
    this.task = undefined;
    return this.oneAtATime(() =>
      reported(this.env, args.principal.accountId, (env) => deleteTaskInPlace(env, args)),
    );
  }

  /** Arms (or re-arms, or with `at: null` disarms) the move of a `scheduled` task at its time. */
  async armSchedule(args: {
    accountId: string;
    taskId: string;
    at: number | null;
    baseUrl?: string;
  }): Promise<void> {
    await this.arm({ ...args, baseUrl: args.baseUrl ?? "" });
  }

  private async arm(args: { accountId: string; taskId: string; at: number | null; baseUrl: string }) {
    if (args.at === null) {
      await this.ctx.storage.delete("schedule");
      await this.ctx.storage.deleteAlarm();
      return;
    }
    const rec: ScheduleRecord = {
      accountId: args.accountId,
      taskId: args.taskId,
      at: args.at,
      baseUrl: args.baseUrl,
    };
    await this.ctx.storage.put("schedule", rec);
    await this.ctx.storage.setAlarm(args.at);
  }

  async alarm(): Promise<void> {
    const rec = await this.ctx.storage.get<ScheduleRecord>("schedule");
    if (!rec) return;
    const env = await inAccount(this.env, rec.accountId);
    const result = await this.oneAtATime(() =>
      applyScheduledMove(env, rec.accountId, rec.taskId, rec.baseUrl),
    );
    if (result === "not_due" || result === "changed") {
      const row = await env.DB.prepare("SELECT scheduled_time FROM tasks WHERE id = ?")
        .bind(rec.taskId)
        .first<{ scheduled_time: number }>();
      if (row?.scheduled_time)
        await this.ctx.storage.setAlarm(Math.max(row.scheduled_time, Date.now() + 1000));
      return;
    }
    await this.ctx.storage.delete("schedule");
  }
}
