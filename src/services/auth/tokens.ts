import type { RoleName, TokenKind } from "../../db/schema";
import { replicate } from "../../db/shards";
import { authenticationFailed, permissionDenied } from "../../http/errors";
import { randomToken, sha256Hex } from "../../lib/crypto";
import { uuidv7 } from "../../lib/ids";
import {
  AUTHORIZATION_TTL_SECONDS,
  type JwtKind,
  looksLikeJwt,
  SESSION_TTL_SECONDS,
  signJwt,
  verifyJwt,
} from "./jwt";
import type { Principal } from "./principal";

const ACCESS_TOKEN_PREFIX = "fda_";

/**
 * What the token's statement returns: one column, the row's fields as one JSON array in
 * RESOLVE_COLUMNS' order. One text is the fingerprint a write proof compares (an equal text is
 * an unchanged row) and the fields at once; `fieldsOf` reads them.
 */
export type TokenRow = { fingerprint: string };

/** The token's row and its chain, as `fieldsOf` reads them from the statement's one column. */
export type TokenFields = {
  id: string;
  kind: TokenKind;
  user_id: string;
  account_id: string | null;
  parent_id: string | null;
  expires_at: number | null;
  revoked_at: number | null;
  email: string;
  is_active: number;
  effective_account_id: string | null;
  role: RoleName | null;
  role_active: number | null;
  api_version: string | null;
  feature_allow_worker_reordering: number | null;
  transit_active_limit: number | null;
  failed_reasons: string | null;
  feature_signer_name: number | null;
  on_duty: number | null;
  position_retention_days: number | null;
  auto_assign: string | null;
  live_until: number | null;
  moving_until: number | null;
  actor_user_id: string | null;
  parent_id_found: string | null;
  parent_revoked_at: number | null;
  parent_expires_at: number | null;
  parent_parent_id: string | null;
  root_id_found: string | null;
  root_revoked_at: number | null;
  root_expires_at: number | null;
  root_parent_id: string | null;
  actor_active: number | null;
  actor_role: RoleName | null;
  actor_role_active: number | null;
};

// One round trip resolves token, user, role and account, and the chain the token hangs from
// (the session an authorization JWT came from, the admin token a hijack token came from and
// that token's own session, and the hijacking admin's role): this runs on every request.
const RESOLVE_COLUMNS: [expression: string, field: keyof TokenFields][] = [
  ["t.id", "id"],
  ["t.kind", "kind"],
  ["t.user_id", "user_id"],
  ["t.account_id", "account_id"],
  ["t.parent_id", "parent_id"],
  ["t.expires_at", "expires_at"],
  ["t.revoked_at", "revoked_at"],
  ["t.actor_user_id", "actor_user_id"],
  ["u.email", "email"],
  ["u.is_active", "is_active"],
  ["COALESCE(t.account_id, u.default_account_id)", "effective_account_id"],
  ["r.role", "role"],
  ["CASE WHEN r.state = 'active' THEN r.is_active ELSE 0 END", "role_active"],
  ["a.api_version", "api_version"],
  ["a.feature_allow_worker_reordering", "feature_allow_worker_reordering"],
  ["a.transit_active_limit", "transit_active_limit"],
  ["a.failed_reasons", "failed_reasons"],
  ["a.feature_signer_name", "feature_signer_name"],
  ["r.on_duty", "on_duty"],
  ["a.position_retention_days", "position_retention_days"],
  ["a.auto_assign", "auto_assign"],
  ["a.live_until", "live_until"],
  ["a.moving_until", "moving_until"],
  ["p.id", "parent_id_found"],
  ["p.revoked_at", "parent_revoked_at"],
  ["p.expires_at", "parent_expires_at"],
  ["p.parent_id", "parent_parent_id"],
  ["g.id", "root_id_found"],
  ["g.revoked_at", "root_revoked_at"],
  ["g.expires_at", "root_expires_at"],
  ["g.parent_id", "root_parent_id"],
  ["au.is_active", "actor_active"],
  ["ar.role", "actor_role"],
  ["CASE WHEN ar.state = 'active' THEN ar.is_active ELSE 0 END", "actor_role_active"],
];
const RESOLVE_FROM = `
FROM auth_tokens t
JOIN users u ON u.id = t.user_id
LEFT JOIN account_roles r ON r.user_id = u.id AND r.account_id = COALESCE(t.account_id, u.default_account_id)
LEFT JOIN accounts a ON a.id = r.account_id
LEFT JOIN auth_tokens p ON p.id = t.parent_id
LEFT JOIN auth_tokens g ON g.id = p.parent_id
LEFT JOIN users au ON au.id = t.actor_user_id
LEFT JOIN account_roles ar ON ar.user_id = t.actor_user_id AND ar.account_id = t.account_id`;
/** Every column of the row in one JSON text: an equal fingerprint is an unchanged row. */
const FINGERPRINT = `json_array(${RESOLVE_COLUMNS.map(([e]) => e).join(", ")})`;
// The fields travel only inside the fingerprint: selecting them as columns too doubled the
// statement (62 expressions over 8 joins), and local D1 (miniflare) prepares every statement
// anew on each call: 158 µs to compile and run in SQLite, 81 µs as the array alone.
const RESOLVE_SQL = `SELECT ${FINGERPRINT} AS fingerprint${RESOLVE_FROM}
WHERE `;

/** The fields of a token's row, from the statement's one column. */
export function fieldsOf(row: TokenRow): TokenFields {
  const values = JSON.parse(row.fingerprint) as unknown[];
  const fields: Record<string, unknown> = {};
  RESOLVE_COLUMNS.forEach(([, field], i) => {
    fields[field] = values[i];
  });
  return fields as TokenFields;
}

/**
 * A derived token lives only as long as everything it came from (contract §2, §14): an
 * authorization JWT dies with its session; a hijack token with the admin's token, that token's
 * own session, and the admin's standing in the account (still an active admin there). Chains
 * are at most two links long (session or access token → authorization JWT → hijack token:
 * neither a hijack token nor an authorization JWT mints another), so a longer one fails closed.
 */
function chainAlive(row: TokenFields, now: number): boolean {
  const alive = (id: string | null, revoked: number | null, expires: number | null) =>
    id !== null && revoked === null && (expires === null || expires > now);
  if (row.parent_id !== null) {
    if (!alive(row.parent_id_found, row.parent_revoked_at, row.parent_expires_at)) return false;
    if (row.parent_parent_id !== null) {
      if (!alive(row.root_id_found, row.root_revoked_at, row.root_expires_at)) return false;
      if (row.root_parent_id !== null) return false;
    }
  }
  if (row.actor_user_id !== null) {
    if (!row.actor_active || row.actor_role !== "admin" || !row.actor_role_active) return false;
    // Admins cannot be hijacked: a user promoted to admin since ends the hijack too.
    if (row.role === "admin") return false;
  }
  return true;
}

/**
 * How a request's token is checked: one statement (the token's row and its chain, RESOLVE_SQL)
 * and `settle`, which turns that row into the principal or a 401. Everything that needs no
 * database (the header's shape, the JWT's signature and expiry, the access token's hash) is
 * already checked when this exists, so the statement can join the request's first D1 batch
 * (http/first-batch.ts) instead of costing a round trip of its own.
 */
export type TokenCheck = {
  statement: D1PreparedStatement;
  /** The same check with its statement on `db` (the account's database, db/shards.ts). */
  on(db: D1Database): TokenCheck;
  /** How the token's row is found: its id (JWTs) or its hash (access tokens). */
  key: { by: WriteProof["by"]; key: string };
  /**
   * Whom the token says it acts as, before its row is read: the JWT's `acc` and `sub`, or for
   * a token without `acc` the account its row named the last time this isolate settled it.
   * Only a hint for reads made beside the check; `settle` decides. Null when unknown.
   */
  claim: { accountId: string; userId: string } | null;
  /**
   * When this isolate has settled this very token before: the principal it proved then, and
   * the proof a write can carry instead of a check of its own (see WriteProof). Null otherwise.
   */
  known: { principal: Principal; proof: WriteProof } | null;
  /** The principal the row proves (at `now`, by default the present), or a 401. */
  settle(row: TokenRow | null, now?: number): Principal;
};

/**
 * A token's check carried by a write (a single command's batch in its task's object): every
 * write of the batch is guarded by `proofGuard`, so nothing is written unless the row is still
 * the one this isolate last settled into a principal, and a batch that wrote proves it was.
 * Only a batch that wrote nothing reads the row (`proofStatement`) to tell a token that no
 * longer holds from a plan another writer broke. Plain data: it crosses the Durable Object's
 * RPC boundary.
 */
export type WriteProof = { by: "id" | "token_hash"; key: string; fingerprint: string };

/**
 * The statement reading a token's row by its key (a request's check, a proof's batch that wrote
 * nothing, a live stream's recheck).
 */
export function proofStatement(db: D1Database, key: Pick<WriteProof, "by" | "key">): D1PreparedStatement {
  return db.prepare(`${RESOLVE_SQL}t.${proofColumn(key)} = ?`).bind(key.key);
}

/**
 * The condition a write carrying `proof` is guarded by, in the same transaction: the token's row
 * is unchanged since it was settled (same fingerprint: not revoked, same user, role, account and
 * settings, same chain, same hijacking admin standing), and nothing in its chain has expired at
 * `now`, the only part of the check that moves with time. Together that is `settle` passing.
 */
export function proofGuard(proof: WriteProof, now: number): { sql: string; params: unknown[] } {
  return {
    sql: `EXISTS (SELECT 1${RESOLVE_FROM}
  WHERE t.${proofColumn(proof)} = ? AND ${FINGERPRINT} = ?
    AND (t.expires_at IS NULL OR t.expires_at > ?) AND (p.expires_at IS NULL OR p.expires_at > ?)
    AND (g.expires_at IS NULL OR g.expires_at > ?))`,
    params: [proof.key, proof.fingerprint, now, now, now],
  };
}

/**
 * Whether `proofGuard` held in the batch that read `row` first: the same test in JavaScript, on
 * the row that batch read in the same transaction. False means every guarded write of that
 * batch wrote nothing.
 */
export function proofHolds(row: TokenRow | null, proof: WriteProof, now: number): boolean {
  const unexpired = (at: number | null) => at === null || at > now;
  if (row === null || row.fingerprint !== proof.fingerprint) return false;
  const f = fieldsOf(row);
  return unexpired(f.expires_at) && unexpired(f.parent_expires_at) && unexpired(f.root_expires_at);
}

const proofColumn = (proof: { by: WriteProof["by"] }) => {
  if (proof.by !== "id" && proof.by !== "token_hash") throw new Error("unknown token column");
  return proof.by;
};

/**
 * What this isolate learnt when it last settled a token, by the token itself (the JWT's text or
 * the access token's hash, so the claims it was checked against are the same): the row's
 * fingerprint and the principal. A hint and a proof to carry, never a substitute for the row.
 */
const settled = new Map<string, { fingerprint: string; principal: Principal }>();
const MAX_SETTLED = 10_000;

function knownOf(memoKey: string, by: WriteProof["by"], key: string): TokenCheck["known"] {
  const m = settled.get(memoKey);
  return m ? { principal: m.principal, proof: { by, key, fingerprint: m.fingerprint } } : null;
}

function remember(memoKey: string, row: TokenRow, p: Principal): Principal {
  if (settled.size >= MAX_SETTLED) settled.clear();
  settled.set(memoKey, { fingerprint: row.fingerprint, principal: p });
  return p;
}

/**
 * Checks `Authorization: Bearer|Token <token>` (contract §2) as far as it can without the
 * database: the kind is recognized from the token itself; a malformed, badly signed or expired
 * JWT, or an unknown kind of token, is 401 here. Null without the header.
 */
export async function checkToken(env: Env, authorization: string | undefined): Promise<TokenCheck | null> {
  if (!authorization) return null;
  const m = /^(Bearer|Token|JWT)\s+(\S+)\s*$/i.exec(authorization);
  if (!m) throw authenticationFailed("Invalid Authorization header. Use: Authorization: Bearer <token>.");
  const token = m[2];
  if (looksLikeJwt(token)) {
    const jwt = await verifyJwt(env.JWT_SECRETS, token);
    if (!jwt) throw authenticationFailed("Invalid or expired token.");
    const memoKey = `jwt:${token}`;
    const known = knownOf(memoKey, "id", jwt.jti);
    return withStatement(env.DB, {
      key: { by: "id", key: jwt.jti },
      claim: jwt.acc
        ? { accountId: jwt.acc, userId: jwt.sub }
        : known && { accountId: known.principal.accountId, userId: known.principal.userId },
      known,
      settle(row, now = Date.now()) {
        const f = row && fieldsOf(row);
        if (!f || f.kind !== jwt.kind || f.user_id !== jwt.sub || (f.actor_user_id ?? undefined) !== jwt.act)
          throw authenticationFailed("Invalid token.");
        return remember(memoKey, row, principalOf(f, now));
      },
    });
  }
  if (token.startsWith(ACCESS_TOKEN_PREFIX)) {
    const hash = await sha256Hex(token);
    const memoKey = `hash:${hash}`;
    const known = knownOf(memoKey, "token_hash", hash);
    return withStatement(env.DB, {
      key: { by: "token_hash", key: hash },
      claim: known && { accountId: known.principal.accountId, userId: known.principal.userId },
      known,
      settle(row, now = Date.now()) {
        const f = row && fieldsOf(row);
        if (!row || f?.kind !== "access") throw authenticationFailed("Invalid token.");
        return remember(memoKey, row, principalOf(f, now));
      },
    });
  }
  throw authenticationFailed("Invalid token.");
}

function withStatement(db: D1Database, check: Omit<TokenCheck, "statement" | "on">): TokenCheck {
  return {
    ...check,
    statement: proofStatement(db, check.key),
    on: (other) => withStatement(other, check),
  };
}

/**
 * The account a token acts in, from the directory (contract §24): where its row says, else its
 * user's default account. Null for a token the directory does not know.
 */
export async function tokenAccount(directory: D1Database, key: TokenCheck["key"]): Promise<string | null> {
  const row = await directory
    .prepare(
      `SELECT COALESCE(t.account_id, u.default_account_id) AS account FROM auth_tokens t
  JOIN users u ON u.id = t.user_id WHERE t.${proofColumn(key)} = ?`,
    )
    .bind(key.key)
    .first<{ account: string | null }>();
  return row?.account ?? null;
}

/** The row of a token that matches what was presented: alive at `now`, or a 401. */
function principalOf(row: TokenFields, now: number): Principal {
  if (row.revoked_at || !chainAlive(row, now)) throw authenticationFailed("Token has been revoked.");
  if (row.expires_at !== null && row.expires_at <= now) throw authenticationFailed("Token has expired.");
  if (!row.is_active) throw authenticationFailed("User inactive or deleted.");
  if (!row.role || !row.role_active || !row.effective_account_id) {
    throw authenticationFailed("User has no active role in this account.");
  }
  return {
    userId: row.user_id,
    email: row.email,
    accountId: row.effective_account_id,
    role: row.role,
    tokenId: row.id,
    tokenKind: row.kind,
    onDuty: Boolean(row.on_duty),
    account: {
      apiVersion: row.api_version ?? "",
      featureAllowWorkerReordering: Boolean(row.feature_allow_worker_reordering),
      transitActiveLimit: row.transit_active_limit,
      failedReasons: JSON.parse(row.failed_reasons || "[]"),
      featureSignerName: Boolean(row.feature_signer_name),
      positionRetentionDays: row.position_retention_days ?? 7,
      autoAssign: row.auto_assign === "insert",
      live: (row.live_until ?? 0) > now,
      movingUntil: (row.moving_until ?? 0) > now ? row.moving_until : null,
    },
    actorUserId: row.actor_user_id,
  };
}

/**
 * The principal of the token with this id as a request's check would find it now (its user's
 * current role, a hijacking admin still standing), or null when the token no longer holds.
 * Live streams use it: a stream acts with the role held when it opens, not when its ticket was made.
 */
export async function tokenPrincipal(env: Env, tokenId: string, now = Date.now()): Promise<Principal | null> {
  const row = await proofStatement(env.DB, { by: "id", key: tokenId }).first<TokenRow>();
  if (!row) return null;
  try {
    return principalOf(fieldsOf(row), now);
  } catch {
    return null;
  }
}

/** Whether the token with this id still holds, as a request's check would find it (live streams). */
export async function tokenHolds(env: Env, tokenId: string, now = Date.now()): Promise<boolean> {
  return (await tokenPrincipal(env, tokenId, now)) !== null;
}

/**
 * Resolves `Authorization: Bearer|Token <token>` (contract §2) in one round trip of its own.
 * Any token that is malformed, badly signed, expired or revoked is 401.
 */
export async function resolvePrincipal(
  env: Env,
  authorization: string | undefined,
): Promise<Principal | null> {
  const check = await checkToken(env, authorization);
  if (!check) return null;
  return check.settle(await check.statement.first<TokenRow>());
}

export type IssuedToken = { id: string; token: string; expiresAt: number | null };

/**
 * A session JWT backed by a row (so logout and DELETE revoke it at once). `accountId`, the
 * account the session acts in (the user's default account), goes into `acc` when known: a hint
 * that lets a request read beside the token's check (see TokenCheck.claim), never trusted alone.
 */
export async function issueSession(
  env: Env,
  userId: string,
  accountId: string | null,
  name = "",
): Promise<IssuedToken> {
  const id = uuidv7();
  const now = Date.now();
  const exp = Math.floor(now / 1000) + SESSION_TTL_SECONDS;
  await replicate(env, { userIds: [userId] }, (db) => [
    db
      .prepare(
        "INSERT INTO auth_tokens (id, kind, user_id, name, created_at, expires_at) VALUES (?, 'session', ?, ?, ?, ?)",
      )
      .bind(id, userId, name, now, exp * 1000),
  ]);
  return {
    id,
    token: await signJwt(
      env.JWT_SECRETS,
      "session",
      { sub: userId, jti: id, acc: accountId ?? undefined },
      exp,
    ),
    expiresAt: exp * 1000,
  };
}

/** Legacy (before 2.10.0) long-lived access token: opaque, stored only as its SHA-256. */
export async function issueAccessToken(env: Env, userId: string): Promise<IssuedToken> {
  const id = uuidv7();
  const token = `${ACCESS_TOKEN_PREFIX}${randomToken(32)}`;
  const hash = await sha256Hex(token);
  const now = Date.now();
  await replicate(env, { userIds: [userId] }, (db) => [
    db
      .prepare(
        "INSERT INTO auth_tokens (id, kind, user_id, token_hash, created_at) VALUES (?, 'access', ?, ?, ?)",
      )
      .bind(id, userId, hash, now),
  ]);
  return { id, token, expiresAt: null };
}

/** Re-signs the same session with a new expiry (contract §2), or swaps an access token for a session. */
export async function refreshToken(env: Env, p: Principal): Promise<IssuedToken> {
  assertMayIssueTokens(p);
  // An access token acts in the user's default account, as the session it becomes.
  if (p.tokenKind === "access") return issueSession(env, p.userId, p.accountId);
  const kind: JwtKind = p.tokenKind === "authorization" ? "authorization" : "session";
  const ttl = kind === "session" ? SESSION_TTL_SECONDS : AUTHORIZATION_TTL_SECONDS;
  const exp = Math.floor(Date.now() / 1000) + ttl;
  await replicate(env, { userIds: [p.userId] }, (db) => [
    db
      .prepare("UPDATE auth_tokens SET expires_at = ? WHERE id = ? AND revoked_at IS NULL")
      .bind(exp * 1000, p.tokenId),
  ]);
  // A session acts in the user's default account, an authorization JWT in its own: `acc` either way.
  const acc = p.accountId;
  return {
    id: p.tokenId,
    token: await signJwt(env.JWT_SECRETS, kind, { sub: p.userId, jti: p.tokenId, acc }, exp),
    expiresAt: exp * 1000,
  };
}

/** A short-lived JWT scoped to one account, revoked together with the session it came from. */
export async function issueAuthorization(env: Env, p: Principal, accountId: string): Promise<IssuedToken> {
  assertMayIssueTokens(p);
  const id = uuidv7();
  const now = Date.now();
  const exp = Math.floor(now / 1000) + AUTHORIZATION_TTL_SECONDS;
  // Always the session or access token presented (an authorization JWT mints none): the new
  // token dies with it.
  const parent = p.tokenId;
  await replicate(env, { userIds: [p.userId] }, (db) => [
    db
      .prepare(
        "INSERT INTO auth_tokens (id, kind, user_id, account_id, parent_id, created_at, expires_at) VALUES (?, 'authorization', ?, ?, ?, ?, ?)",
      )
      .bind(id, p.userId, accountId, parent, now, exp * 1000),
  ]);
  return {
    id,
    token: await signJwt(env.JWT_SECRETS, "authorization", { sub: p.userId, jti: id, acc: accountId }, exp),
    expiresAt: exp * 1000,
  };
}

export const HIJACK_TTL_SECONDS = 3600;

/**
 * A hijack token (contract §14): a session JWT of `userId`, scoped to the admin's account, with
 * the admin in `act` (RFC 8693) and in the row, valid one hour and revoked with the admin's own
 * token (`parent_id`). It mints no other token (see `assertMayIssueTokens`).
 */
export async function issueHijackSession(env: Env, admin: Principal, userId: string): Promise<IssuedToken> {
  const id = uuidv7();
  const now = Date.now();
  const exp = Math.floor(now / 1000) + HIJACK_TTL_SECONDS;
  await replicate(env, { userIds: [userId] }, (db) => [
    db
      .prepare(
        "INSERT INTO auth_tokens (id, kind, user_id, account_id, parent_id, actor_user_id, name, created_at, expires_at) VALUES (?, 'session', ?, ?, ?, ?, 'hijack', ?, ?)",
      )
      .bind(id, userId, admin.accountId, admin.tokenId, admin.userId, now, exp * 1000),
  ]);
  return {
    id,
    token: await signJwt(
      env.JWT_SECRETS,
      "session",
      { sub: userId, jti: id, act: admin.userId, acc: admin.accountId },
      exp,
    ),
    expiresAt: exp * 1000,
  };
}

/**
 * A hijack token acts as its user for its hour, in its account, and never beyond what the
 * hijacking admin may do there: it cannot make tokens that outlive it, nor touch what belongs
 * to the user rather than the account (the user's sessions, profile and invitations).
 */
export function assertMayIssueTokens(p: Principal) {
  if (p.actorUserId) throw permissionDenied("Not allowed with a hijack token.");
}
export const assertNotHijack = assertMayIssueTokens;

export async function revokeToken(env: Env, tokenId: string, userId: string): Promise<void> {
  const now = Date.now();
  await replicate(env, { userIds: [userId] }, (db) => [
    db
      .prepare("UPDATE auth_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
      .bind(now, tokenId),
  ]);
}
