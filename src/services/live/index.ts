import { directoryOf, inAccount } from "../../db/shards";
/**
 * The live stream's verbs (contract §25): tickets, opening a stream on the account's object,
 * poking it after a write, and closing the streams of a token that no longer holds. The object
 * (durable-objects/account-stream) does the fan-out; the events table stays the truth.
 */

import type { AccountStreamDO, ConnectEvents } from "../../durable-objects/account-stream";
import { ApiError, fieldError } from "../../http/errors";
import { randomToken, sha256Hex } from "../../lib/crypto";
import type { Principal } from "../auth/principal";
import { tokenHolds, tokenPrincipal } from "../auth/tokens";
import { EVENT_TYPES, LIVE_ONLY_TYPES } from "../events/outbox";

export const TICKET_TTL_MS = 60_000;
/** Past a cap on open streams, try again after this long (a stream that closes frees a place). */
const STREAM_CAP_RETRY_SECONDS = 30;

/**
 * Caps on open live connections (settings, docs/configuration.md): per user (its dispatch
 * screens and phones; a hijack stream counts for the user it shows), per account (every user's
 * event streams together) and per tracker (the recipients' pages of one tracking link). Each
 * bounds the memory one caller can pin in the account's stream object.
 */
export type StreamCaps = { perUser: number; perAccount: number; perTracker: number };

export function streamCaps(env: Env): StreamCaps {
  const vars = env as unknown as Record<string, string | undefined>;
  const cap = (name: string, fallback: number) => {
    const n = Number(vars[name]);
    return vars[name] !== undefined && vars[name] !== "" && Number.isInteger(n) && n > 0 ? n : fallback;
  };
  return {
    perUser: cap("LIVE_STREAMS_PER_USER", 50),
    perAccount: cap("LIVE_STREAMS_PER_ACCOUNT", 2000),
    perTracker: cap("LIVE_STREAMS_PER_TRACKER", 50),
  };
}
/** How long after a stream opened writes keep poking the account's object. */
const LIVE_FOR_MS = 24 * 3600_000;
const LIVE_RENEW_MS = 3600_000;

export const streamOf = (env: Env, accountId: string): DurableObjectStub<AccountStreamDO> =>
  env.ACCOUNT_STREAMS.get(env.ACCOUNT_STREAMS.idFromName(accountId));

/**
 * Hands a WebSocket upgrade to the account's object (a socket travels by fetch, not by RPC),
 * and answers its 101 as a response of our own, whose headers the middleware may still set.
 */
async function upgrade(env: Env, accountId: string, path: string, facts: unknown) {
  const res = await streamOf(env, accountId).fetch(
    new Request(`https://account-stream${path}`, {
      headers: { Upgrade: "websocket", "X-Stream": JSON.stringify(facts) },
    }),
  );
  if (res.status === 429) {
    const { detail } = await res.json<{ detail: string }>();
    throw new ApiError(429, "throttled", detail, { "Retry-After": String(STREAM_CAP_RETRY_SECONDS) });
  }
  return new Response(null, {
    status: res.status,
    webSocket: res.webSocket,
    headers: new Headers(res.headers),
  });
}

/** The stream's URL on the API's origin, as a WebSocket URL (`ws:` for `http:`, `wss:` for `https:`). */
const wsUrl = (baseUrl: string, path: string) => `${baseUrl.replace(/^http/, "ws")}${path}`;

/** `POST /events/stream_tickets/`: a single-use ticket valid 60 s, for the caller's account. */
export async function createTicket(env: Env, p: Principal, baseUrl: string, now = Date.now()) {
  const ticket = randomToken(32);
  const expiresAt = now + TICKET_TTL_MS;
  // The stream is opened anonymously (the ticket is its authorization): tickets live in the
  // directory, which the opening request finds the account from (contract §24).
  await directoryOf(env)
    .prepare(
      "INSERT INTO stream_tickets (hash, account_id, user_id, token_id, role, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(await sha256Hex(ticket), p.accountId, p.userId, p.tokenId, p.role, expiresAt, now)
    .run();
  return {
    ticket,
    url: wsUrl(baseUrl, `/events/stream/?ticket=${encodeURIComponent(ticket)}`),
    expires_at: expiresAt,
  };
}

export type StreamQuery = { ticket?: string; types?: string; after?: string };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `GET /events/stream/`: spends the ticket (one UPDATE: used once, within its 60 s), checks the
 * token behind it still holds, then hands the upgrade to the account's object. Bad parameters
 * are 400 before the ticket is spent.
 */
export async function openStream(env: Env, q: StreamQuery, now = Date.now()): Promise<Response> {
  const types = q.types
    ?.split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  const known: readonly string[] = [...EVENT_TYPES, ...LIVE_ONLY_TYPES];
  const unknown = types?.filter((t) => !known.includes(t)) ?? [];
  if (unknown.length) throw fieldError("types", `Unknown event types: ${unknown.join(", ")}.`);
  if (q.after !== undefined && !UUID.test(q.after)) throw fieldError("after", "An event id is expected.");
  if (!q.ticket) throw fieldError("ticket", "This field is required.");
  const spent = await directoryOf(env)
    .prepare(
      `UPDATE stream_tickets SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ?
     RETURNING account_id, user_id, token_id, role`,
    )
    .bind(now, await sha256Hex(q.ticket), now)
    .first<{ account_id: string; user_id: string; token_id: string; role: string }>();
  if (!spent) throw fieldError("ticket", "Invalid, used or expired ticket.");
  const account = await inAccount(env, spent.account_id);
  // The token as it stands now: the stream shows what its user's current role may see (a
  // ticket minted before a demotion does not keep the old role), and a hijack stream knows its
  // admin, so the admin's sign-out, demotion or removal closes it too (closeRevokedStreams).
  const p = await tokenPrincipal(account, spent.token_id, now);
  if (!p || p.accountId !== spent.account_id || p.userId !== spent.user_id)
    throw fieldError("ticket", "Invalid, used or expired ticket.");
  await markLive(account, spent.account_id, now);
  return upgrade(account, spent.account_id, "/events", {
    accountId: spent.account_id,
    userId: p.userId,
    role: p.role,
    tokenId: spent.token_id,
    actorUserId: p.actorUserId,
    types: types?.length ? types : null,
    after: q.after?.toLowerCase() ?? null,
    caps: streamCaps(env),
  } satisfies ConnectEvents);
}

/** A tracking page's stream: told `changed` when one of its tasks has news. */
export async function openTrackerStream(
  env: Env,
  tracker: { id: string; account_id: string; taskIds: string[] },
  now = Date.now(),
) {
  const account = await inAccount(env, tracker.account_id);
  await markLive(account, tracker.account_id, now);
  return upgrade(account, tracker.account_id, "/tracker", {
    accountId: tracker.account_id,
    trackerId: tracker.id,
    taskIds: tracker.taskIds,
    cap: streamCaps(env).perTracker,
  });
}

/**
 * Writes poke the account's object for the next LIVE_FOR_MS. The flag is moved on only when it
 * has less than LIVE_RENEW_MS left: a thousand screens opening write it once, and the tokens'
 * rows (which carry it, services/auth/tokens.ts) seldom change under their write proofs.
 */
async function markLive(env: Env, accountId: string, now: number) {
  await env.DB.prepare(
    "UPDATE accounts SET live_until = ? WHERE id = ? AND (live_until IS NULL OR live_until < ?)",
  )
    .bind(now + LIVE_FOR_MS, accountId, now + LIVE_FOR_MS - LIVE_RENEW_MS)
    .run();
}

/** The account's stream object: open connections and its wakes (GET /events/stream_stats/). */
export async function streamStats(env: Env, accountId: string) {
  return streamOf(env, accountId).stats();
}

/** After a write: the account's object sends what is new (nothing to do when nobody watches). */
export async function pokeAccount(env: Env, accountId: string) {
  await streamOf(env, accountId).poke();
}

/**
 * A token of `userId` was revoked (sign-out, a session deleted, a new password, deactivation, a
 * role removed or disabled): every stream whose token no longer holds is closed, in the accounts
 * where they may have one open: theirs, and the hijack streams they opened as another user (a
 * hijack token hangs from its admin's session and standing).
 */
export async function closeRevokedStreams(env: Env, userId: string, now = Date.now()) {
  const { results } = await env.DB.prepare(
    "SELECT DISTINCT r.account_id FROM account_roles r JOIN accounts a ON a.id = r.account_id WHERE r.user_id = ? AND a.live_until > ?",
  )
    .bind(userId, now)
    .all<{ account_id: string }>();
  for (const { account_id } of results) {
    const stub = streamOf(env, account_id);
    const tokens = await stub.tokensOf(userId);
    if (!tokens.length) continue;
    const holding = [];
    for (const t of tokens) if (await tokenHolds(env, t, now)) holding.push(t);
    await stub.revoke(userId, holding);
  }
}

/**
 * The user's role in the account changed or went: their streams there close (reopen to see as
 * the new role), and so do the hijack streams they opened there (an admin no more).
 */
export async function closeStreamsOfUser(env: Env, accountId: string, userId: string) {
  const live = await env.DB.prepare("SELECT 1 AS x FROM accounts WHERE id = ? AND live_until > ?")
    .bind(accountId, Date.now())
    .first();
  if (live) await streamOf(env, accountId).revoke(userId, []);
}
