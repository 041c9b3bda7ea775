import { absorbReport, type D1Report } from "../../db/session";
import type { TaskDO } from ".";

/** The stub of a task's Durable Object: one per task id, wherever the request lands. */
export function taskStub(env: Env, taskId: string) {
  return env.TASK_DO.get(env.TASK_DO.idFromName(taskId));
}

type Reported<T> = { value: T; d1: D1Report };
type Unwrapped<F> = F extends (...args: infer A) => Promise<Reported<infer T>>
  ? (...args: A) => Promise<T>
  : never;
type WriterCalls =
  | "applyCommands"
  | "planCommands"
  | "planOne"
  | "applyOne"
  | "applyPending"
  | "update"
  | "destroy";

/**
 * A task's writer as the request sees it: each call's D1 work (done by the object, in a session
 * of its own at the primary) is added to the request's session, so the request's bookmark
 * covers the object's writes and its round trips count them (db/session.ts).
 */
export function taskWriter(
  env: Env,
  taskId: string,
): { [K in WriterCalls]: Unwrapped<TaskDO[K]> } & {
  armSchedule: TaskDO["armSchedule"];
} {
  const stub = taskStub(env, taskId) as unknown as TaskDO;
  const unwrap =
    <K extends WriterCalls>(name: K) =>
    async (...args: unknown[]) => {
      const r = (await (stub[name] as (...a: unknown[]) => Promise<Reported<unknown>>)(
        ...args,
      )) as Reported<unknown>;
      absorbReport(env, r.d1);
      return r.value;
    };
  return {
    applyCommands: unwrap("applyCommands"),
    planCommands: unwrap("planCommands"),
    planOne: unwrap("planOne"),
    applyOne: unwrap("applyOne"),
    applyPending: unwrap("applyPending"),
    update: unwrap("update"),
    destroy: unwrap("destroy"),
    armSchedule: (args) => stub.armSchedule(args),
  } as { [K in WriterCalls]: Unwrapped<TaskDO[K]> } & { armSchedule: TaskDO["armSchedule"] };
}
