import type { RoleName, TokenKind } from "../../db/schema";
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

type TokenRow = {
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
  actor_user_id: string | null;
  parent_revoked_at: number | null;
};

// One round trip resolves token, user, role and account: this runs on every request.
const RESOLVE_SQL = `
SELECT t.id, t.kind, t.user_id, t.account_id, t.parent_id, t.expires_at, t.revoked_at, t.actor_user_id,
       u.email, u.is_active,
       COALESCE(t.account_id, u.default_account_id) AS effective_account_id,
       r.role, CASE WHEN r.state = 'active' THEN r.is_active ELSE 0 END AS role_active,
       a.api_version, a.feature_allow_worker_reordering, a.transit_active_limit, a.failed_reasons,
       a.feature_signer_name,
       p.revoked_at AS parent_revoked_at
FROM auth_tokens t
JOIN users u ON u.id = t.user_id
LEFT JOIN account_roles r ON r.user_id = u.id AND r.account_id = COALESCE(t.account_id, u.default_account_id)
LEFT JOIN accounts a ON a.id = r.account_id
LEFT JOIN auth_tokens p ON p.id = t.parent_id
WHERE `;

async function loadRow(db: D1Database, where: string, value: string): Promise<TokenRow | null> {
  return db.prepare(`${RESOLVE_SQL}${where}`).bind(value).first<TokenRow>();
}

/**
 * Resolves `Authorization: Bearer|Token <token>` (contract §2): the kind is recognized from
 * the token itself. Any token that is malformed, badly signed, expired or revoked is 401.
 */
export async function resolvePrincipal(
  env: Env,
  authorization: string | undefined,
): Promise<Principal | null> {
  if (!authorization) return null;
  const m = /^(Bearer|Token|JWT)\s+(\S+)\s*$/i.exec(authorization);
  if (!m) throw authenticationFailed("Invalid Authorization header. Use: Authorization: Bearer <token>.");
  const token = m[2];
  let row: TokenRow | null;
  if (looksLikeJwt(token)) {
    const jwt = await verifyJwt(env.JWT_SECRETS, token);
    if (!jwt) throw authenticationFailed("Invalid or expired token.");
    row = await loadRow(env.DB, "t.id = ?", jwt.jti);
    if (
      !row ||
      row.kind !== jwt.kind ||
      row.user_id !== jwt.sub ||
      (row.actor_user_id ?? undefined) !== jwt.act
    )
      throw authenticationFailed("Invalid token.");
  } else if (token.startsWith(ACCESS_TOKEN_PREFIX)) {
    row = await loadRow(env.DB, "t.token_hash = ?", await sha256Hex(token));
    if (row?.kind !== "access") throw authenticationFailed("Invalid token.");
  } else {
    throw authenticationFailed("Invalid token.");
  }
  const now = Date.now();
  if (row.revoked_at || row.parent_revoked_at) throw authenticationFailed("Token has been revoked.");
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
    account: {
      apiVersion: row.api_version ?? "",
      featureAllowWorkerReordering: Boolean(row.feature_allow_worker_reordering),
      transitActiveLimit: row.transit_active_limit,
      failedReasons: JSON.parse(row.failed_reasons || "[]"),
      featureSignerName: Boolean(row.feature_signer_name),
    },
    actorUserId: row.actor_user_id,
  };
}

export type IssuedToken = { id: string; token: string; expiresAt: number | null };

/** A session JWT backed by a row (so logout and DELETE revoke it at once). */
export async function issueSession(env: Env, userId: string, name = ""): Promise<IssuedToken> {
  const id = uuidv7();
  const now = Date.now();
  const exp = Math.floor(now / 1000) + SESSION_TTL_SECONDS;
  await env.DB.prepare(
    "INSERT INTO auth_tokens (id, kind, user_id, name, created_at, expires_at) VALUES (?, 'session', ?, ?, ?, ?)",
  )
    .bind(id, userId, name, now, exp * 1000)
    .run();
  return {
    id,
    token: await signJwt(env.JWT_SECRETS, "session", { sub: userId, jti: id }, exp),
    expiresAt: exp * 1000,
  };
}

/** Legacy (before 2.10.0) long-lived access token: opaque, stored only as its SHA-256. */
export async function issueAccessToken(env: Env, userId: string): Promise<IssuedToken> {
  const id = uuidv7();
  const token = `${ACCESS_TOKEN_PREFIX}${randomToken(32)}`;
  await env.DB.prepare(
    "INSERT INTO auth_tokens (id, kind, user_id, token_hash, created_at) VALUES (?, 'access', ?, ?, ?)",
  )
    .bind(id, userId, await sha256Hex(token), Date.now())
    .run();
  return { id, token, expiresAt: null };
}

/** Re-signs the same session with a new expiry (contract §2), or swaps an access token for a session. */
export async function refreshToken(env: Env, p: Principal): Promise<IssuedToken> {
  assertMayIssueTokens(p);
  if (p.tokenKind === "access") return issueSession(env, p.userId);
  const kind: JwtKind = p.tokenKind === "authorization" ? "authorization" : "session";
  const ttl = kind === "session" ? SESSION_TTL_SECONDS : AUTHORIZATION_TTL_SECONDS;
  const exp = Math.floor(Date.now() / 1000) + ttl;
  await env.DB.prepare("UPDATE auth_tokens SET expires_at = ? WHERE id = ? AND revoked_at IS NULL")
    .bind(exp * 1000, p.tokenId)
    .run();
  const acc = kind === "authorization" ? p.accountId : undefined;
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
  const parent = p.tokenKind === "authorization" ? null : p.tokenId;
  await env.DB.prepare(
    "INSERT INTO auth_tokens (id, kind, user_id, account_id, parent_id, created_at, expires_at) VALUES (?, 'authorization', ?, ?, ?, ?, ?)",
  )
    .bind(id, p.userId, accountId, parent, now, exp * 1000)
    .run();
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
  await env.DB.prepare(
    "INSERT INTO auth_tokens (id, kind, user_id, account_id, parent_id, actor_user_id, name, created_at, expires_at) VALUES (?, 'session', ?, ?, ?, ?, 'hijack', ?, ?)",
  )
    .bind(id, userId, admin.accountId, admin.tokenId, admin.userId, now, exp * 1000)
    .run();
  return {
    id,
    token: await signJwt(env.JWT_SECRETS, "session", { sub: userId, jti: id, act: admin.userId }, exp),
    expiresAt: exp * 1000,
  };
}

/** A hijack token acts as its user for its hour, in its account: it cannot make tokens that outlive it. */
export function assertMayIssueTokens(p: Principal) {
  if (p.actorUserId) throw permissionDenied("Not allowed with a hijack token.");
}

export async function revokeToken(env: Env, tokenId: string): Promise<void> {
  await env.DB.prepare("UPDATE auth_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
    .bind(Date.now(), tokenId)
    .run();
}
