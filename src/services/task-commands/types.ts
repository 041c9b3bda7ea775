import type { RoleName } from "../../db/schema";
import type { TaskAction } from "../../domain/task-state-machine";

/** A validated command, with references already resolved to ids (plain data: crosses RPC). */
export type CommandInput = {
  id: string;
  externalId: string;
  taskId: string;
  action: TaskAction;
  time: number;
  assigneeId: string | null;
  taskData: Record<string, unknown>;
  /** task_data.route resolved to an id, when sent. */
  routeId?: string | null;
  notes: string;
  location: unknown;
  /**
   * An `assign` issued by the system for auto-assign (contract §29): it also writes the
   * `task_data` `route` (as `routeId`) and `position` it carries, as an `update` would.
   */
  places?: boolean;
};

export type Actor = {
  userId: string | null;
  role: RoleName | "system";
  accountId: string;
  allowWorkerReordering: boolean;
  transitActiveLimit: number | null;
  /** The account's `failed_reasons` (contract §11), checked on `fail`. */
  failedReasons: string[];
};

export type CommandRow = {
  id: string;
  account_id: string;
  task_id: string;
  external_id: string;
  action: string;
  time: number;
  assignee_id: string | null;
  task_data: string;
  notes: string;
  location: string | null;
  user_id: string | null;
  state: "pending" | "accepted" | "rejected";
  error_message: string;
  accepted_at: number | null;
  rejected_at: number | null;
  created_at: number;
  updated_at: number;
};

/** What the TaskDO answers per command: the stored row, and whether it was a replay. */
export type CommandOutcome = {
  row: CommandRow;
  replay: boolean;
  /** The task as the command left it (TaskDO's `applyOne` only). */
  written?: { version: number; updatedAt: number };
};
