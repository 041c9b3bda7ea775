import { DurableObject } from "cloudflare:workers";
import { applyScheduledMove, applyToTask } from "../../services/task-commands/apply";
import { commandEvents } from "../../services/task-commands/events";
import type { Actor, CommandInput, CommandOutcome } from "../../services/task-commands/types";
import {
  type DeleteTaskArgs,
  deleteTaskInPlace,
  type UpdateTaskArgs,
  updateTaskInPlace,
} from "../../services/tasks/write";

type ScheduleRecord = { accountId: string; taskId: string; at: number };

/**
 * One instance per task (idFromName(task id)): the single writer of that task. A Durable
 * Object's input gate does not hold other calls while we await D1 (a network call), so the
 * writes are chained explicitly: each runs after the previous one settled, in arrival order,
 * and two writes to one task never interleave (contract §6). D1 stays the source of truth;
 * the DO's own storage keeps only the scheduled-time alarm.
 */
export class TaskDO extends DurableObject<Env> {
  private queue: Promise<unknown> = Promise.resolve();

  protected serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Applies commands for this task in the given order (sync mode). */
  async applyCommands(args: {
    actor: Actor;
    taskId: string;
    commands: CommandInput[];
    baseUrl: string;
  }): Promise<CommandOutcome[]> {
    return this.serialize(() =>
      applyToTask(this.env, args.actor, args.taskId, args.commands, {
        hooks: { events: commandEvents(this.env, args.actor, args.baseUrl) },
      }),
    );
  }

  /** Moves stored `pending` commands to their outcome (asynchronous mode, from the queue). */
  async applyPending(args: {
    actor: Actor;
    taskId: string;
    commands: CommandInput[];
    baseUrl: string;
  }): Promise<CommandOutcome[]> {
    return this.serialize(() =>
      applyToTask(this.env, args.actor, args.taskId, args.commands, {
        pending: true,
        hooks: { events: commandEvents(this.env, args.actor, args.baseUrl) },
      }),
    );
  }

  /** PATCH / PUT of this task (services/tasks/write.ts). */
  async update(args: UpdateTaskArgs) {
    return this.serialize(() => updateTaskInPlace(this.env, args));
  }

  /** DELETE of this task (services/tasks/write.ts). */
  async destroy(args: DeleteTaskArgs) {
    return this.serialize(() => deleteTaskInPlace(this.env, args));
  }

  /** Arms (or re-arms, or with `at: null` disarms) the move of a `scheduled` task at its time. */
  async armSchedule(args: { accountId: string; taskId: string; at: number | null }): Promise<void> {
    if (args.at === null) {
      await this.ctx.storage.delete("schedule");
      await this.ctx.storage.deleteAlarm();
      return;
    }
    await this.ctx.storage.put("schedule", {
      accountId: args.accountId,
      taskId: args.taskId,
      at: args.at,
    } satisfies ScheduleRecord);
    await this.ctx.storage.setAlarm(args.at);
  }

  async alarm(): Promise<void> {
    const rec = await this.ctx.storage.get<ScheduleRecord>("schedule");
    if (!rec) return;
    const result = await this.serialize(() => applyScheduledMove(this.env, rec.accountId, rec.taskId));
    if (result === "not_due") {
      const row = await this.env.DB.prepare("SELECT scheduled_time FROM tasks WHERE id = ?")
        .bind(rec.taskId)
        .first<{ scheduled_time: number }>();
      if (row?.scheduled_time) await this.ctx.storage.setAlarm(row.scheduled_time);
      return;
    }
    await this.ctx.storage.delete("schedule");
  }
}
