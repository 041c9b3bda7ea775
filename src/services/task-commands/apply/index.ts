/**
 * Applying commands to one task, inside its Durable Object: `plan` (pure), `statements`
 * (the guarded SQL), `loop` (sends the plan, re-plans where it broke), `scheduled` (moves at
 * a scheduled time); `group` writes the runs that many tasks' objects planned in one transaction.
 */

export {
  commitRuns,
  type GroupEntry,
  type GroupPlan,
  type GroupRun,
  groupTurn,
  lastStoredRun,
  planGroup,
} from "./group";
export { type AppliedOne, type AppliedTask, type ApplyOptions, applyOne, applyToTask } from "./loop";
export { durationToSeconds } from "./plan";
export { applyScheduledMove, overdueScheduledTasks } from "./scheduled";
export { LIMIT_MESSAGE } from "./statements";
