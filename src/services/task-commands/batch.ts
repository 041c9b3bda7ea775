/**
 * A batch's commands over many tasks, written together (group commit, apply/group.ts): each
 * task's Durable Object decides its commands, the request writes the runs they hand back, and
 * does what the object does after its own writes for the runs it wrote.
 */
import { taskWriter } from "../../durable-objects/task/client";
import { enqueueGeocodeRetries } from "../../queues/geocode/message";
import type { TaskRow } from "../tasks/types";
import { commitRuns, type GroupPlan, type GroupRun, groupTurn, lastStoredRun } from "./apply";
import type { Actor, CommandInput, CommandOutcome } from "./types";

/**
 * Each task's commands (in order; `task` as the request read it), decided by the task's object
 * and written together (group commit, apply/group.ts): the outcomes per task. A run that was
 * not written goes back to its object, which applies it on the task as stored.
 */
export async function applyGrouped(
  env: Env,
  actor: Actor,
  tasks: { taskId: string; commands: CommandInput[]; task?: TaskRow }[],
  baseUrl: string,
): Promise<CommandOutcome[][]> {
  const turn = groupTurn();
  const outcomes: CommandOutcome[][] = new Array(tasks.length);
  let planned: { i: number; plan: GroupPlan; carried: GroupRun[] }[];
  let written: boolean[];
  try {
    const decided = await Promise.all(
      tasks.map((t) =>
        taskWriter(env, t.taskId).planCommands({
          actor,
          taskId: t.taskId,
          commands: t.commands,
          baseUrl,
          task: t.task,
          stored: lastStoredRun(t.taskId),
          request: turn.id,
        }),
      ),
    );
    planned = decided.flatMap((d, i) => {
      if (!d.plan) {
        outcomes[i] = d.outcomes;
        return [];
      }
      return [{ i, plan: d.plan, carried: turn.settle(d.carried) }];
    });
    await turn.ready();
    written = await commitRuns(
      env.DB,
      actor.accountId,
      planned.map((p) => ({ run: p.plan.run, carried: p.carried })),
    );
  } finally {
    turn.finish();
  }
  await Promise.all(
    planned.map(async (p, k) => {
      const t = tasks[p.i];
      if (!written[k]) {
        outcomes[p.i] = await taskWriter(env, t.taskId).applyCommands({
          actor,
          taskId: t.taskId,
          commands: t.commands,
          baseUrl,
        });
        return;
      }
      outcomes[p.i] = p.plan.outcomes;
      await afterRun(env, actor, p.plan, baseUrl);
    }),
  );
  return outcomes;
}

/**
 * What a task's object does after it writes a run (TaskDO.after), for a run the group commit
 * wrote: geocode a new address, arm the move of a `scheduled` task at its new time.
 */
async function afterRun(env: Env, actor: Actor, plan: GroupPlan, baseUrl: string) {
  const task = plan.task;
  if (plan.geocode) {
    await enqueueGeocodeRetries(env.GEOCODE_QUEUE, [
      { accountId: actor.accountId, taskId: task.id, baseUrl },
    ]);
  }
  if (plan.rescheduled && task.state === "scheduled") {
    await taskWriter(env, task.id).armSchedule({
      accountId: actor.accountId,
      taskId: task.id,
      at: task.scheduled_time,
      baseUrl,
    });
  }
}
