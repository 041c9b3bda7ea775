import { DurableObject } from "cloudflare:workers";

/**
 * One instance per task (idFromName(task id)): the single writer of that task. Requests to
 * one Durable Object are delivered one at a time per input gate, and each method below
 * awaits its D1 batch before returning, so two writes to one task never interleave
 * (contract §6). D1 stays the source of truth; the DO keeps only timers (alarms).
 */
export class TaskDO extends DurableObject<Env> {
  /** Runs `work` with this task's writes serialized: one at a time, in arrival order. */
  private queue: Promise<unknown> = Promise.resolve();

  protected serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
