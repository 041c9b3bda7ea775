/**
 * Task state machine (contract section 5, interface sections 2.6, 2.7, 3).
 *
 * A pure module: no I/O, no imports but other pure rules. It decides whether one task command may be applied to a
 * task and, when it may, what the task's state and assignee become. Everything that needs
 * storage is left to the caller:
 *   - the transit/active limit (`usesTransitSlot` says when the caller must check it, in the
 *     same atomic step as the write);
 *   - which required metafields are missing (`missingRequiredMetafields`);
 *   - applying `task_data`, recording the command, emitting events.
 *
 * Order of the checks in `decide` (the first failing check gives the error):
 *   1. Permission, which depends only on who acts, on what task, with what payload. A caller
 *      without the right learns nothing about the task's state from the answer.
 *      a. A worker may not send the dispatcher actions (assign, reassign, unassign, cancel,
 *         restart).
 *      b. accept, unaccept and reject are for the task's assignee only, whatever the role.
 *      c. A worker may act only on a task assigned to it.
 *      d. A worker may send `task_data.position` (update, reassign) only when the account has
 *         `allowWorkerReordering`.
 *      The `system` role (scheduled-time moves) skips all of 1.
 *   2. The transition: the (state, action) pair must be in the table (`ALLOWED`), else
 *      `Cannot <action> a task in state "<state>".`
 *   3. The command's own preconditions: its `task_data` must be acceptable (`taskDataError`,
 *      e.g. a metafield of the wrong type or not editable by workers); `assign`/`reassign` need an assignee; `fail` needs
 *      notes naming one of the account's `failed_reasons` (when it has any); `complete` needs
 *      every required metafield to be set.
 */

import { failedReasonError } from "./failed-reasons";

export const TASK_STATES = [
  "draft",
  "scheduled",
  "unassigned",
  "assigned",
  "accepted",
  "transit",
  "active",
  "completed",
  "failed",
  "cancelled",
] as const;
export type TaskState = (typeof TASK_STATES)[number];

export const TASK_ACTIONS = [
  "update",
  "assign",
  "reassign",
  "unassign",
  "accept",
  "unaccept",
  "reject",
  "transit",
  "activate",
  "complete",
  "fail",
  "cancel",
  "restart",
] as const;
export type TaskAction = (typeof TASK_ACTIONS)[number];

export type Role = "admin" | "manager" | "worker" | "integration" | "system";

/** Actions a worker may never send: they belong to dispatchers (admin, manager, integration). */
export const DISPATCHER_ACTIONS: readonly TaskAction[] = [
  "assign",
  "reassign",
  "unassign",
  "cancel",
  "restart",
];

/** Actions only the task's assignee may send. */
export const ASSIGNEE_ONLY_ACTIONS: readonly TaskAction[] = ["accept", "unaccept", "reject"];

/** States that count against a worker's transit/active limit. */
export const TRANSIT_SLOT_STATES: readonly TaskState[] = ["transit", "active"];

/** For each action, the states it may be sent from (contract section 5). */
export const ALLOWED: Record<TaskAction, readonly TaskState[]> = {
  update: ["draft", "scheduled", "unassigned", "assigned", "accepted", "transit", "active", "failed"],
  assign: ["draft", "scheduled", "unassigned"],
  reassign: ["scheduled", "unassigned", "assigned", "accepted", "transit", "active"],
  unassign: ["draft", "scheduled", "assigned", "accepted"],
  accept: ["assigned"],
  unaccept: ["accepted"],
  reject: ["assigned", "accepted"],
  transit: ["assigned", "accepted"],
  activate: ["assigned", "accepted", "transit"],
  complete: ["transit", "active"],
  fail: ["assigned", "accepted", "transit", "active"],
  cancel: ["draft", "scheduled", "unassigned", "assigned", "accepted", "transit", "active"],
  restart: ["failed"],
};

export interface TaskSnapshot {
  state: TaskState;
  assigneeId: string | null;
}

export interface DecideInput {
  task: TaskSnapshot;
  action: TaskAction;
  actor: { userId: string; role: Role };
  /** The command's `assignee` (for assign / reassign). */
  assigneeId?: string | null;
  /** The command's `task_data`. */
  taskData?: { position?: number; [k: string]: unknown };
  account: { allowWorkerReordering: boolean; failedReasons?: readonly string[] };
  /** The command's `notes` (a `fail` must name one of the account's failed reasons). */
  notes?: string;
  /** Keys of the metafields required before completion that the task does not have yet. */
  missingRequiredMetafields?: string[];
  /** Why the command's `task_data` cannot be applied (a metafield refused), found by the caller. */
  taskDataError?: string | null;
}

export interface DecisionOk {
  ok: true;
  state: TaskState;
  assigneeId: string | null;
  /**
   * True when the new state is transit or active and the old one was not: the caller must
   * check the worker's transit/active limit in the same atomic step as the write.
   */
  usesTransitSlot: boolean;
  stateChanged: boolean;
}

export interface DecisionError {
  ok: false;
  error: string;
}

export type Decision = DecisionOk | DecisionError;

export function isTaskState(value: unknown): value is TaskState {
  return typeof value === "string" && (TASK_STATES as readonly string[]).includes(value);
}

export function isTaskAction(value: unknown): value is TaskAction {
  return typeof value === "string" && (TASK_ACTIONS as readonly string[]).includes(value);
}

/** The error text of a (state, action) pair that is not in the table. */
export function transitionError(action: string, state: string): string {
  return `Cannot ${action} a task in state "${state}".`;
}

/** Whether the (state, action) pair is in the table, ignoring who acts. */
export function canTransition(state: TaskState, action: TaskAction): boolean {
  return ALLOWED[action]?.includes(state) ?? false;
}

function fail(error: string): DecisionError {
  return { ok: false, error };
}

function permissionError(input: DecideInput): string | null {
  const { task, action, actor } = input;
  if (actor.role === "system") return null;
  const isAssignee = task.assigneeId !== null && task.assigneeId === actor.userId;

  if (actor.role === "worker" && DISPATCHER_ACTIONS.includes(action)) {
    return `Permission denied: a worker cannot ${action} tasks.`;
  }
  if (ASSIGNEE_ONLY_ACTIONS.includes(action) && !isAssignee) {
    return `Only the assignee can ${action} this task.`;
  }
  if (actor.role === "worker" && !isAssignee) {
    return "Permission denied: this task is not assigned to you.";
  }
  if (
    actor.role === "worker" &&
    (action === "update" || action === "reassign") &&
    input.taskData?.position !== undefined &&
    !input.account.allowWorkerReordering
  ) {
    return "Permission denied: workers may not reorder tasks in this account.";
  }
  return null;
}

/** The state and assignee after an allowed transition (the pair must be in `ALLOWED`). */
function target(
  task: TaskSnapshot,
  action: TaskAction,
  commandAssignee: string | null,
): { state: TaskState; assigneeId: string | null } {
  const scheduled = task.state === "scheduled";
  switch (action) {
    case "update":
      return { state: task.state, assigneeId: task.assigneeId };
    case "assign":
    case "reassign":
      return { state: scheduled ? "scheduled" : "assigned", assigneeId: commandAssignee };
    case "unassign":
      return { state: scheduled ? "scheduled" : "unassigned", assigneeId: null };
    case "accept":
      return { state: "accepted", assigneeId: task.assigneeId };
    case "unaccept":
      return { state: "assigned", assigneeId: task.assigneeId };
    case "reject":
      return { state: "unassigned", assigneeId: null };
    case "transit":
      return { state: "transit", assigneeId: task.assigneeId };
    case "activate":
      return { state: "active", assigneeId: task.assigneeId };
    case "complete":
      return { state: "completed", assigneeId: task.assigneeId };
    case "fail":
      return { state: "failed", assigneeId: task.assigneeId };
    case "cancel":
      return { state: "cancelled", assigneeId: task.assigneeId };
    case "restart":
      return { state: task.assigneeId !== null ? "assigned" : "unassigned", assigneeId: task.assigneeId };
  }
}

/** Decides whether a task command may be applied, and what it does to the task. */
export function decide(input: DecideInput): Decision {
  const { task, action } = input;
  if (!isTaskAction(action)) return fail(`Unknown action "${String(action)}".`);
  if (!isTaskState(task.state)) return fail(`Unknown task state "${String(task.state)}".`);

  // 1. Permission.
  const denied = permissionError(input);
  if (denied !== null) return fail(denied);

  // 2. Transition.
  if (!canTransition(task.state, action)) return fail(transitionError(action, task.state));

  // 3. Preconditions of the command.
  let commandAssignee: string | null = null;
  if (action === "assign" || action === "reassign") {
    commandAssignee = input.assigneeId ?? null;
    if (commandAssignee === null || commandAssignee === "") {
      return fail(`An assignee is required to ${action} a task.`);
    }
  }
  if (input.taskDataError) return fail(input.taskDataError);
  if (action === "fail") {
    const wrong = failedReasonError(input.account.failedReasons ?? [], input.notes ?? "");
    if (wrong) return fail(wrong);
  }
  if (action === "complete") {
    const missing = input.missingRequiredMetafields ?? [];
    if (missing.length > 0) {
      return fail(`Cannot complete the task: required metafields are not set: ${missing.join(", ")}.`);
    }
  }

  const next = target(task, action, commandAssignee);
  return {
    ok: true,
    state: next.state,
    assigneeId: next.assigneeId,
    usesTransitSlot: TRANSIT_SLOT_STATES.includes(next.state) && !TRANSIT_SLOT_STATES.includes(task.state),
    stateChanged: next.state !== task.state,
  };
}

/**
 * The move a `scheduled` task makes by itself at its `scheduled_time`: `assigned` when it has an
 * assignee, else `unassigned`. Null when the task is no longer `scheduled` (nothing to do).
 */
export function nextStateOnSchedule(task: TaskSnapshot): TaskState | null {
  if (task.state !== "scheduled") return null;
  return task.assigneeId !== null ? "assigned" : "unassigned";
}
