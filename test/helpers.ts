import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { uuidText } from "../src/db/uuid-bytes";
import type { Principal } from "../src/services/auth/principal";
import { BASE_JOIN, PAYLOAD_COLUMNS, type StoredPayload, withTexts } from "../src/services/events/payloads";
import { stored } from "./stored";

export const BASE = "https://api.test";

export type CallOptions = {
  method?: string;
  body?: unknown;
  token?: string;
  version?: string;
  scheme?: "Bearer" | "Token";
  headers?: Record<string, string>;
  raw?: BodyInit;
};

export type Reply = { status: number; body: any; headers: Headers; text: string };

/** One request through the Worker's own fetch handler (same code as `wrangler dev`). */
export async function call(path: string, opts: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.version) headers.Accept = `application/json; version=${opts.version}`;
  if (opts.token) headers.Authorization = `${opts.scheme ?? "Bearer"} ${opts.token}`;
  // Anonymous calls are rate-limited per client address; tests are many clients, not one.
  else headers["CF-Connecting-IP"] ??= `192.0.2.${Math.floor(Math.random() * 250)}:${crypto.randomUUID()}`;
  let body: BodyInit | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["Content-Type"] ??= "application/json";
  }
  const url = path.startsWith("http") ? path : `${BASE}${path}`;
  const res = await exports.default.fetch(
    new Request(url, { method: opts.method ?? (body ? "POST" : "GET"), headers, body }),
  );
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {}
  return { status: res.status, body: parsed, headers: res.headers, text };
}

/** Asserts the status and prints the body when it differs (a failing test shows why). */
export function expectStatus(r: Reply, status: number) {
  expect(r.status, `HTTP ${r.status}: ${r.text.slice(0, 2000)}`).toBe(status);
}

let counter = 0;
export const uniqueEmail = (prefix = "user") =>
  `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}-${crypto.randomUUID().slice(0, 8)}@example.test`;

export type Actor = { token: string; user: string; userId: string; email: string; password: string };
export type TestAccount = { account: any; admin: Actor };

/** Mints a fresh account through the public sign-up, and signs its admin in. */
export async function newAccount(name = "Test account"): Promise<TestAccount> {
  const email = uniqueEmail("admin");
  const password = "correct horse battery staple";
  const r = await call("/accounts/", { body: { name, email, password } });
  expectStatus(r, 201);
  const admin = await signIn(email, password);
  return { account: r.body, admin };
}

export async function signIn(email: string, password: string): Promise<Actor> {
  const auth = await call("/authenticate/", { body: { username: email, password } });
  expectStatus(auth, 200);
  const me = await call("/users/me/", { token: auth.body.token });
  expectStatus(me, 200);
  return { token: auth.body.token, user: me.body.url, userId: me.body.id, email, password };
}

/** Adds a user with `role` to the admin's account and signs it in. */
export async function addUser(
  acc: TestAccount,
  role: "admin" | "manager" | "worker" | "integration",
  name: string = role,
) {
  const email = uniqueEmail(role);
  const password = "another long password";
  const r = await call("/users/", { token: acc.admin.token, body: { email, name, password, role } });
  expectStatus(r, 201);
  return signIn(email, password);
}

/** Defines metafields of `appliesTo` (contract §12): writes of undefined keys are refused. */
export async function defineMetafields(
  acc: TestAccount,
  appliesTo: "tasks" | "orders" | "routes" | "contact_addresses" | "clients",
  types: Record<string, string>,
) {
  for (const [key, value_type] of Object.entries(types)) {
    const r = await call("/metafields/", {
      token: acc.admin.token,
      body: { key, applies_to: appliesTo, value_type },
    });
    expectStatus(r, 201);
  }
}

/** The principal the API resolves for a session token of this user, for calling services directly. */
export function principalFor(
  user: { userId: string; email: string; accountId: string },
  role: Principal["role"] = "admin",
): Principal {
  return {
    ...user,
    role,
    tokenId: "test",
    tokenKind: "session",
    account: {
      apiVersion: "2.11.4",
      featureAllowWorkerReordering: false,
      transitActiveLimit: 1,
      failedReasons: [],
      featureSignerName: false,
    },
    actorUserId: null,
  };
}

/** The account's admin as a principal (services called directly, as the API would). */
export const adminPrincipal = (acc: TestAccount) =>
  principalFor({ userId: acc.admin.userId, email: acc.admin.email, accountId: acc.account.id });

export type StoredEvent = {
  id: string;
  account_id: string;
  type: string;
  created_at: number;
  dispatched_at: number | null;
  data: any;
};

/**
 * The outbox's rows as stored in D1, oldest first, each payload unpacked as the service reads it
 * (with its base, services/events/payloads.ts). `objectId` keeps the events about one object:
 * those whose payload is that object (its `id`), as every event's `data` is.
 */
export async function storedEvents(
  q: { accountId?: string; objectId?: string } = {},
): Promise<StoredEvent[]> {
  const { results } = await stored
    .prepare(
      `SELECT ${uuidText("e.id")} AS id, ${uuidText("e.account_id")} AS account_id, e.type, e.created_at, e.dispatched_at, ${PAYLOAD_COLUMNS}
     FROM events e ${BASE_JOIN} ${q.accountId ? "WHERE e.account_id = unhex(?, '-')" : ""} ORDER BY e.id`,
    )
    .bind(...(q.accountId ? [q.accountId] : []))
    .all<Omit<StoredEvent, "data"> & StoredPayload>();
  return withTexts(results)
    .map(({ text, ...e }) => ({ ...e, data: JSON.parse(text) }))
    .filter((e) => q.objectId === undefined || e.data?.id === q.objectId);
}
