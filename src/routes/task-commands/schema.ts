import { z } from "@hono/zod-openapi";
import { TASK_ACTIONS } from "../../domain/task-state-machine";
import { link, type RenderCtx, ts } from "../../http/serialize";
import { TaskCommandInputSchema } from "../../services/task-commands";
import type { CommandRow } from "../../services/task-commands/types";

export const TaskCommandSchema = TaskCommandInputSchema.extend({
  id: z.string().uuid(),
  url: z.string().url(),
  account: z.string().url(),
  user: z
    .string()
    .url()
    .nullable()
    .openapi({ description: "Issuing user; null for moves made by the system (scheduled time)." }),
  assignee: z.string().url().nullable(),
  task_data: z.record(z.string(), z.any()).openapi({ description: "`{}` when not sent." }),
  notes: z.string().openapi({ description: '`""` when not sent.' }),
  state: z.enum(["pending", "accepted", "rejected"]),
  error_message: z
    .string()
    .openapi({ description: "Empty when accepted; names the state and the action for an invalid move." }),
  accepted_at: z.string().nullable(),
  rejected_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
}).openapi("TaskCommand");

export const TaskCommandBodySchema = z
  .union([
    TaskCommandInputSchema,
    z.array(TaskCommandInputSchema).max(500, "Too many commands: at most 500 per request."),
  ])
  .openapi({ description: "One command, or an array (a batch) of up to 500, for one or several tasks." });

export const TaskCommandListQuery = z
  .object({
    task: z.string().optional().openapi({ description: "Task URL or id." }),
    state: z.enum(["pending", "accepted", "rejected"]).optional(),
    action: z.enum(TASK_ACTIONS).optional(),
    user: z.string().optional().openapi({ description: "User URL or id." }),
    created_at__gte: z.string().optional(),
  })
  .strict();

export function serializeCommand(r: RenderCtx, c: CommandRow) {
  const taskData = JSON.parse(c.task_data || "{}");
  if (typeof taskData.scheduled_time === "number") taskData.scheduled_time = ts(r, taskData.scheduled_time);
  return {
    id: c.id,
    url: link(r, "task_commands", c.id),
    account: link(r, "accounts", c.account_id),
    task: link(r, "tasks", c.task_id),
    user: link(r, "users", c.user_id),
    external_id: c.external_id,
    time: ts(r, c.time),
    action: c.action,
    assignee: link(r, "users", c.assignee_id),
    task_data: taskData,
    notes: c.notes ?? "",
    location: c.location ? JSON.parse(c.location) : null,
    state: c.state,
    error_message: c.error_message ?? "",
    accepted_at: ts(r, c.accepted_at),
    rejected_at: ts(r, c.rejected_at),
    created_at: ts(r, c.created_at),
    updated_at: ts(r, c.updated_at),
  };
}
