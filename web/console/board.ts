/**
 * The day board's pure parts (contract §26): which tasks are on the day, which lane each is in
 * and in what order, how an event of the stream (contract §25) changes the set, and which
 * commands a move is. No DOM, no network: unit-tested in test/web/board.test.ts.
 */

/** The fields of a task the board reads (the API's Task has more). */
export type BoardTask = {
  id: string;
  url: string;
  state: string;
  assignee: string | null;
  position: number | null;
  complete_after: string | null;
  complete_before: string | null;
  scheduled_time: string | null;
  updated_at: string;
  address: { raw_address: string; formatted_address?: string | null; location?: unknown } | null;
  contact?: { name?: string; phones?: string[] } | null;
};

export type Day = { start: number; end: number };

export const UNASSIGNED = "unassigned";

const ms = (s: string | null) => (s ? Date.parse(s) : null);

/**
 * On the day as the API's `day` filter says (a window meeting the day, one end alone counting as
 * its instant, or a scheduled time in it), or an undated unassigned task, which the board lists
 * under Unassigned whatever the day.
 */
export function onDay(t: BoardTask, day: Day): boolean {
  const a = ms(t.complete_after);
  const b = ms(t.complete_before);
  const s = ms(t.scheduled_time);
  if (a === null && b === null && s === null) return t.state === "unassigned";
  if (a !== null || b !== null) {
    const from = a ?? b!;
    const to = b ?? a!;
    if (from < day.end && to >= day.start) return true;
  }
  return s !== null && s >= day.start && s < day.end;
}

/** The lane a task shows in: its assignee's URL, or Unassigned. */
export const laneOf = (t: BoardTask) => t.assignee ?? UNASSIGNED;

/** Route order: position, then the window's start, then id (stable for equal positions). */
export function routeOrder(a: BoardTask, b: BoardTask): number {
  const pa = a.position ?? Number.POSITIVE_INFINITY;
  const pb = b.position ?? Number.POSITIVE_INFINITY;
  if (pa !== pb) return pa < pb ? -1 : 1;
  const wa = ms(a.complete_after) ?? Number.POSITIVE_INFINITY;
  const wb = ms(b.complete_after) ?? Number.POSITIVE_INFINITY;
  if (wa !== wb) return wa < wb ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export type Filter = { search: string; state: string };

/** What the searchbox and the state filter keep (contract §26): address, contact, state. */
export function matches(t: BoardTask, f: Filter): boolean {
  if (f.state && t.state !== f.state) return false;
  if (!f.search) return true;
  const q = f.search.toLocaleLowerCase();
  const hay = [
    t.address?.formatted_address,
    t.address?.raw_address,
    t.contact?.name,
    ...(t.contact?.phones ?? []),
  ]
    .filter(Boolean)
    .join(" ")
    .toLocaleLowerCase();
  return hay.includes(q);
}

/** The lanes of the board: Unassigned first, then each worker's, every one in route order. */
export function lanes<T extends BoardTask>(
  tasks: Iterable<T>,
  workers: string[],
  day: Day,
  filter: Filter,
): Map<string, T[]> {
  const out = new Map<string, T[]>([[UNASSIGNED, []]]);
  for (const w of workers) out.set(w, []);
  for (const t of tasks) {
    if (!onDay(t, day) || !matches(t, filter)) continue;
    // A task of a worker not shown (inactive, not a worker) is left out rather than misfiled.
    out.get(laneOf(t))?.push(t);
  }
  for (const list of out.values()) list.sort(routeOrder);
  return out;
}

/**
 * The new lanes with each unchanged lane's previous array kept (same tasks, same objects, same
 * order), so a view that compares by identity redraws only the lanes a change touched.
 */
export function keepUnchanged<T>(prev: Map<string, T[]> | null, next: Map<string, T[]>): Map<string, T[]> {
  if (!prev) return next;
  for (const [lane, list] of next) {
    const old = prev.get(lane);
    if (old && old.length === list.length && old.every((t, i) => t === list[i])) next.set(lane, old);
  }
  return next;
}

/**
 * A stream event applied to the task set (contract §25). Task events carry the task; command
 * events carry it under `task`. A task is replaced only by a version at least as new as the
 * one held, so a replayed or late event never winds the board back.
 */
export function applyEvent<T extends BoardTask>(
  tasks: Map<string, T>,
  e: { type: string; data: any },
): Map<string, T> | null {
  if (e.type === "task.deleted") {
    const id = e.data?.id;
    if (!id || !tasks.has(id)) return null;
    const next = new Map(tasks);
    next.delete(id);
    return next;
  }
  const t: T | undefined = e.type.startsWith("task_command.")
    ? e.data?.task
    : e.type.startsWith("task.")
      ? e.data
      : undefined;
  if (!t?.id) return null;
  const held = tasks.get(t.id);
  if (held && Date.parse(held.updated_at) > Date.parse(t.updated_at)) return null;
  const next = new Map(tasks);
  // Events carry the task as written, without the ETA that reads compute (contract §28): the
  // one held is kept until the next read of the day's list brings a fresh one.
  const eta = held as { eta?: unknown; is_late?: unknown } | undefined;
  next.set(t.id, eta && !("eta" in t) ? { ...t, eta: eta.eta, is_late: eta.is_late } : t);
  return next;
}

/** One task command as the API takes it (interface §2.7). */
export type Command = {
  task: string;
  action: "assign" | "reassign" | "unassign" | "update";
  external_id: string;
  time: string;
  assignee?: string;
  task_data?: { position: number };
};

/**
 * The commands that move `task` into `lane` at `index` of that lane's current list (the task
 * itself left out of it): an assign or reassign, then its position between its new neighbours.
 * A position is a number, so the move writes one task, not its whole lane; only when the
 * neighbours have no positions yet is the lane numbered 1…n, each task a command of one batch.
 */
export function moveCommands(
  task: BoardTask,
  lane: string,
  list: BoardTask[],
  index: number,
  newId: () => string,
  now = new Date().toISOString(),
): { commands: Command[]; positions: Map<string, number | null>; assignee: string | null } {
  const others = list.filter((t) => t.id !== task.id);
  const i = Math.max(0, Math.min(index, others.length));
  const commands: Command[] = [];
  const positions = new Map<string, number | null>();
  const cmd = (t: BoardTask, action: Command["action"], extra: Partial<Command> = {}) =>
    commands.push({ task: t.url, action, external_id: newId(), time: now, ...extra });

  if (lane === UNASSIGNED) {
    if (task.assignee) cmd(task, "unassign");
    return { commands, positions, assignee: null };
  }
  const before = others[i - 1];
  const after = others[i];
  let position: number | null = null;
  const numbered = others.every((t) => t.position !== null);
  if (numbered) {
    const lo = before?.position ?? null;
    const hi = after?.position ?? null;
    position = lo === null && hi === null ? 1 : lo === null ? hi! - 1 : hi === null ? lo + 1 : (lo + hi) / 2;
  }
  const reassign = task.assignee !== null && task.assignee !== lane;
  const fresh = task.assignee === null;
  if (position !== null) {
    if (reassign) cmd(task, "reassign", { assignee: lane, task_data: { position } });
    else {
      if (fresh) cmd(task, "assign", { assignee: lane });
      cmd(task, "update", { task_data: { position } });
    }
    positions.set(task.id, position);
  } else {
    const order = [...others.slice(0, i), task, ...others.slice(i)];
    if (reassign) cmd(task, "reassign", { assignee: lane, task_data: { position: i + 1 } });
    else if (fresh) cmd(task, "assign", { assignee: lane });
    order.forEach((t, k) => {
      if (t.id === task.id && reassign) {
        positions.set(t.id, k + 1);
        return;
      }
      if (t.position !== k + 1) cmd(t, "update", { task_data: { position: k + 1 } });
      positions.set(t.id, k + 1);
    });
  }
  return { commands, positions, assignee: lane };
}
