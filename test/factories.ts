import { uuidv7 } from "../src/lib/ids";
import type { Actor, CommandInput } from "../src/services/task-commands/types";
import { BASE } from "./helpers";
import { stored } from "./stored";

/**
 * Puts a task in a given state directly in D1, for tests of what happens NEXT (commands,
 * alarms). Tests of task creation itself go through `POST /tasks/`.
 */
export async function insertTask(
  accountId: string,
  opts: {
    state?: string;
    assigneeId?: string | null;
    scheduledTime?: number | null;
    position?: number | null;
  } = {},
) {
  const id = uuidv7();
  const now = Date.now();
  await stored
    .prepare(
      `INSERT INTO tasks (id, account_id, state, category, description, address, contact, assignee_id, scheduled_time, position, created_at, updated_at)
     VALUES (?, ?, ?, 'drop_off', 'test task', '{"raw_address":"Tallinn"}', '{}', ?, ?, ?, ?, ?)`,
    )
    .bind(
      id,
      accountId,
      opts.state ?? "unassigned",
      opts.assigneeId ?? null,
      opts.scheduledTime ?? null,
      opts.position ?? null,
      now,
      now,
    )
    .run();
  return { id, url: `${BASE}/tasks/${id}/` };
}

export async function taskRow(id: string) {
  return stored.prepare("SELECT * FROM tasks WHERE id = ?").bind(id).first<any>();
}

/** An admin acting on a task's object directly (tests of the apply path, not of the API). */
export const adminActor = (accountId: string, userId: string): Actor => ({
  userId,
  role: "admin",
  accountId,
  allowWorkerReordering: false,
  failedReasons: [],
  transitActiveLimit: 1,
});

/** A command as the API hands it to a task's object (validated, ids resolved). */
export const commandInput = (
  taskId: string,
  action: CommandInput["action"],
  taskData: Record<string, unknown> = {},
): CommandInput => ({
  id: uuidv7(),
  externalId: `apply-${crypto.randomUUID()}`,
  taskId,
  action,
  time: Date.now(),
  assigneeId: null,
  taskData,
  notes: "",
  location: null,
});
