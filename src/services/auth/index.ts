import { badRequest, nonFieldError, notFound } from "../../http/errors";
import { paginateByCreation } from "../../http/pagination";
import { memberAccount } from "../accounts";
import { closeRevokedStreams } from "../live";
import { verifyPassword } from "./passwords";
import type { Principal } from "./principal";
import { assertSignInAllowed, clearSignInFailures, recordSignInFailure, signInKeys } from "./sign-in-limits";
import {
  assertMayIssueTokens,
  assertNotHijack,
  issueAccessToken,
  issueAuthorization,
  issueSession,
  revokeToken,
} from "./tokens";

export const BAD_CREDENTIALS = "Unable to log in with provided credentials.";

/**
 * Checks e-mail and password. Unknown user, wrong password and inactive user all get the
 * same 400 text, and an unknown user still costs one PBKDF2 run (no e-mail oracle).
 */
export async function checkCredentials(env: Env, email: string, password: string) {
  const user = await env.DB.prepare(
    "SELECT id, password_hash, is_active, default_account_id FROM users WHERE email = ?",
  )
    .bind(email.trim().toLowerCase())
    .first<{
      id: string;
      password_hash: string | null;
      is_active: number;
      default_account_id: string | null;
    }>();
  const ok = await verifyPassword(password, user?.password_hash);
  if (!user || !ok || !user.is_active) throw nonFieldError(BAD_CREDENTIALS);
  return user;
}

export async function authenticate(
  env: Env,
  email: string,
  password: string,
  legacy: boolean,
  clientIp?: string,
) {
  const keys = signInKeys(email, clientIp);
  await assertSignInAllowed(env, keys);
  let user: Awaited<ReturnType<typeof checkCredentials>>;
  try {
    user = await checkCredentials(env, email, password);
  } catch (err) {
    await recordSignInFailure(env, keys);
    throw err;
  }
  await clearSignInFailures(env, keys);
  if (legacy) {
    const t = await issueAccessToken(env, user.id);
    return { token: t.token, userId: user.id, accountId: user.default_account_id };
  }
  const t = await issueSession(env, user.id, user.default_account_id);
  return { token: t.token, userId: user.id, accountId: user.default_account_id };
}

export async function authorizeAccount(env: Env, p: Principal, accountId: string) {
  assertMayIssueTokens(p);
  // An authorization JWT is scoped to its account: it mints no token for another one.
  if (p.tokenKind === "authorization")
    throw badRequest("Present a session token, not an authorization token.");
  try {
    await memberAccount(env, p.userId, accountId);
  } catch {
    throw nonFieldError("You have no role in this account.");
  }
  return issueAuthorization(env, p, accountId);
}

export type SessionRow = {
  id: string;
  kind: string;
  name: string;
  user_id: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
};

/** The caller's live sessions and access tokens, newest first, as a cursor page (contract §4). */
export async function listSessions(
  env: Env,
  p: Principal,
  q: { cursor?: string; page_size?: number; url: string },
) {
  assertNotHijack(p);
  return paginateByCreation<SessionRow>({
    db: env.DB,
    select:
      "SELECT id, kind, name, user_id, created_at, expires_at, revoked_at, last_used_at FROM auth_tokens",
    where: [
      "user_id = ?",
      "kind IN ('session', 'access')",
      "revoked_at IS NULL",
      "(expires_at IS NULL OR expires_at > ?)",
    ],
    params: [p.userId, Date.now()],
    desc: true,
    cursor: q.cursor,
    pageSize: q.page_size,
    url: q.url,
  });
}

export async function getSession(env: Env, p: Principal, id: string) {
  assertNotHijack(p);
  const row = await env.DB.prepare(
    "SELECT id, kind, name, user_id, created_at, expires_at, revoked_at, last_used_at FROM auth_tokens WHERE id = ? AND user_id = ? AND kind IN ('session', 'access')",
  )
    .bind(id, p.userId)
    .first<SessionRow>();
  if (!row) throw notFound();
  return row;
}

export async function createNamedSession(env: Env, p: Principal, name: string) {
  assertMayIssueTokens(p);
  // A new session acts in the user's default account: the account of the token presented,
  // unless that is an authorization JWT (scoped to another one; then `acc` is left out).
  const t = await issueSession(env, p.userId, p.tokenKind === "authorization" ? null : p.accountId, name);
  return { row: await getSession(env, p, t.id), token: t.token };
}

export async function revokeSession(env: Env, p: Principal, id: string) {
  await getSession(env, p, id);
  await revokeToken(env, id, p.userId);
  await closeRevokedStreams(env, p.userId);
}

/** `POST /logout/`: the presenting token (and what hangs from it) stops working, its streams close. */
export async function logout(env: Env, p: Principal) {
  await revokeToken(env, p.tokenId, p.userId);
  await closeRevokedStreams(env, p.userId);
}
