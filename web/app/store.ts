import { type DBSchema, type IDBPDatabase, openDB } from "idb";
import type { QueuedAction } from "./outbox";

/**
 * What the field app keeps on the phone, in IndexedDB (through `idb`): the queue of actions not
 * yet sent (with their photos and signatures as Blobs), the day's tasks and what they need to be
 * shown offline, and the session. The session is kept here rather than in sessionStorage as the
 * console keeps it: a phone that reopens the app offline must still be able to send its queue
 * later without a network to sign in again. It is never in a cookie or localStorage (contract
 * §26), and "Sign out" deletes it with everything else here.
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

/** Records an action at once (before anything is sent): the queue survives a closed page. */
export async function enqueue(a: QueuedAction): Promise<QueuedAction> {
  const seq = await (await open()).add("outbox", a);
  return { ...a, seq };
}

export async function queue(): Promise<QueuedAction[]> {
  return (await open()).getAll("outbox");
}

export async function saveAction(a: QueuedAction) {
  await (await open()).put("outbox", a);
}

/** Sent actions leave the queue; refused ones stay, to be shown on their task until dismissed. */
export async function removeAction(seq: number) {
  await (await open()).delete("outbox", seq);
}

/** Everything the app keeps, gone (sign-out). */
export async function clearAll() {
  const d = await open();
  await d.clear("outbox");
  await d.clear("kv");
}
