import type { DispatchClient } from "../shared/api";
import { openStream } from "../shared/stream";

/**
 * Today follows the dispatcher live (contract §30): the account's stream (§25, a worker sees its
 * own tasks' events) says when one of the worker's tasks changed (an optimization applied, an
 * auto-assign, a dispatcher's move), and the day is read again a moment later, one read for a
 * burst of events. The phone's own actions come back as events too; they change states, not
 * the order, so only a changed order is told.
 */
const TYPES = ["task.created", "task.updated", "task.state_changed", "task.deleted", "task_command.accepted"];
const SETTLE_MS = 800;

let current: { close: () => void } | null = null;
let timer: ReturnType<typeof setTimeout> | undefined;

export function follow(client: DispatchClient, refresh: () => Promise<void>) {
  unfollow();
  current = openStream(client, {
    types: TYPES,
    onStatus: () => {},
    onEvent: () => {
      clearTimeout(timer);
      timer = setTimeout(() => void refresh(), SETTLE_MS);
    },
  });
}

export function unfollow() {
  clearTimeout(timer);
  current?.close();
  current = null;
}
