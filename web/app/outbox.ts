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
};

export type ActionState = "waiting" | "sent" | "refused";

export type QueuedAction = {
  /** Order of making (IndexedDB's auto-increment key): the order they are sent in. */
  seq?: number;
  externalId: string;
  task: string;
  action: string;
  /** When the worker did it, on the phone's clock (ISO 8601). */
  time: string;
  notes?: string;
  taskData?: Record<string, unknown>;
  location?: { type: "Point"; coordinates: [number, number] };
  uploads: Upload[];
  state: ActionState;
  /** Why the server refused it (the command's `error_message`, or a field error). */
  error?: string;
};

export const MAX_BATCH = 100;

/** A fresh `external_id` for an action made now: random, so two phones never collide. */
export const newExternalId = () => `app-${crypto.randomUUID()}`;

/**
 * The next batch: waiting actions in the order made, up to the first one whose files are not
 * all attached yet (its command must not overtake them, nor the actions after it overtake it).
 */
export function nextBatch(queue: readonly QueuedAction[], max = MAX_BATCH): QueuedAction[] {
  const out: QueuedAction[] = [];
  for (const a of [...queue].sort((x, y) => (x.seq ?? 0) - (y.seq ?? 0))) {
    if (a.state !== "waiting") continue;
    if (a.uploads.some((u) => !u.attached)) break;
    out.push(a);
    if (out.length >= max) break;
  }
  return out;
}

/** The first waiting action that still has files to send, if it comes before any batch. */
export function nextUploads(queue: readonly QueuedAction[]): QueuedAction | null {
  for (const a of [...queue].sort((x, y) => (x.seq ?? 0) - (y.seq ?? 0))) {
    if (a.state !== "waiting") continue;
    return a.uploads.some((u) => !u.attached) ? a : null;
  }
  return null;
}

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

function firstMessage(errors: unknown): string | null {
  if (!errors || typeof errors !== "object") return null;
  for (const [field, v] of Object.entries(errors)) {
    if (Array.isArray(v) && typeof v[0] === "string")
      return field === "non_field_errors" ? v[0] : `${field}: ${v[0]}`;
    const inner = firstMessage(v);
    if (inner) return inner;
  }
  return null;
}

/** The queue's count for the status line ("All sent" / "N waiting"). */
export const waitingCount = (queue: readonly QueuedAction[]) =>
  queue.filter((a) => a.state === "waiting").length;
