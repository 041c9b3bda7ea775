import type { DispatchClient } from "../shared/api";
import { errorMessage, idOf } from "../shared/api";
import {
  commandOf,
  type FormFill,
  formData,
  formOutcome,
  nextBatch,
  nextPrep,
  type Owner,
  outcomes,
  type QueuedAction,
  type Upload,
} from "./outbox";
import { queueOf, removeAction, saveAction } from "./store";

/**
 * Sends the queue (contract §27): each action's files first (file upload, the signed storage
 * form of contract §8, then the signature or document), then its forms (a response of the task,
 * written and completed, contract §15), then the commands as ordinary batches in the order they
 * were made. Every step's outcome is written to IndexedDB before the next, so
 * a page killed anywhere resumes where it stopped: a file upload is made once and reused, and a
 * batch sent again after a lost answer is replayed by the server by its `external_id`s.
 *
 * Only `owner`'s actions are sent, and `client` carries `owner`'s session (issue 52): an action
 * is never sent with another user's token.
 */
export type SyncResult = { sent: number; refused: number; stopped: "done" | "offline" | "unauthorized" };

export async function syncOnce(
  client: DispatchClient,
  owner: Owner,
  onChange: () => void,
): Promise<SyncResult> {
  const account = owner.account;
  let sent = 0;
  let refused = 0;
  for (;;) {
    const q = await queueOf(owner);
    const pending = nextPrep(q);
    if (pending) {
      const ok = await sendPrep(client, account, pending);
      onChange();
      if (ok === "unauthorized") return { sent, refused, stopped: "unauthorized" };
      if (!ok) return { sent, refused, stopped: "offline" };
      continue;
    }
    const batch = nextBatch(q);
    if (!batch.length) return { sent, refused, stopped: "done" };
    let status = 0;
    let body: unknown = null;
    try {
      const r = await client.POST("/task_commands/", { body: batch.map(commandOf) as never });
      status = r.response.status;
      body = r.data ?? r.error;
    } catch {
      return { sent, refused, stopped: "offline" };
    }
    if (status === 401) return { sent, refused, stopped: "unauthorized" };
    const byId = new Map(batch.map((a) => [a.externalId, a]));
    let moved = 0;
    for (const o of outcomes(batch, status, body)) {
      const a = byId.get(o.externalId)!;
      if (o.state === "sent") {
        await removeAction(a.seq!);
        sent++;
        moved++;
      } else if (o.state === "refused") {
        await saveAction({ ...a, state: "refused", error: o.error });
        refused++;
        moved++;
      }
    }
    onChange();
    // Nothing moved: the server or the network is not taking it now; try again later.
    if (!moved) return { sent, refused, stopped: "offline" };
  }
}

type Step = boolean | "unauthorized" | "refused";

/**
 * The files, then the forms, of one action, step by step; false when the network (or the
 * server) failed. "refused" when the server will never take one (the action is marked so).
 */
async function sendPrep(client: DispatchClient, account: string, a: QueuedAction): Promise<Step> {
  const uploads: Upload[] = a.uploads.map((u) => ({ ...u }));
  const forms: FormFill[] = (a.forms ?? []).map((f) => ({ ...f }));
  const save = () => saveAction({ ...a, uploads, forms });
  const refuse = async (message: string): Promise<Step> => {
    await saveAction({ ...a, uploads, forms, state: "refused", error: message || "Refused." });
    return "refused";
  };
  try {
    const files = await sendUploads(client, account, a, uploads, save, refuse);
    if (files !== true) return files;
    for (const f of forms) {
      if (f.done) continue;
      const step = await sendForm(client, a.task, f, formData(f, uploads), save, refuse);
      if (step !== true) return step;
    }
    return true;
  } catch {
    await save().catch(() => {});
    return false;
  }
}

/**
 * One form: the task's response of that form is found (a retry after a lost answer finds the
 * one it made) or made with the values, written, then completed. Found completed, it is done.
 */
async function sendForm(
  client: DispatchClient,
  task: string,
  f: FormFill,
  data: Record<string, unknown>,
  save: () => Promise<void>,
  refuse: (message: string) => Promise<Step>,
): Promise<Step> {
  const verdict = async (r: { response: Response; error?: unknown }): Promise<Step | null> => {
    const o = formOutcome(r.response.status, r.error);
    if (o === "unauthorized") return "unauthorized";
    if (o === "refused") return refuse(errorMessage(r.error, ""));
    if (o === "waiting") return false;
    return null;
  };
  if (!f.response) {
    const found = await client.GET("/form_responses/", {
      params: { query: { task, form: f.form, page_size: 100 } as never },
    });
    if (found.response.status === 401) return "unauthorized";
    if (!found.data) return false;
    const list = ((found.data as { results?: { url: string; state: string }[] }).results ?? []).slice();
    if (list.some((x) => x.state === "completed")) {
      f.done = true;
      await save();
      return true;
    }
    const draft = list[0];
    if (draft) f.response = draft.url;
    else {
      const made = await client.POST("/form_responses/", { body: { form: f.form, task, data } as never });
      if (!made.data) return (await verdict(made)) ?? false;
      f.response = (made.data as { url: string }).url;
      f.written = true;
    }
    await save();
  }
  const id = idOf(f.response);
  if (!f.written) {
    const r = await client.PATCH("/form_responses/{id}/", {
      params: { path: { id } },
      body: { data } as never,
    });
    const v = await verdict(r);
    if (v !== null) return v;
    // Found completed already: done, with the values it was completed with.
    if (r.response.status === 400) {
      f.done = true;
      await save();
      return true;
    }
    f.written = true;
    await save();
  }
  const r = await client.POST("/form_responses/{id}/complete/", { params: { path: { id } } });
  const v = await verdict(r);
  if (v !== null) return v;
  f.done = true;
  await save();
  return true;
}

/** The files of one action, step by step (see sendPrep). */
async function sendUploads(
  client: DispatchClient,
  account: string,
  a: QueuedAction,
  uploads: Upload[],
  save: () => Promise<void>,
  refuse: (message: string) => Promise<Step>,
): Promise<Step> {
  for (const u of uploads) {
    if (u.attached) continue;
    if (!u.fileUpload) {
      const r = await client.POST("/file_uploads/", {
        body: { file_name: u.fileName, file_type: u.type, source: "integration" } as never,
      });
      if (r.response.status === 401) return "unauthorized";
      if (!r.data) return false;
      const fu = r.data as unknown as {
        url: string;
        s3_signature: { url: string; fields: Record<string, string> };
      };
      u.fileUpload = { url: fu.url, fields: fu.s3_signature.fields, postUrl: fu.s3_signature.url };
      await save();
    }
    if (!u.stored) {
      const form = new FormData();
      for (const [k, v] of Object.entries(u.fileUpload.fields)) form.append(k, v);
      form.append("file", u.blob, u.fileName);
      const r = await fetch(u.fileUpload.postUrl, { method: "POST", body: form });
      if (!r.ok) return false;
      u.stored = true;
      await save();
    }
    const path = u.kind === "signature" ? "/signatures/" : "/documents/";
    const r = await client.POST(path as "/documents/", {
      body: {
        account,
        task: a.task,
        file_upload: u.fileUpload.url,
        ...(u.kind === "signature" ? { signer_name: u.signerName ?? "" } : { visible_to_worker: true }),
      } as never,
    });
    if (r.response.status === 401) return "unauthorized";
    if (r.data) {
      u.attached = (r.data as { url: string }).url;
      await save();
      continue;
    }
    if (r.response.status === 400) {
      // Attached already by a request whose answer was lost (one upload, one attachment,
      // contract §8): the server says so and nothing is made twice; the attachment made
      // from this upload is looked up, as a form's photo or signature field needs its URL.
      const message = errorMessage(r.error, "");
      if (!/already/i.test(message)) return refuse(message);
      const listed = await client.GET(path as "/documents/", {
        params: { query: { task: a.task, page_size: 500 } as never },
      });
      if (!listed.data) return false;
      const mine = (
        (listed.data as { results?: { url: string; file_upload?: string }[] }).results ?? []
      ).find((x) => x.file_upload === u.fileUpload!.url);
      if (!mine) return refuse(message);
      u.attached = mine.url;
      await save();
      continue;
    }
    return false;
  }
  return true;
}
