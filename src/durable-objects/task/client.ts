/** The stub of a task's Durable Object: one per task id, wherever the request lands. */
export function taskStub(env: Env, taskId: string) {
  return env.TASK_DO.get(env.TASK_DO.idFromName(taskId));
}
