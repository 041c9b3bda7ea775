/**
 * Commands written together (group commit, apply/group.ts): each task's Durable Object decides
 * its commands, the request writes the runs they hand back (a batch's runs over many tasks at
 * once; a single command's with the other single commands of its isolate, apply/together.ts),
 * and does what the object does after its own writes for the runs it wrote.
 */
import { taskWriter } from "../../durable-objects/task/client";
import { enqueueGeocodeRetries } from "../../queues/geocode/message";
import type { WriteProof } from "../auth/tokens";
import type { TaskRow } from "../tasks/types";
import { commitRuns, type GroupPlan, type GroupRun, groupTurn, lastStoredRun } from "./apply";
import { commitTogether } from "./apply/together";
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
  let planned: { i: number; plan: GroupPlan; carried: () => GroupRun[] }[];
  let written: (number | null)[];
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
      planned.map((p) => ({ run: p.plan.run, carried: p.carried() })),
    );
  } finally {
    turn.finish();
  }
  await Promise.all(
    planned.map(async (p, k) => {
      const t = tasks[p.i];
      if (written[k] !== null) {
        outcomes[p.i] = p.plan.outcomes;
        return;
      }
      outcomes[p.i] = await taskWriter(env, t.taskId).applyCommands({
        actor,
        taskId: t.taskId,
        commands: t.commands,
        baseUrl,
      });
    }),
  );
  await afterRuns(
    env,
    actor,
    planned.filter((_, k) => written[k] !== null).map((p) => p.plan),
    baseUrl,
  );
  return outcomes;
}

/**
 * A single command whose token check its write carries (`proof`, http/first-batch.ts), written
 * with the other runs this isolate is writing for the account (apply/together.ts): its task's
 * object decides it, the request writes it. What TaskDO.applyOne answers: the outcome and the
 * token's row as the write proved it, or a field error, or `tokenMismatch` (nothing written).
 * A run that was not written goes back to the object, which applies the command on the task as
 * stored (and tells a token that no longer holds from another writer's change).
 */
export async function applyTogether(
  env: Env,
  actor: Actor,
  command: CommandInput,
  baseUrl: string,
  proof: WriteProof,
) {
  const writer = taskWriter(env, command.taskId);
  const turn = groupTurn();
  let plan: GroupPlan;
  let at: number | null;
  try {
    const d = await writer.planOne({
      actor,
      taskId: command.taskId,
      command,
      baseUrl,
      proof,
      stored: lastStoredRun(command.taskId),
      request: turn.id,
    });
    if (!("plan" in d)) return d;
    plan = d.plan;
    const carried = turn.settle(d.carried);
    await turn.ready();
    at = await commitTogether(env, actor.accountId, { run: plan.run, carried: carried() });
  } finally {
    turn.finish();
  }
  if (at === null) {
    return writer.applyOne({ actor, taskId: command.taskId, command, baseUrl, proof, notWritten: true });
  }
  await afterRuns(env, actor, [plan], baseUrl);
  // The run's UPDATE held only while the token's row was the proven one, unexpired at `at`.
  return { outcome: plan.outcomes[0], token: { row: { fingerprint: proof.fingerprint }, now: at } };
}

/**
 * What a task's object does after it writes a run (TaskDO.after), for the runs the group commit
 * wrote: geocode new addresses (one queue send for all), arm the move of each `scheduled` task
 * at its new time.
 */
async function afterRuns(env: Env, actor: Actor, plans: GroupPlan[], baseUrl: string) {
  const geocode = plans.filter((p) => p.geocode).map((p) => p.task);
  await Promise.all([
    geocode.length
      ? enqueueGeocodeRetries(
          env.GEOCODE_QUEUE,
          geocode.map((task) => ({ accountId: actor.accountId, taskId: task.id, baseUrl })),
        )
      : undefined,
    ...plans
      .filter((p) => p.rescheduled && p.task.state === "scheduled")
      .map((p) =>
        taskWriter(env, p.task.id).armSchedule({
          accountId: actor.accountId,
          taskId: p.task.id,
          at: p.task.scheduled_time,
          baseUrl,
        }),
      ),
  ]);
}
