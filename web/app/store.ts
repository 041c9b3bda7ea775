import { type DBSchema, type IDBPDatabase, openDB } from "idb";
import { isOwner, type Owner, type QueuedAction } from "./outbox";

/**
 * What the field app keeps on the phone, in IndexedDB (through `idb`): the queue of actions not
 * yet sent (with their photos and signatures as Blobs), the signed-in user's day and what it needs
 * to be shown offline, and the session. The session is kept here rather than in sessionStorage as
 * the console keeps it: a phone that reopens the app offline must still be able to send its queue
 * later without a network to sign in again. It is never in a cookie or localStorage (contract
 * §26).
 *
 * A phone is shared (issue 52, docs/field-app.md "Who owns what"): every queued action names the
 * user and account that made it, and the day is kept under its user's key. A session's end
 * (sign-out, a 401) deletes everything in `kv` but the discard notices (`endSession`); the queue
 * stays, for its own user only.
 */
interface FieldDB extends DBSchema {
  outbox: { key: number; value: QueuedAction; indexes: { externalId: string } };
  kv: { key: string; value: unknown };
}

let db: Promise<IDBPDatabase<FieldDB>> | null = null;

function open() {
  db ??= openDB<FieldDB>("field-app", 1, {
    upgrade(d) {
      const outbox = d.createObjectStore("outbox", { keyPath: "seq", autoIncrement: true });
      outbox.createIndex("externalId", "externalId", { unique: true });
      d.createObjectStore("kv");
    },
  });
  return db;
}

export async function getKv<T>(key: string): Promise<T | undefined> {
  return (await (await open()).get("kv", key)) as T | undefined;
}

export async function setKv(key: string, value: unknown) {
  await (await open()).put("kv", value, key);
}

/** The day's parts (tasks, documents, metafields, forms), under their user's key. */
export type DayPart = "tasks" | "documents" | "metafields" | "taskForms";
const dayKey = (owner: Owner, part: DayPart) => `day:${owner.account} ${owner.user}:${part}`;

export const getDay = <T>(owner: Owner, part: DayPart) => getKv<T>(dayKey(owner, part));
export const setDay = (owner: Owner, part: DayPart, value: unknown) => setKv(dayKey(owner, part), value);

/** Per user URL: how many of that user's unsent actions were discarded, told at their next sign-in. */
export const DISCARDED = "discarded";

/**
 * A session's end (sign-out, a 401) or another user's sign-in: the session, the day (this
 * version's keys per user and the unkeyed ones of the versions before), the position choice
 * go. The queue stays (each action is its own user's), and so do the discard notices.
 */
export async function endSession() {
  const d = await open();
  const tx = d.transaction("kv", "readwrite");
  for (const key of await tx.store.getAllKeys()) if (key !== DISCARDED) await tx.store.delete(key);
  await tx.done;
}

/** The day as versions before owners kept it (one, unkeyed): never shown again, deleted at start. */
export async function dropUnkeyedDay() {
  const d = await open();
  const tx = d.transaction("kv", "readwrite");
  for (const key of ["tasks", "documents", "metafields", "taskForms"]) await tx.store.delete(key);
  await tx.done;
}

/** Records an action at once (before anything is sent): the queue survives a closed page. */
export async function enqueue(a: QueuedAction): Promise<QueuedAction> {
  const seq = await (await open()).add("outbox", a);
  return { ...a, seq };
}

/** Every queued action, of every user (sync.ts and the views take their own user's). */
export async function queue(): Promise<QueuedAction[]> {
  return (await open()).getAll("outbox");
}

/** The queued actions of one user, in the order made. */
export async function queueOf(owner: Owner | null): Promise<QueuedAction[]> {
  return (await queue()).filter((a) => isOwner(a.owner, owner));
}

export async function saveAction(a: QueuedAction) {
  await (await open()).put("outbox", a);
}

/** Sent actions leave the queue; refused ones stay, to be shown on their task until dismissed. */
export async function removeAction(seq: number) {
  await (await open()).delete("outbox", seq);
}

/** Removes these actions (a user's own at sign-out, or those past the discard age). */
export async function removeActions(list: readonly QueuedAction[]) {
  const d = await open();
  const tx = d.transaction("outbox", "readwrite");
  for (const a of list) if (a.seq !== undefined) await tx.store.delete(a.seq);
  await tx.done;
}
