/**
 * What the live stream (contract §25) shows to whom: the role rules of contract §2, as the API
 * applies them (not a tracker's allowlist). Admins, managers and integrations see every event of
 * the account; a worker only those of tasks assigned to it (a task event, a command on the task,
 * a document or signature on it, a form response of it); nothing of orders, users or other
 * workers' tasks. Pure: the stream's Durable Object and the tests use it alike.
 */
export type LiveViewer = { userId: string; role: string };

const userIdOf = (url: unknown) =>
  typeof url === "string" ? /\/users\/([^/]+)\/?$/.exec(url)?.[1] : undefined;

/** The assignee (user id) of the task an event concerns, or undefined for events of no task. */
export function taskAssigneeOf(type: string, data: Record<string, unknown>): string | null | undefined {
  if (type.startsWith("task.")) return userIdOf(data.assignee) ?? null;
  const task = data.task as Record<string, unknown> | null | undefined;
  if (task && typeof task === "object") return userIdOf(task.assignee) ?? null;
  return undefined;
}

export function visibleTo(viewer: LiveViewer, type: string, data: Record<string, unknown>): boolean {
  if (viewer.role !== "worker") return true;
  const assignee = taskAssigneeOf(type, data);
  return assignee !== undefined && assignee !== null && assignee === viewer.userId;
}

/** The task ids an event concerns (for trackers, which follow tasks). */
export function taskIdsOf(type: string, data: Record<string, unknown>): string[] {
  if (type.startsWith("task.")) return typeof data.id === "string" ? [data.id] : [];
  const task = data.task as Record<string, unknown> | null | undefined;
  return task && typeof task.id === "string" ? [task.id] : [];
}
