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
  type GroupRun,
  planGroup,
} from "../../services/task-commands/apply";
import type { Actor, CommandInput, CommandOutcome } from "../../services/task-commands/types";
import type { TaskRow } from "../../services/tasks/types";
import {
  type DeleteTaskArgs,
  deleteTaskInPlace,
  type UpdateTaskArgs,
  updateTaskInPlace,
} from "../../services/tasks/write";

/** Runs of one task in flight at once before its object applies a batch itself instead. */
const MAX_CHAIN = 8;

type ScheduleRecord = { accountId: string; taskId: string; at: number; baseUrl: string };
type CommandArgs = { actor: Actor; taskId: string; commands: CommandInput[]; baseUrl: string };
type OneArgs = { actor: Actor; taskId: string; command: CommandInput; baseUrl: string; proof?: WriteProof };

/**
 * One instance per task (idFromName(task id)): the single writer of that task. A Durable
 * Object's input gate does not hold other calls while we await D1 (a network call), so the
 * writes are chained explicitly: each runs after the previous one settled, in arrival order,
 * and two writes to one task never interleave (contract §6). A batch's runs are decided here
 * and sent to D1 by the request with other tasks' runs (planCommands, apply/group.ts); each
 * lands only on the exact state it was decided on, so they cannot interleave either. D1 stays
 * the source of truth; the DO's own storage keeps only the scheduled-time alarm.
 */
export class TaskDO extends DurableObject<Env> {
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * The task as this object's last write left it (undefined: not known). Only a hint: every
   * write is guarded by the task's state (atState), and a stale hint costs one re-read.
   */
  private task: TaskRow | null | undefined = undefined;
  /**
   * Runs this object decided for requests' group commits and has not seen written, oldest
   * first, each with the task as it leaves it (apply/group.ts). Cleared by every write the
   * object makes itself: those start from the task as stored, and a run still on its way then
   * finds its guard false and comes back.
   */
  private chain: { run: GroupRun; after: TaskRow; request?: string }[] = [];

  /**
   * The task as this object last decided it: after the last run it handed to a request, else as
   * its own last write left it. Every write is guarded by the task being in exactly that state
   * (version and last command, apply/statements.ts atState), so a run that was not written
   * after all only costs the next write a re-read.
   */
  private latest(): TaskRow | null | undefined {
    return this.chain.length ? this.chain[this.chain.length - 1].after : this.task;
  }

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
            task: ofActor(this.latest()) ?? ofActor(args.task),
          }),
        );
      }),
    );
  }

  /**
   * A batch's commands for this task (sync mode), for the request's group commit
   * (task-commands/apply/group.ts): when they make one run, this object decides it and hands
   * back what it writes (`plan`), with the runs it decided before for other requests that it
   * has not seen written (`carried`: the request writes those first, so it does not matter
   * which request reaches D1 first); else it applies them itself, as applyCommands
   * (`outcomes`).
   */
  async planCommands(args: CommandArgs & { task?: TaskRow; stored?: string; request?: string }) {
    return this.oneAtATime(() =>
      reported(this.env, args.actor.accountId, async (env) => {
        const { stored, decided } = this.planned(args);
        if (decided) return decided;
        const applied = await applyToTask(env, args.actor, args.taskId, args.commands, {
          baseUrl: args.baseUrl,
          task: stored,
        });
        return { plan: undefined, outcomes: await this.after(args, applied) };
      }),
    );
  }

  /**
   * The run of `commands` for a request's group commit, decided on the task as this object last
   * decided it (`decided`: the plan and the earlier runs the request carries), or null when they
   * do not make one (planGroup) or the task is not known here; `stored`: the task as last known
   * stored, for the object to apply the commands itself.
   */
  private planned(
    args: CommandArgs & { task?: TaskRow; stored?: string; request?: string; proof?: WriteProof },
  ) {
    const ofActor = (row: TaskRow | null | undefined) =>
      row?.account_id === args.actor.accountId ? row : undefined;
    const read = ofActor(args.task);
    // Runs up to the one the request's read shows, or the last one its isolate saw stored
    // (`stored`, apply/group.ts lastStoredRun), are written: no need to carry them, and the task
    // was as the last of them left it.
    let confirmed: TaskRow | undefined;
    for (const lastId of [read?.last_command_id, args.stored]) {
      const k = lastId ? this.chain.findIndex((c) => c.run.lastId === lastId) : -1;
      if (k >= 0) {
        confirmed = this.chain[k].after;
        this.chain = this.chain.slice(k + 1);
      }
    }
    const stored = [ofActor(this.task), read, ofActor(confirmed)].reduce<TaskRow | undefined>(
      (a, b) => (!a || (b && b.version > a.version) ? b : a),
      undefined,
    );
    this.task = stored ?? this.task;
    const known = this.chain.length ? this.chain[this.chain.length - 1].after : stored;
    const plan =
      known && this.chain.length < MAX_CHAIN
        ? planGroup(args.actor, known, args.commands, args.baseUrl)
        : null;
    if (!plan) return { stored, decided: null };
    if (args.proof) plan.run.proof = args.proof;
    const carried = this.chain.map((c) => ({ run: c.run, request: c.request }));
    this.chain.push({ run: plan.run, after: plan.task, request: args.request });
    return { stored, decided: { plan, carried } };
  }

  /**
   * A single command for a request's group commit (task-commands/batch.ts applyTogether): its
   * run and the runs to carry, as planCommands, its write guarded by the caller's token proof;
   * or, when it makes no run, what applyOne answers (this object applied it).
   */
  async planOne(args: {
    actor: Actor;
    taskId: string;
    command: CommandInput;
    baseUrl: string;
    proof: WriteProof;
    stored?: string;
    request: string;
  }) {
    return this.oneAtATime(() =>
      reported(this.env, args.actor.accountId, async (env) => {
        const { decided } = this.planned({ ...args, commands: [args.command] });
        return decided ?? (await this.one(env, args));
      }),
    );
  }

  /**
   * One command, validated here (see applyOne): a field error, or its outcome. With `proof`,
   * the caller's token check rides on the command's batch (services/auth/tokens.ts, WriteProof):
   * the answer then carries the token's row as that batch read it, for the caller to settle,
   * and `tokenMismatch` when the row was not the proven one (nothing was written).
   */
  async applyOne(args: OneArgs & { notWritten?: boolean }) {
    return this.oneAtATime(() =>
      reported(this.env, args.actor.accountId, async (env) => {
        // A run this object handed to a group commit was not written: what it decided after
        // it is void, and the task is read again.
        if (args.notWritten) {
          this.chain = [];
          this.task = undefined;
        }
        return this.one(env, args);
      }),
    );
  }

  private async one(env: Env, args: OneArgs) {
    const r = await applyOne(env, args.actor, args.taskId, args.command, {
      baseUrl: args.baseUrl,
      task: this.latest(),
      proof: args.proof,
    });
    if (r.tokenMismatch) return { tokenMismatch: true as const, token: r.token };
    if (r.error) {
      this.task = r.task ?? undefined;
      return { error: r.error, token: r.token };
    }
    const [outcome] = await this.after({ ...args, commands: [args.command] }, r);
    // With the task's version and last change after it: auto-assign keeps its read of a route
    // up to date with them instead of reading the route again.
    if (r.task) outcome.written = { version: r.task.version, updatedAt: r.task.updated_at };
    return { outcome, token: r.token };
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
    this.chain = [];
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
    this.chain = [];
    return this.oneAtATime(() =>
      reported(this.env, args.principal.accountId, (env) => updateTaskInPlace(env, args)),
    );
  }

  /** DELETE of this task (services/tasks/write.ts). */
  async destroy(args: DeleteTaskArgs) {
    this.task = undefined;
    this.chain = [];
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
    this.chain = [];
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
