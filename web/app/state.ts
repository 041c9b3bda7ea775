import { batch, computed, signal } from "@preact/signals";
import { IN_FILTER_MAX } from "../../src/domain/list-filters";
import { ALLOWED, type TaskAction, type TaskState } from "../../src/domain/task-state-machine";
import { apiClient, type DispatchClient, errorMessage, idOf, listAll, type Task } from "../shared/api";
import { firstLine, todayIn } from "../shared/format";
import type { FormDef, FormField, PendingForm } from "./forms";
import { follow, unfollow } from "./live";
import { tf } from "./locales";
import { orderChanged } from "./order";
import {
  countByUser,
  type FormFill,
  KEEP_DAYS,
  newExternalId,
  type Owner,
  oneAtATime,
  type QueuedAction,
  toDiscard,
  type Upload,
  waitingCount,
} from "./outbox";
import {
  DISCARDED,
  dropUnkeyedDay,
  endSession,
  enqueue,
  getDay,
  getKv,
  queue,
  queueOf,
  removeAction,
  removeActions,
  setDay,
  setKv,
} from "./store";
import { syncOnce } from "./sync";

/** The signed-in worker and what the app needs of the account, kept for offline starts. */
export type Session = {
  token: string;
  me: { url: string; id: string; name: string; role: string };
  /** The user's account role (`GET /users/me/` `account_role`), where its duty is set (contract §28). */
  roleUrl?: string | null;
  account: {
    url: string;
    timezone: string;
    failed_reasons: string[];
    feature_signer_name: boolean;
  };
};

/** The user and account a session is, as queued actions and the kept day name them (issue 52). */
export const ownerOf = (s: Session): Owner => ({ user: s.me.url, account: s.account.url });

export type Doc = { id: string; file: string; file_name: string; description: string; mimetype: string };
export type Metafield = { key: string; label: string; value_type: string; choices: string[] };

export const session = signal<Session | null>(null);
export const started = signal(false);
export const notYours = signal<string | null>(null);
export const signInReason = signal("");
export const tasks = signal<Task[]>([]);
export const documents = signal<Record<string, Doc[]>>({});
export const requiredMetafields = signal<Metafield[]>([]);
/** By task id: the forms its "Complete" asks for (no completed response yet), kept for offline. */
export const taskForms = signal<Record<string, PendingForm[]>>({});
export const actions = signal<QueuedAction[]>([]);
export const online = signal(navigator.onLine);
export const openTaskId = signal<string | null>(null);
export const sharePosition = signal(false);
/** The worker's duty (contract §28, §30): positions are recorded and sent only while on duty. */
export const onDuty = signal(false);
/** The duty switch's last error (offline, refused), shown beside it. */
export const dutyError = signal("");
/** Told once after sign-in: this user's actions discarded unsent after KEEP_DAYS. */
export const notice = signal("");
/** Said when the dispatcher's changes moved the order of the day's stops (contract §30). */
export const orderNotice = signal("");
/** When the day's list was first shown (the bench reads it). */
export const timings = { listAt: 0 };

export const waiting = computed(() => waitingCount(actions.value));
export const statusText = computed(() =>
  waiting.value ? tf("status.waiting", { n: waiting.value }) : tf("status.allSent"),
);
export const refusedOf = (taskUrl: string) =>
  actions.value.filter((a) => a.task === taskUrl && a.state === "refused");

let client: DispatchClient | null = null;
/**
 * Counts session changes: work begun for one session (a refresh, a sync pass, a late 401 of its
 * requests) writes nothing and ends no one's session once that session has ended.
 */
let epoch = 0;
let position: [number, number] | null = null;
let watch: number | null = null;

/** The state an action leads to (contract §5), for showing it at once, before it is sent. */
const TARGET: Partial<Record<TaskAction, TaskState>> = {
  accept: "accepted",
  transit: "transit",
  activate: "active",
  complete: "completed",
  fail: "failed",
};

/** The buttons of contract §27 the task's state allows, in the order a visit goes. */
export const BUTTONS: {
  action: TaskAction;
  label: "action.accept" | "action.start" | "action.arrived" | "action.complete" | "action.fail";
}[] = [
  { action: "accept", label: "action.accept" },
  { action: "transit", label: "action.start" },
  { action: "activate", label: "action.arrived" },
  { action: "complete", label: "action.complete" },
  { action: "fail", label: "action.fail" },
];

export const allowed = (task: Task, action: TaskAction) =>
  (ALLOWED[action] as readonly string[]).includes(task.state as string);

export { firstLine };

function expired() {
  void forget(tf("signin.expired"));
}

/**
 * A session's end (a 401, sign-out): nothing of its user stays readable, in memory or in
 * IndexedDB (the day, the session, the position choice); the queue stays, its user's only, for
 * their next sign-in (issue 52 items 1 and 2, docs/field-app.md).
 */
async function forget(reason: string) {
  epoch++;
  unfollow();
  client = null;
  stopWatch();
  batch(() => {
    session.value = null;
    tasks.value = [];
    documents.value = {};
    requiredMetafields.value = [];
    taskForms.value = {};
    actions.value = [];
    openTaskId.value = null;
    sharePosition.value = false;
    onDuty.value = false;
    dutyError.value = "";
    notice.value = "";
    orderNotice.value = "";
    signInReason.value = reason;
  });
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  await endSession();
}

function connect(s: Session) {
  const mine = epoch;
  // A 401 of this session's requests ends this session only, not a later one's.
  client = apiClient(s.token, {
    zone: s.account.timezone,
    onUnauthorized: () => {
      if (mine === epoch) expired();
    },
  });
  follow(client, async () => {
    if (mine !== epoch) return;
    const before = tasks.value;
    await refresh();
    if (mine === epoch && orderChanged(before, tasks.value)) orderNotice.value = tf("order.changed");
  });
}

/**
 * Discards the actions past KEEP_DAYS but those of `keep`, the session that goes on (docs/field-app.md),
 * noting how many per user; answers how many of `tell`'s were discarded, and forgets that count.
 * At start, the kept session's actions wait on; at a sign-in, no session goes on (the user's own
 * old actions, from before their session ended, go too, and they are told at once).
 */
async function discardStale(keep: Owner | null, tell: Owner | null): Promise<number> {
  const gone = toDiscard(await queue(), keep, Date.now());
  const notices = countByUser(gone, (await getKv<Record<string, number>>(DISCARDED)) ?? {});
  if (gone.length) await removeActions(gone);
  const told = tell ? (notices[tell.user] ?? 0) : 0;
  if (tell) delete notices[tell.user];
  if (gone.length || told) await setKv(DISCARDED, notices);
  return told;
}

const discardedNotice = (n: number) => (n ? tf("discarded", { n, days: KEEP_DAYS }) : "");

export async function signIn(email: string, password: string): Promise<string | null> {
  if (!navigator.onLine) return tf("signin.offline");
  const anon = apiClient(null);
  let r: Awaited<ReturnType<typeof anon.POST>>;
  try {
    r = await anon.POST("/authenticate/", { body: { username: email, password } });
  } catch {
    return tf("signin.offline");
  }
  if (!r.data) return errorMessage(r.error, tf("signin.failed"));
  const token = (r.data as { token: string }).token;
  const bare = apiClient(token);
  const me = await bare.GET("/users/me/");
  if (!me.data) return errorMessage(me.error, tf("signin.failed"));
  const m = me.data as unknown as Session["me"] & { account: string };
  if (m.role === "integration") {
    notYours.value = m.role;
    await bare.POST("/logout/").catch(() => {});
    return null;
  }
  const acc = await bare.GET("/accounts/{id}/", { params: { path: { id: idOf(m.account) } } });
  const a = (acc.data ?? {}) as Partial<Session["account"]>;
  const duty = me.data as unknown as { account_role?: string; on_duty?: boolean };
  const s: Session = {
    token,
    roleUrl: duty.account_role ?? null,
    me: { url: m.url, id: m.id, name: m.name, role: m.role },
    account: {
      url: m.account,
      timezone: a.timezone ?? "UTC",
      failed_reasons: a.failed_reasons ?? [],
      feature_signer_name: Boolean(a.feature_signer_name),
    },
  };
  const owner = ownerOf(s);
  // Whatever a previous session left (its end clears it; this is the backstop), gone first.
  epoch++;
  await endSession();
  await setKv("session", s);
  const told = await discardStale(null, owner);
  const mine = await queueOf(owner);
  batch(() => {
    session.value = s;
    signInReason.value = "";
    notYours.value = null;
    tasks.value = [];
    documents.value = {};
    requiredMetafields.value = [];
    taskForms.value = {};
    actions.value = mine;
    notice.value = discardedNotice(told);
    onDuty.value = Boolean(duty.on_duty);
  });
  connect(s);
  await setKv("onDuty", onDuty.value);
  if (onDuty.value) startRecording();
  await refresh();
  void sync();
  return null;
}

/**
 * Sign-out revokes the token (`POST /logout/`) and forgets the phone's copy of this user's day and
 * their refused actions; never with their work unsent. Other users' queues stay.
 */
export async function signOut(): Promise<string | null> {
  if (waiting.value) return tf("signout.waiting", { n: waiting.value });
  const s = session.value;
  await client?.POST("/logout/").catch(() => {});
  if (s) await removeActions(await queueOf(ownerOf(s)));
  await forget("");
  return null;
}

/** At start: what the phone kept (shown at once, offline too), then the network's news. */
export async function start() {
  const s = (await getKv<Session | null>("session")) ?? null;
  const owner = s ? ownerOf(s) : null;
  await dropUnkeyedDay();
  const told = await discardStale(owner, owner);
  if (s && owner) {
    tasks.value = (await getDay<Task[]>(owner, "tasks")) ?? [];
    documents.value = (await getDay<Record<string, Doc[]>>(owner, "documents")) ?? {};
    requiredMetafields.value = (await getDay<Metafield[]>(owner, "metafields")) ?? [];
    taskForms.value = (await getDay<Record<string, PendingForm[]>>(owner, "taskForms")) ?? {};
    actions.value = await queueOf(owner);
    notice.value = discardedNotice(told);
    sharePosition.value = Boolean(await getKv<boolean>("sharePosition"));
    onDuty.value = Boolean(await getKv<boolean>("onDuty"));
    if (sharePosition.value || onDuty.value) watchPosition();
    session.value = s;
    connect(s);
  }
  openTaskId.value = location.hash.startsWith("#task/") ? location.hash.slice(6) : null;
  started.value = true;
  if (tasks.value.length) timings.listAt ||= performance.now();
  window.addEventListener("online", () => {
    online.value = true;
    // What the worker did goes first; the day is read after it, once (a sync that sent
    // positions has read it already).
    const before = refreshes;
    void sync().then(() => (refreshes === before ? refresh() : undefined));
  });
  window.addEventListener("offline", () => {
    online.value = false;
  });
  window.addEventListener("hashchange", () => {
    openTaskId.value = location.hash.startsWith("#task/") ? location.hash.slice(6) : null;
  });
  // Retries while something waits (a server that was busy, a network that came back unnoticed).
  setInterval(() => {
    if (waiting.value && navigator.onLine) void sync();
  }, 10_000);
  if (s && navigator.onLine) {
    await refresh();
    void sync();
  }
}

/** The day's tasks in route order, and what showing them offline needs. */
let refreshes = 0;
export async function refresh() {
  const s = session.value;
  const c = client;
  if (!s || !c || !navigator.onLine) return;
  refreshes++;
  const mineNow = epoch;
  const owner = ownerOf(s);
  // The session ended meanwhile (a 401, another user): what this refresh fetched is not shown.
  const ended = () => mineNow !== epoch;
  try {
    const day = todayIn(s.account.timezone);
    const query: Record<string, string | number> = { day, ordering: "position", page_size: 500 };
    // Dispatchers see the whole account: the app shows them their own tasks only (contract §27).
    if (s.me.role !== "worker") query.assignee = s.me.url;
    const r = await c.GET("/tasks/", { params: { query: query as never } });
    if (!r.data || ended()) return;
    const list = ((r.data as { results: Task[] }).results ?? []).slice();
    // What the phone did and the server has not heard of yet stays shown as done.
    const mine = new Map(
      (await queueOf(owner)).filter((a) => a.state === "waiting").map((a) => [a.task, a] as const),
    );
    if (ended()) return;
    const shown = list.map((t) => {
      const a = mine.get(t.url as string);
      const target = a ? TARGET[a.action as TaskAction] : undefined;
      return target ? { ...t, state: target } : t;
    });
    // The list first (a usable "Today" as soon as the day's tasks arrive), then what a task's
    // page and "Complete" need, in parallel.
    tasks.value = shown;
    timings.listAt ||= performance.now();
    await setDay(owner, "tasks", shown);
    const [mf, pending, docs] = await Promise.all([
      c.GET("/metafields/", { params: { query: { applies_to: "tasks", page_size: 500 } as never } }),
      formsOf(c, shown),
      byTask<Doc>(c, "/documents/", list),
    ]);
    const required = (
      (mf.data as { results?: (Metafield & { is_required_before_complete?: boolean })[] } | undefined)
        ?.results ?? []
    ).filter((m) => m.is_required_before_complete);
    if (ended()) return;
    batch(() => {
      documents.value = docs;
      requiredMetafields.value = required;
      taskForms.value = pending;
    });
    await Promise.all([
      setDay(owner, "documents", docs),
      setDay(owner, "metafields", required),
      setDay(owner, "taskForms", pending),
    ]);
  } catch {
    // Offline after all: what the phone kept stays shown.
  }
}

type ResponseRow = { task: string | null; form: string; state: string; data: Record<string, unknown> };

/**
 * The rows of `path` that belong to each of `list`'s tasks, by task id: a few requests for the
 * whole day (`task__in`, at most `IN_FILTER_MAX` tasks each, every page), not one per task.
 */
async function byTask<Row>(
  c: DispatchClient,
  path: "/documents/" | "/form_responses/",
  list: Task[],
): Promise<Record<string, Row[]>> {
  const out: Record<string, Row[]> = Object.fromEntries(list.map((t) => [t.id as string, []]));
  const ids = Object.keys(out);
  const chunks = Array.from({ length: Math.ceil(ids.length / IN_FILTER_MAX) }, (_, i) =>
    ids.slice(i * IN_FILTER_MAX, (i + 1) * IN_FILTER_MAX),
  );
  const pages = await Promise.all(
    chunks.map((chunk) =>
      listAll<Row & { task?: string | null }>(
        () =>
          c.GET(path, {
            params: { query: { task__in: chunk.join(","), page_size: 500 } as never },
          }) as never,
        c,
      ),
    ),
  );
  for (const row of pages.flat()) if (row.task) out[idOf(row.task)]?.push(row);
  return out;
}

/**
 * The forms each task's "Complete" asks for (a decision of this app, docs/field-app.md): those
 * the dispatcher gave the task, in its `form_default_values` or as a response of the task, that
 * have no completed response yet. Each starts from its draft's values, else from the form's
 * defaults overridden by the task's (as the API starts a new response, contract §15). Tasks
 * past completing ask for none.
 */
async function formsOf(c: DispatchClient, list: Task[]): Promise<Record<string, PendingForm[]>> {
  const open = list.filter((t) => !["completed", "failed", "cancelled"].includes(t.state as string));
  const responses = await byTask<ResponseRow>(c, "/form_responses/", open);
  const wanted = (t: Task) => {
    const given = Object.keys((t.form_default_values ?? {}) as Record<string, unknown>);
    return [...new Set([...given, ...responses[t.id as string].map((r) => idOf(r.form))])];
  };
  const ids = [...new Set(open.flatMap(wanted))];
  const defs = new Map<string, FormDef & { is_active: boolean }>();
  await Promise.all(
    ids.map(async (id) => {
      const [form, fields] = await Promise.all([
        c.GET("/forms/{id}/", { params: { path: { id } } }),
        c.GET("/form_fields/", { params: { query: { form: id, page_size: 500 } as never } }),
      ]);
      if (!form.data || !fields.data) return;
      const f = form.data as unknown as FormDef & { is_active: boolean };
      const rows = ((fields.data as { results?: FormField[] }).results ?? []).slice();
      defs.set(id, { ...f, fields: rows.sort((a, b) => a.position - b.position) });
    }),
  );
  const out: Record<string, PendingForm[]> = {};
  for (const t of open) {
    const mine = responses[t.id as string];
    const overrides = (t.form_default_values ?? {}) as Record<string, Record<string, unknown>>;
    const asked: PendingForm[] = [];
    for (const id of wanted(t)) {
      const def = defs.get(id);
      const of = mine.filter((r) => idOf(r.form) === id);
      if (!def || of.some((r) => r.state === "completed")) continue;
      const draft = of.find((r) => r.state === "draft");
      // A new response of an inactive form is refused (contract §15): only its draft is asked.
      if (!draft && !def.is_active) continue;
      const start = Object.fromEntries(def.fields.map((f) => [f.key, f.default ?? null]));
      asked.push({
        form: { url: def.url, id: def.id, name: def.name, description: def.description, fields: def.fields },
        data: draft ? draft.data : { ...start, ...(overrides[id] ?? {}) },
      });
    }
    if (asked.length) out[t.id as string] = asked;
  }
  return out;
}

/**
 * Sends what waits, one pass at a time (a call during a pass gets that pass): the signed-in
 * user's actions only, with that user's session (issue 52).
 */
export const sync = oneAtATime(async () => {
  const s = session.value;
  const c = client;
  const mine = epoch;
  if (!s || !c || !navigator.onLine) return;
  const owner = ownerOf(s);
  const show = async () => {
    const q = await queueOf(owner);
    if (mine === epoch) actions.value = q;
  };
  const result = await syncOnce(c, owner, show);
  await show();
  if (mine !== epoch) return;
  if (result.stopped === "unauthorized") return expired();
  if (result.refused) await refresh();
  if (result.stopped !== "done") return;
  const positions = await sendPositions(c, owner);
  if (positions === "unauthorized" && mine === epoch) expired();
  // New positions move the day's ETAs (contract §28): the server answers a position once its
  // ETAs start from it, so Today reads them again at once.
  else if (positions === "sent" && mine === epoch) void refresh();
});

/**
 * An action of the worker, recorded at once with the phone's time and a fresh `external_id`
 * (contract §27), shown at once, then sent when the network allows.
 */
export async function act(
  task: Task,
  action: TaskAction,
  extra: { notes?: string; taskData?: Record<string, unknown>; uploads?: Upload[]; forms?: FormFill[] } = {},
) {
  const s = session.value;
  if (!s) return;
  const owner = ownerOf(s);
  const a: QueuedAction = {
    externalId: newExternalId(),
    task: task.url as string,
    action,
    owner,
    time: new Date().toISOString(),
    notes: extra.notes,
    taskData: extra.taskData,
    location: sharePosition.value && position ? { type: "Point", coordinates: position } : undefined,
    uploads: extra.uploads ?? [],
    ...(extra.forms?.length ? { forms: extra.forms } : {}),
    state: "waiting",
  };
  await enqueue(a);
  if (extra.forms?.length) {
    // Asked and answered: not asked again while the action waits.
    const { [task.id as string]: _, ...rest } = taskForms.value;
    taskForms.value = rest;
    await setDay(owner, "taskForms", rest);
  }
  const target = TARGET[action];
  if (target) {
    const next = tasks.value.map((t) => (t.id === task.id ? { ...t, state: target } : t));
    tasks.value = next;
    await setDay(owner, "tasks", next);
  }
  actions.value = await queueOf(owner);
  void sync();
}

export async function dismiss(a: QueuedAction) {
  const s = session.value;
  if (!s) return;
  await removeAction(a.seq!);
  actions.value = await queueOf(ownerOf(s));
}

function watchPosition() {
  if (!("geolocation" in navigator) || watch !== null) return;
  watch = navigator.geolocation.watchPosition(
    (p) => {
      position = [p.coords.longitude, p.coords.latitude];
      void recordPosition(p);
    },
    () => {},
    { enableHighAccuracy: false, maximumAge: 60_000 },
  );
}

/** The worker's choice to send the phone's position with each action (asked by the browser). */
export async function setSharePosition(on: boolean) {
  sharePosition.value = on;
  await setKv("sharePosition", on);
  if (on) watchPosition();
  else stopWatch();
}

function stopWatch() {
  if (watch !== null) navigator.geolocation.clearWatch(watch);
  watch = null;
  position = null;
  lastRecorded = null;
}

/**
 * The worker's positions while on duty (contract §30): the phone's fix is recorded when 15 s
 * have passed since the last one recorded and it is 50 m from it, whichever comes later (the
 * first at once), kept in IndexedDB under its user (dropped at the session's end with the rest
 * of the user's data) and sent with the queue, in batches of up to 500 (`POST /positions/`). Off
 * duty, or without the browser's permission, none. The status counts actions, not positions.
 */
const POSITION_EVERY_MS = 15_000;
const POSITION_EVERY_M = 50;
const POSITIONS_KEPT = 5_000;
let lastRecorded: { t: number; lon: number; lat: number } | null = null;
const positionsKey = (o: ReturnType<typeof ownerOf>) => `positions:${o.account} ${o.user}`;
type KeptPosition = {
  location: { type: "Point"; coordinates: [number, number] };
  time: string;
  accuracy_m: number | null;
  speed_mps: number | null;
  heading_deg: number | null;
};

function metres(a: { lon: number; lat: number }, b: { lon: number; lat: number }) {
  const rad = Math.PI / 180;
  const x = (b.lon - a.lon) * rad * Math.cos(((a.lat + b.lat) / 2) * rad);
  const y = (b.lat - a.lat) * rad;
  return Math.sqrt(x * x + y * y) * 6_371_000;
}

async function recordPosition(p: GeolocationPosition) {
  const s = session.value;
  if (!s || !onDuty.value) return;
  const here = { t: p.timestamp || Date.now(), lon: p.coords.longitude, lat: p.coords.latitude };
  if (
    lastRecorded &&
    (here.t - lastRecorded.t < POSITION_EVERY_MS || metres(lastRecorded, here) < POSITION_EVERY_M)
  )
    return;
  lastRecorded = here;
  const num = (v: number | null) => (v === null || Number.isNaN(v) ? null : v);
  const kept = (await getKv<KeptPosition[]>(positionsKey(ownerOf(s)))) ?? [];
  kept.push({
    location: { type: "Point", coordinates: [here.lon, here.lat] },
    time: new Date(here.t).toISOString(),
    accuracy_m: num(p.coords.accuracy),
    speed_mps: num(p.coords.speed),
    heading_deg: num(p.coords.heading),
  });
  await setKv(positionsKey(ownerOf(s)), kept.slice(-POSITIONS_KEPT));
  void sync();
}

/** Sends the kept positions, oldest first; kept when the network fails, dropped when refused. */
async function sendPositions(c: DispatchClient, owner: ReturnType<typeof ownerOf>) {
  let sent = false;
  for (;;) {
    const kept = (await getKv<KeptPosition[]>(positionsKey(owner))) ?? [];
    if (!kept.length) return sent ? "sent" : "done";
    const batch = kept.slice(0, 500);
    let status = 0;
    try {
      status = (await c.POST("/positions/", { body: batch as never })).response.status;
    } catch {
      return "offline";
    }
    if (status === 401) return "unauthorized";
    // 202 stored; 400 or 409 (`off_duty`: the duty ended before they went) will never be taken.
    if (status === 202 || status === 400 || status === 409) {
      const now = (await getKv<KeptPosition[]>(positionsKey(owner))) ?? [];
      await setKv(positionsKey(owner), now.slice(batch.length));
      sent ||= status === 202;
      continue;
    }
    return "offline";
  }
}

function startRecording() {
  lastRecorded = null;
  if (!sharePosition.value) void setSharePosition(true);
  else watchPosition();
}

/**
 * The "On duty" switch (contract §30): sets the worker's duty on its role (`PATCH
 * /account_roles/{id}/`), online only (the duty decides what the server stores, so it is not
 * queued). Going off duty sends the positions recorded before it first.
 */
export async function setOnDuty(on: boolean) {
  const s = session.value;
  const c = client;
  dutyError.value = "";
  if (!s || !c || !s.roleUrl) return;
  if (!navigator.onLine) {
    dutyError.value = tf("duty.offline");
    return;
  }
  if (!on) await sync();
  try {
    const r = await c.PATCH("/account_roles/{id}/", {
      params: { path: { id: idOf(s.roleUrl) } },
      body: { on_duty: on } as never,
    });
    if (!r.data) {
      dutyError.value = errorMessage(r.error, tf("duty.failed"));
      return;
    }
  } catch {
    dutyError.value = tf("duty.offline");
    return;
  }
  onDuty.value = on;
  await setKv("onDuty", on);
  if (on) startRecording();
}
