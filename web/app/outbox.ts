/**
 * The field app's offline queue (contract §27), its pure part: what an action recorded on the
 * phone is, which of them go in the next batch, and what the server's answer means for each.
 * No I/O here (store.ts keeps the queue in IndexedDB, sync.ts sends it), so the rules that make
 * "each applied exactly once, in the order made" hold are tested alone (test/web/outbox.test.ts).
 *
 * Exactly once rests on the API's `external_id` (contract §6): an action gets a fresh one when it
 * is made and keeps it on every retry, so a batch re-sent after a lost answer is replayed by the
 * server (the stored command comes back) and applies nothing again.
 */

export type Upload = {
  kind: "signature" | "photo";
  /** The file itself, kept in IndexedDB until it is attached. */
  blob: Blob;
  fileName: string;
  type: string;
  signerName?: string;
  /** Set once the file upload exists (a retry reuses it rather than make another). */
  fileUpload?: { url: string; fields: Record<string, string>; postUrl: string };
  /** Set once the file is in storage. */
  stored?: boolean;
  /** Set once the signature or document exists (its URL). */
  attached?: string;
  /** A form's photo or signature field this file is the value of (its URL goes in that form's data). */
  field?: { form: string; key: string };
};

/**
 * A form filled in before "Complete" (contract §15, §27): made a completed response of the task
 * before the action's command is sent. Each step is recorded as it lands, so a retry resumes.
 */
export type FormFill = {
  /** The form's URL. */
  form: string;
  /** The values typed in (files' values are added once attached: `formData`). */
  data: Record<string, unknown>;
  /** The response found or made for the task (its URL). */
  response?: string;
  /** Set once `data` is written to the response. */
  written?: boolean;
  /** Set once the response is completed (by this action, or found completed). */
  done?: boolean;
};

export type ActionState = "waiting" | "sent" | "refused";

/**
 * Who made an action (issue 52): the user and the account, by their URLs. The action is sent
 * with that user's session only and shown to that user only; another user signed in on the same
 * phone neither sends nor sees it.
 */
export type Owner = { user: string; account: string };

/** True when `a` and `b` are the same user of the same account (neither missing). */
export const isOwner = (a: Owner | null | undefined, b: Owner | null | undefined): boolean =>
  Boolean(a && b && a.user === b.user && a.account === b.account);

export type QueuedAction = {
  /** Order of making (IndexedDB's auto-increment key): the order they are sent in. */
  seq?: number;
  externalId: string;
  task: string;
  action: string;
  /**
   * Who made it. Absent only on an action queued by a version that did not record it: no one can
   * say whose it is, so it is never sent, and is discarded at the age below.
   */
  owner?: Owner;
  /** When the worker did it, on the phone's clock (ISO 8601). */
  time: string;
  notes?: string;
  taskData?: Record<string, unknown>;
  location?: { type: "Point"; coordinates: [number, number] };
  uploads: Upload[];
  /** Forms completed before the command (only with `complete`). */
  forms?: FormFill[];
  state: ActionState;
  /** Why the server refused it (the command's `error_message`, or a field error). */
  error?: string;
};

export const MAX_BATCH = 100;

/** A fresh `external_id` for an action made now: random, so two phones never collide. */
export const newExternalId = () => `app-${crypto.randomUUID()}`;

/**
 * The one rule across tasks: the transit/active limit (contract §5). A batch is applied in order
 * per task only, different tasks in parallel (contract §6), so a start on one task made after
 * the completion of another goes in the next batch, once the server has applied the completion.
 */
const TAKES = new Set(["transit", "activate"]);
const RELEASES = new Set(["complete", "fail"]);

/** True while an action has steps to take before its command: files to attach, forms to complete. */
export const needsPrep = (a: QueuedAction) =>
  a.uploads.some((u) => !u.attached) || (a.forms ?? []).some((f) => !f.done);

/**
 * The next batch: waiting actions in the order made, up to the first one whose files or forms
 * are not all done yet (its command must not overtake them, nor the actions after it overtake it)
 * or that takes the transit/active slot another task of the batch gives back.
 */
export function nextBatch(queue: readonly QueuedAction[], max = MAX_BATCH): QueuedAction[] {
  const out: QueuedAction[] = [];
  for (const a of [...queue].sort((x, y) => (x.seq ?? 0) - (y.seq ?? 0))) {
    if (a.state !== "waiting") continue;
    if (needsPrep(a)) break;
    if (TAKES.has(a.action) && out.some((b) => b.task !== a.task && RELEASES.has(b.action))) break;
    out.push(a);
    if (out.length >= max) break;
  }
  return out;
}

/** The first waiting action that still has files or forms to send, if it comes before any batch. */
export function nextPrep(queue: readonly QueuedAction[]): QueuedAction | null {
  for (const a of [...queue].sort((x, y) => (x.seq ?? 0) - (y.seq ?? 0))) {
    if (a.state !== "waiting") continue;
    return needsPrep(a) ? a : null;
  }
  return null;
}

/** A form's data as sent: the values typed in, and each of its photo and signature files' URL. */
export function formData(fill: FormFill, uploads: readonly Upload[]): Record<string, unknown> {
  const data = { ...fill.data };
  for (const u of uploads) if (u.field?.form === fill.form && u.attached) data[u.field.key] = u.attached;
  return data;
}

export type FormOutcome = "done" | "refused" | "waiting" | "unauthorized";

/**
 * What an answer to writing or completing a response means (contract §15). A response found
 * completed is done: a complete whose answer was lost, or the dispatcher's; the phone's values do
 * not overwrite a completed response. A 400 or 404 is refused (a required field the worker cannot
 * see, a task no longer theirs); anything else waits for the next try.
 */
export function formOutcome(status: number, body: unknown): FormOutcome {
  if (status >= 200 && status < 300) return "done";
  if (status === 401) return "unauthorized";
  if (status === 400 && firstMessage(body) === FORM_COMPLETED) return "done";
  if (status === 400 || status === 404) return "refused";
  return "waiting";
}

/** The API's answer to a write of a completed response (contract §15). */
export const FORM_COMPLETED = "Form response is completed.";

/** The task command an action is sent as (contract §2.6). */
export function commandOf(a: QueuedAction) {
  return {
    task: a.task,
    external_id: a.externalId,
    time: a.time,
    action: a.action,
    ...(a.notes ? { notes: a.notes } : {}),
    ...(a.taskData ? { task_data: a.taskData } : {}),
    ...(a.location ? { location: a.location } : {}),
  };
}

export type Outcome = { externalId: string; state: "sent" | "refused" | "waiting"; error?: string };

/**
 * What the server's answer to a batch means for each action. 201/200: each command's `state`
 * (`rejected` is final: shown with its reason, never retried). 400 with an array (contract §3):
 * the items with errors are refused, the others wait (nothing of the batch was applied) and go
 * in the next batch. Anything else (offline, 5xx, 429, 503 during an account move): all wait.
 */
export function outcomes(batch: readonly QueuedAction[], status: number, body: unknown): Outcome[] {
  const ids = batch.map((a) => a.externalId);
  if ((status === 200 || status === 201) && Array.isArray(body)) {
    return ids.map((externalId, i) => {
      const c = body[i] as { state?: string; error_message?: string } | undefined;
      if (c?.state === "rejected")
        return { externalId, state: "refused", error: c.error_message || "Refused." };
      // `pending` only with Prefer: respond-async, which the app does not send.
      return { externalId, state: "sent" };
    });
  }
  if (status === 400 && Array.isArray(body)) {
    return ids.map((externalId, i) => {
      const errors = body[i] as Record<string, unknown> | undefined;
      const message = firstMessage(errors);
      return message ? { externalId, state: "refused", error: message } : { externalId, state: "waiting" };
    });
  }
  return ids.map((externalId) => ({ externalId, state: "waiting" }));
}

export function firstMessage(errors: unknown): string | null {
  if (!errors || typeof errors !== "object") return null;
  for (const [field, v] of Object.entries(errors)) {
    if (Array.isArray(v) && typeof v[0] === "string")
      return field === "non_field_errors" ? v[0] : `${field}: ${v[0]}`;
    const inner = firstMessage(v);
    if (inner) return inner;
  }
  return null;
}

/**
 * How long an unsent action waits for its user (docs/field-app.md, "Who owns what"): while that
 * user is signed in on the phone it waits until sent; while not, it is discarded once it is this
 * old, and that user is told how many at their next sign-in on the phone.
 */
export const KEEP_DAYS = 7;
const DAY_MS = 86_400_000;

/** The actions to discard now: older than KEEP_DAYS (by the phone's clock) and not the signed-in user's. */
export function toDiscard(
  queue: readonly QueuedAction[],
  signedIn: Owner | null,
  now: number,
): QueuedAction[] {
  return queue.filter((a) => !isOwner(a.owner, signedIn) && now - Date.parse(a.time) > KEEP_DAYS * DAY_MS);
}

/** Discarded actions counted by their user's URL (unowned ones are told to no one). */
export function countByUser(list: readonly QueuedAction[], into: Record<string, number> = {}) {
  const out = { ...into };
  for (const a of list) if (a.owner) out[a.owner.user] = (out[a.owner.user] ?? 0) + 1;
  return out;
}

/** The queue's count for the status line ("All sent" / "N waiting"). */
export const waitingCount = (queue: readonly QueuedAction[]) =>
  queue.filter((a) => a.state === "waiting").length;

/**
 * One pass of `run` at a time: a call while a pass runs gets that pass, a call after it starts a
 * new one. The pass is stored before it can end: written as `running ??= (async () => { try {…}
 * finally { running = null } })()`, a pass that returns before its first `await` (sync() offline)
 * runs its `finally` before `??=` stores it, and every later call got that settled pass back, so
 * nothing was sent until a reload (issue 52 item 6). `.finally()` runs its callback in a later
 * microtask, always after the assignment.
 */
export function oneAtATime(run: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | null = null;
  return () => {
    if (!running) {
      const pass = Promise.resolve()
        .then(run)
        .finally(() => {
          if (running === pass) running = null;
        });
      running = pass;
    }
    return running;
  };
}
