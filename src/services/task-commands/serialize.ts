import { link, type RenderCtx, ts } from "../../http/serialize";
import type { CommandRow } from "./types";

/** The TaskCommand of interface §2.6 (in the service: events render it too). */
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
