import { replicate } from "../../db/shards";
/**
 * The user actions that mail a single-use token (contract §14): e-mail verification and
 * activation re-sends. Tokens are random, stored as SHA-256 only, expire, are consumed by one
 * UPDATE (services/user-tokens), and a new one invalidates the user's earlier ones of its kind.
 */
import { fieldError, nonFieldError, notFound, permissionDenied } from "../../http/errors";
import { getAccountRow, getRole, getUserInAccount, sendActivation, sendInvitation } from "../accounts";
import type { Principal } from "../auth/principal";
import { emailSenderFromEnv } from "../messaging/email";
import { ACTIVATION_TTL_MS, consumeUserToken, issueUserToken } from "../user-tokens";

export const EMAIL_VERIFICATION_TTL_MS = 24 * 3600 * 1000;

/**
 * One message for every token that does not work (unknown, forged, used, superseded or
 * expired), so an answer never tells a guesser which.
 */
export const INVALID_TOKEN = "Invalid or expired token.";

/** `POST /users/{id}/verify_email/`: the user itself or an admin of its account. */
export async function sendEmailVerification(env: Env, p: Principal, userId: string, baseUrl: string) {
  const user = await getUserInAccount(env, p.accountId, userId);
  if (user.id !== p.userId && p.role !== "admin") throw permissionDenied();
  const token = await issueUserToken(env, {
    kind: "email_verification",
    userId: user.id,
    accountId: p.accountId,
    ttlMs: EMAIL_VERIFICATION_TTL_MS,
  });
  const account = await getAccountRow(env, p.accountId);
  await emailSenderFromEnv(env).send({
    kind: "email_verification",
    accountId: p.accountId,
    to: user.email,
    subject: "Confirm your e-mail address",
    text:
      `Someone asked to confirm that ${user.email} belongs to a user of "${account?.name ?? ""}".\n` +
      "If that was you, confirm it (the token is valid 24 hours, once; a newer message replaces this one):\n\n" +
      `POST ${baseUrl}/users/verify_email/confirm/ {"token": "${token}"}\n\n` +
      `token: ${token}\n\nIf it was not you, ignore this message.\n`,
  });
}

/** `POST /users/verify_email/confirm/`: anonymous; the token is the authorization. */
export async function confirmEmailVerification(env: Env, token: string) {
  const t = await consumeUserToken(env, "email_verification", token);
  if (!t) throw fieldError("token", INVALID_TOKEN);
  const now = Date.now();
  await replicate(env, { userIds: [t.user_id] }, (db) => [
    db
      .prepare("UPDATE users SET email_verified_at = ?, updated_at = ? WHERE id = ?")
      .bind(now, now, t.user_id),
  ]);
}

/**
 * `POST /account_roles/{id}/resend_activation_token/` (admins): a fresh activation token for a
 * user who has not activated yet (no password); the previous token stops working. A user who
 * already activated: 400.
 */
export async function resendActivationToken(env: Env, p: Principal, roleId: string, baseUrl: string) {
  const role = await getRole(env, p.accountId, roleId);
  const user = await env.DB.prepare("SELECT id, email, password_hash FROM users WHERE id = ?")
    .bind(role.user_id)
    .first<{ id: string; email: string; password_hash: string | null }>();
  if (!user) throw notFound();
  // Decided by the role, never by the user: a registered user's pending invitation answers
  // exactly as a new user's activation (contract §14: nothing tells the two apart).
  if (role.state !== "pending") throw nonFieldError("This user is already active.");
  if (user.password_hash !== null) {
    const account = await getAccountRow(env, p.accountId);
    await sendInvitation(env, baseUrl, role, account?.name ?? "");
    return;
  }
  const token = await issueUserToken(env, {
    kind: "activation",
    userId: user.id,
    accountId: p.accountId,
    ttlMs: ACTIVATION_TTL_MS,
  });
  await sendActivation(env, baseUrl, { email: user.email, accountId: p.accountId, token });
}
