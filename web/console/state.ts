import { batch, computed, signal } from "@preact/signals";
import {
  apiClient,
  type DispatchClient,
  errorMessage,
  idOf,
  listAll,
  type Task,
  type User,
} from "../shared/api";
import { dayRange, todayIn } from "../shared/format";
import { t } from "../shared/i18n";
import { setToken, signInReason, token } from "../shared/session";
import { openStream, type StreamStatus } from "../shared/stream";
import { applyEvent, type Command, keepUnchanged, lanes, moveCommands, UNASSIGNED } from "./board";

/** Who is signed in, in which account and zone; null until known. */
export type Session = { client: DispatchClient; me: User; zone: string; account: string };

export const session = signal<Session | null>(null);
export const notYours = signal<string | null>(null);
export const workers = signal<User[]>([]);
export const tasks = signal<Map<string, Task>>(new Map());
export const date = signal<string>("");
export const search = signal("");
export const stateFilter = signal("");
export const streamStatus = signal<StreamStatus>("connecting");
export const loading = signal(false);
/** The board's last message (role `status`): a refused move, a created task. */
export const notice = signal<{ text: string; error: boolean } | null>(null);
export const selected = signal<string | null>(null);
/** Workers' latest positions by user URL (contract §28): from `GET /users/`, then `worker.position`. */
export type Fix = { lon: number; lat: number; time: string };
export const positions = signal<Map<string, Fix>>(new Map());
/** Workers' duty by user URL (contract §28): `GET /account_roles/`, then `worker.duty_changed`. */
export const duty = signal<Map<string, boolean>>(new Map());
/** The worker whose region a marker on the map selected (its lane is scrolled to and focused). */
export const selectedWorker = signal<string | null>(null);
/** The shown day's late tasks (contract §30: the status "N late"). */
export const lateCount = computed(() => {
  let n = 0;
  for (const list of board.value.values()) for (const task of list) if (task.is_late) n++;
  return n;
});
/** When the day's data arrived and when the board was first usable (the bench reads both). */
export const timings = { dataAt: 0, renderedAt: 0 };
(window as unknown as { __consoleTimings: typeof timings }).__consoleTimings = timings;

export const day = computed(() =>
  date.value && session.value ? dayRange(date.value, session.value.zone) : null,
);
let lastBoard: Map<string, Task[]> | null = null;
export const board = computed(() => {
  const next = day.value
    ? lanes<Task>(
        tasks.value.values(),
        workers.value.map((w) => w.url),
        day.value,
        { search: search.value.trim(), state: stateFilter.value },
      )
    : new Map<string, Task[]>();
  lastBoard = keepUnchanged(lastBoard, next);
  return lastBoard;
});
export const workerName = (url: string) => workers.value.find((w) => w.url === url)?.name ?? url;

let stream: ReturnType<typeof openStream> | null = null;

/** A 401 anywhere: back to sign-in with the reason (contract §26). */
function expired(why: string) {
  endSession(why || t("signin.expired"));
}

function endSession(reason: string) {
  stream?.close();
  stream = null;
  batch(() => {
    setToken(null);
    session.value = null;
    notYours.value = null;
    tasks.value = new Map();
    workers.value = [];
    signInReason.value = reason;
  });
}

export async function signIn(email: string, password: string): Promise<string | null> {
  const anon = apiClient(null);
  const r = await anon.POST("/authenticate/", { body: { username: email, password } });
  if (!r.data) return errorMessage(r.error, t("signin.failed"));
  setToken((r.data as { token: string }).token);
  signInReason.value = "";
  await start();
  return null;
}

export async function signOut() {
  const s = session.value;
  const client = s?.client ?? apiClient(token.value);
  await client.POST("/logout/").catch(() => {});
  endSession(t("signin.signedOut"));
}

/** After sign-in (or a reload with a kept token): who am I, and the day if I am a dispatcher. */
export async function start() {
  if (!token.value) return;
  const bare = apiClient(token.value, { onUnauthorized: expired });
  const me = await bare.GET("/users/me/");
  if (!me.data) return;
  const role = me.data.role;
  if (role !== "admin" && role !== "manager") {
    // Contract §26: a worker or an integration user is told where to go, and nothing else; the
    // token it signed in with is revoked at once (issue 52 item 4), as the field app does for an
    // integration user, so no live token stays in sessionStorage for a console it cannot use.
    await bare.POST("/logout/").catch(() => {});
    batch(() => {
      setToken(null);
      notYours.value = role ?? "";
      session.value = null;
    });
    return;
  }
  const accountId = idOf(me.data.account ?? "");
  const account = await bare.GET("/accounts/{id}/", { params: { path: { id: accountId } } });
  const zone = (account.data as { timezone?: string } | undefined)?.timezone ?? "UTC";
  const client = apiClient(token.value, { zone, onUnauthorized: expired });
  batch(() => {
    session.value = { client, me: me.data!, zone, account: me.data!.account ?? "" };
    date.value ||= todayIn(zone);
  });
  stream?.close();
  stream = openStream(client, {
    types: [
      "task.created",
      "task.updated",
      "task.state_changed",
      "task.deleted",
      "task_command.accepted",
      "task.late",
      "worker.position",
      "worker.duty_changed",
    ],
    onStatus: (s) => {
      streamStatus.value = s;
    },
    onEvent: (e) => {
      if (e.type === "worker.position") {
        const [lon, lat] = e.data.location.coordinates;
        movePin(e.data.user, { lon, lat, time: e.data.time });
        etasSoon();
        return;
      }
      if (e.type === "worker.duty_changed") {
        duty.value = new Map(duty.value).set(e.data.user, e.data.on_duty);
        return;
      }
      if (e.type === "task.late") {
        const id = idOf(e.data.task);
        const held = tasks.value.get(id);
        if (held) tasks.value = new Map(tasks.value).set(id, { ...held, eta: e.data.eta, is_late: true });
        return;
      }
      const next = applyEvent(tasks.value, e);
      if (next) tasks.value = next;
      etasSoon();
    },
  });
  (window as unknown as { __consoleStream: unknown }).__consoleStream = stream;
  await loadDay();
}

/**
 * The day in a handful of calls (contract §26, docs/api.md): the active workers, the day's tasks
 * by `day` in pages of 500, and the undated unassigned. The stream is already open, so a change
 * made while these load is applied on top (newest `updated_at` wins).
 */
export async function loadDay() {
  const s = session.value;
  if (!s || !date.value) return;
  loading.value = true;
  const c = s.client;
  try {
    const [ws, roles, dayTasks, undated] = await Promise.all([
      listAll<User>(
        () => c.GET("/users/", { params: { query: { role: "worker", page_size: 500 } } }) as never,
        c,
      ),
      listAll<{ user: string; on_duty: boolean }>(
        () => c.GET("/account_roles/", { params: { query: { role: "worker", page_size: 500 } } }) as never,
        c,
      ),
      dayList(c),
      listAll<Task>(
        () =>
          c.GET("/tasks/", {
            params: { query: { undated: "true", state: "unassigned", page_size: 500 } },
          }) as never,
        c,
      ),
    ]);
    const map = new Map<string, Task>();
    for (const task of [...dayTasks, ...undated]) map.set(task.id, task);
    // Events that came while loading are newer than or equal to what the lists returned.
    for (const [id, held] of tasks.value) {
      const got = map.get(id);
      if (got && Date.parse(held.updated_at) > Date.parse(got.updated_at)) map.set(id, held);
    }
    timings.dataAt = performance.now();
    batch(() => {
      workers.value = ws.filter((w) => w.is_active !== false).sort((a, b) => a.name.localeCompare(b.name));
      tasks.value = map;
      duty.value = new Map(roles.map((r) => [r.user, r.on_duty]));
      const fixes = new Map<string, Fix>();
      for (const w of ws) {
        const p = w.position;
        if (p)
          fixes.set(w.url, { lon: p.location.coordinates[0], lat: p.location.coordinates[1], time: p.time });
      }
      positions.value = fixes;
    });
  } catch (err) {
    notice.value = { text: String((err as Error).message), error: true };
  } finally {
    loading.value = false;
  }
}

/** The shown day's tasks, in route order: one list call (pages of 500), ETAs included. */
const dayList = (c: DispatchClient) =>
  listAll<Task>(
    () =>
      c.GET("/tasks/", {
        params: { query: { day: date.value, page_size: 500, ordering: "position" } },
      }) as never,
    c,
  );

/**
 * Positions arrive by the hundred a second with hundreds of workers on duty: they are gathered
 * and applied once per frame (one new map, one layout of the markers), not once per message.
 * A hidden page paints no frames, so a timer applies them too.
 */
const heldFixes = new Map<string, Fix>();
let fixFrame = 0;
let fixTimer: ReturnType<typeof setTimeout> | undefined;
function movePin(user: string, fix: Fix) {
  heldFixes.set(user, fix);
  if (fixFrame) return;
  fixFrame = requestAnimationFrame(applyFixes);
  fixTimer = setTimeout(applyFixes, 250);
}
function applyFixes() {
  cancelAnimationFrame(fixFrame);
  clearTimeout(fixTimer);
  fixFrame = 0;
  if (!heldFixes.size) return;
  const next = new Map(positions.value);
  for (const [user, fix] of heldFixes) next.set(user, fix);
  heldFixes.clear();
  positions.value = next;
}

/**
 * ETAs move with positions and with every change of a worker's list: the day's list is read
 * again (its `eta` and `is_late`, contract §28) a few seconds after such news, at most every
 * ETA_REFRESH_MS however much news comes, and every minute while nothing comes (time alone
 * moves them). Only those two fields are taken: the stream keeps the rest current.
 */
const ETA_REFRESH_MS = 10_000;
let etaTimer: ReturnType<typeof setTimeout> | undefined;
let etaDue = 0;
let etaLast = 0;
export function etasSoon(delay = 2000) {
  const due = Math.max(Date.now() + delay, etaLast + ETA_REFRESH_MS);
  // A read already due sooner stands; the minute's idle read is brought forward by news.
  if (etaTimer && etaDue <= due) return;
  clearTimeout(etaTimer);
  etaDue = due;
  etaTimer = setTimeout(refreshEtas, due - Date.now());
}

async function refreshEtas() {
  etaTimer = undefined;
  etaLast = Date.now();
  const s = session.value;
  if (!s || !date.value) return;
  try {
    const list = await dayList(s.client);
    const next = new Map(tasks.value);
    let changed = false;
    for (const fresh of list) {
      const held = next.get(fresh.id);
      if (held && (held.eta !== fresh.eta || held.is_late !== fresh.is_late)) {
        next.set(fresh.id, { ...held, eta: fresh.eta, is_late: fresh.is_late });
        changed = true;
      }
    }
    // Unchanged ETAs leave the board as it is (no lane drawn again).
    if (changed) tasks.value = next;
  } catch {}
  if (!etaTimer) {
    etaDue = Date.now() + 60_000;
    etaTimer = setTimeout(refreshEtas, 60_000);
  }
}

const newId = () => `console-${crypto.randomUUID()}`;

/**
 * A move as task commands (contract §26): shown at once, sent as one batch with fresh
 * `external_id`s (a retry after a lost answer applies nothing twice, contract §6), rolled back
 * with the API's message when any is refused.
 */
export async function moveTask(taskId: string, lane: string, index: number) {
  const s = session.value;
  const task = tasks.value.get(taskId);
  if (!s || !task) return;
  const list = board.value.get(lane) ?? [];
  const { commands, positions, assignee } = moveCommands(task, lane, list, index, newId);
  if (!commands.length) return;
  const before = new Map<string, Task>();
  const next = new Map(tasks.value);
  const ids = new Set([taskId, ...positions.keys()]);
  for (const id of ids) {
    const held = next.get(id);
    if (!held) continue;
    before.set(id, held);
    const changed: Task = { ...held };
    if (id === taskId) {
      changed.assignee = assignee;
      if (lane === UNASSIGNED) changed.state = "unassigned";
      else if (held.state === "unassigned" || held.state === "draft") changed.state = "assigned";
    }
    if (positions.has(id)) changed.position = positions.get(id) ?? null;
    next.set(id, changed);
  }
  tasks.value = next;
  const reason = await send(s.client, commands);
  if (reason === null) {
    notice.value = { text: t("move.done"), error: false };
    return;
  }
  // Roll back what is still ours: a newer version from the stream stays.
  const now = new Map(tasks.value);
  for (const [id, old] of before) {
    if (now.get(id)?.updated_at === old.updated_at) now.set(id, old);
  }
  tasks.value = now;
  notice.value = { text: t("move.refused", { reason }), error: true };
}

/** Sends one batch; null when every command was accepted, else the API's first reason. */
async function send(client: DispatchClient, commands: Command[]): Promise<string | null> {
  for (let attempt = 0; ; attempt++) {
    try {
      const r = await client.POST("/task_commands/", { body: commands as never });
      if (!r.data) return errorMessage(r.error, "HTTP error");
      const list = (Array.isArray(r.data) ? r.data : [r.data]) as {
        state: string;
        error_message?: string | null;
      }[];
      const refused = list.find((c) => c.state === "rejected");
      return refused ? (refused.error_message ?? "rejected") : null;
    } catch (err) {
      // The same external_ids again: what was applied is returned, not applied twice.
      if (attempt >= 2) return String((err as Error).message);
      await new Promise((r) => setTimeout(r, 500 * (attempt + 1)));
    }
  }
}
