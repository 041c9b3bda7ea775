import type { FormSnapshot } from "./forms";
import {
  attachmentVisibleToWorker,
  type HiddenFields,
  hiddenKeysOfSnapshot,
  responseForReader,
  taskForWorker,
} from "./worker-view";

/**
 * What the live stream (contract §25) shows to whom: each event rendered for the viewer's role
 * as the API would answer that viewer's `GET` of the object (contract §2 role rules, not a
 * tracker's allowlist), with the same rules (domain/worker-view.ts), or nothing where that `GET`
 * is 404. Admins, managers and integrations see every event of the account as stored. A worker:
 * - `task.*`: tasks assigned to it, without hidden form fields' defaults;
 * - `task_command.*`: the commands it sent (`GET /task_commands/` lists only those), the task
 *   inline only while it is assigned to it (else its URL, as the command's `GET` has it);
 * - `document.*`, `signature.*`: those `visible_to_worker` on tasks assigned to it;
 * - `form_response.completed`: responses of tasks assigned to it, without hidden fields' keys;
 * - nothing of orders, users or other workers' tasks.
 * Pure: the stream's Durable Object and the tests use it alike.
 */
export type LiveViewer = { userId: string; role: string };

type Data = Record<string, unknown>;

const userIdOf = (url: unknown) =>
  typeof url === "string" ? /\/users\/([^/]+)\/?$/.exec(url)?.[1] : undefined;

const isTask = (v: unknown): v is Data => !!v && typeof v === "object";

const sees = (viewer: LiveViewer) => viewer.role !== "worker";

/**
 * The event's `data` as `viewer` may see it, or null when it may not see the event at all.
 * `hidden`: the account's form fields hidden from workers (needed for workers only).
 */
export function eventForViewer(
  viewer: LiveViewer,
  type: string,
  data: Data,
  hidden: HiddenFields,
): Data | null {
  if (sees(viewer)) return data;
  const mine = (task: unknown) => isTask(task) && userIdOf(task.assignee) === viewer.userId;
  const inlineTask = (d: Data): Data => (isTask(d.task) ? { ...d, task: taskForWorker(d.task, hidden) } : d);
  if (type.startsWith("task.")) return mine(data) ? taskForWorker(data, hidden) : null;
  if (type.startsWith("task_command.")) {
    if (userIdOf(data.user) !== viewer.userId) return null;
    if (isTask(data.task) && !mine(data.task)) return { ...data, task: data.task.url ?? null };
    return inlineTask(data);
  }
  if (type.startsWith("document.") || type.startsWith("signature.")) {
    return mine(data.task) && attachmentVisibleToWorker(data) ? inlineTask(data) : null;
  }
  if (type === "form_response.completed") {
    if (!mine(data.task)) return null;
    const response = data as Data & { data: Data; schema_snapshot: FormSnapshot | null };
    return inlineTask(responseForReader(response, hiddenKeysOfSnapshot(response.schema_snapshot)));
  }
  return null;
}

/**
 * What a worker's stream carries of an event (contract §25, §30): `eventForViewer`'s, and one
 * more. A dispatcher's accepted command on the worker's own task (a re-plan's new position, a
 * move in the console) is not the worker's to read (its GET is 404), but the change is: it
 * arrives as `task.updated`, the task as the worker reads it, under the command's event id, so a
 * phone's day follows the dispatcher live.
 */
export function workerView(
  viewer: LiveViewer,
  type: string,
  data: Data,
  hidden: HiddenFields,
): { type: string; data: Data } | null {
  const shown = eventForViewer(viewer, type, data, hidden);
  if (shown) return { type, data: shown };
  const task = data.task;
  if (type === "task_command.accepted" && isTask(task) && userIdOf(task.assignee) === viewer.userId)
    return { type: "task.updated", data: taskForWorker(task, hidden) };
  return null;
}

/** The task ids an event concerns (for trackers, which follow tasks). */
export function taskIdsOf(type: string, data: Data): string[] {
  if (type.startsWith("task.")) return typeof data.id === "string" ? [data.id] : [];
  const task = data.task as Data | null | undefined;
  return task && typeof task.id === "string" ? [task.id] : [];
}

/** The longest frame a client has reason to send (`ping`), with room to spare (bytes, UTF-16 units). */
export const MAX_CLIENT_FRAME = 1024;

/**
 * What the stream does with a frame from its client: answer `ping`, ignore other short text
 * (room for later verbs), or close with RFC 6455 §7.4.1's code for what it got: 1003 for a
 * binary frame (a kind of data it cannot accept), 1009 for one too big to process, 1007 for text
 * that was not valid UTF-8 (the runtime hands it over with U+FFFD in place of the bad bytes; no
 * client of ours sends that character).
 */
export function clientFrame(message: string | ArrayBuffer): "pong" | { code: number; reason: string } | null {
  if (typeof message !== "string") return { code: 1003, reason: "Binary frames are not accepted." };
  if (message.length > MAX_CLIENT_FRAME) return { code: 1009, reason: "Message too big." };
  if (message.includes("\uFFFD")) return { code: 1007, reason: "Text frames must be valid UTF-8." };
  return message === "ping" ? "pong" : null;
}
