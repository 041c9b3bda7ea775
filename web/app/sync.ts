import type { DispatchClient } from "../shared/api";
import { errorMessage } from "../shared/api";
import { commandOf, nextBatch, nextUploads, outcomes, type QueuedAction, type Upload } from "./outbox";
import { queue, removeAction, saveAction } from "./store";

/**
 * Sends the queue (contract §27): each action's files first (file upload, the signed storage
 * form of contract §8, then the signature or document), then the commands as ordinary batches
 * in the order they were made. Every step's outcome is written to IndexedDB before the next, so
 * a page killed anywhere resumes where it stopped: a file upload is made once and reused, and a
 * batch sent again after a lost answer is replayed by the server by its `external_id`s.
 */
export type SyncResult = { sent: number; refused: number; stopped: "done" | "offline" | "unauthorized" };

export async function syncOnce(
  client: DispatchClient,
  account: string,
  onChange: () => void,
): Promise<SyncResult> {
  let sent = 0;
  let refused = 0;
  for (;;) {
    const q = await queue();
    const pending = nextUploads(q);
    if (pending) {
      const ok = await sendUploads(client, account, pending);
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

/** The files of one action, step by step; false when the network (or the server) failed. */
async function sendUploads(
  client: DispatchClient,
  account: string,
  a: QueuedAction,
): Promise<boolean | "unauthorized" | "refused"> {
  const uploads: Upload[] = a.uploads.map((u) => ({ ...u }));
  const save = () => saveAction({ ...a, uploads });
  try {
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
        // contract §8): the server says so and nothing is made twice.
        const message = errorMessage(r.error, "");
        if (/already/i.test(message)) {
          u.attached = u.fileUpload.url;
          await save();
          continue;
        }
        await saveAction({ ...a, uploads, state: "refused", error: message || "Refused." });
        return "refused";
      }
      return false;
    }
    return true;
  } catch {
    await save().catch(() => {});
    return false;
  }
}
