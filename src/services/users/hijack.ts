import { permissionDenied } from "../../http/errors";
import { logLine } from "../../http/log";
import { reverse } from "../../http/urls";
import { getUserInAccount, roleIn } from "../accounts";
import type { Principal } from "../auth/principal";
import { assertMayIssueTokens, issueHijackSession } from "../auth/tokens";
import { eventStatement } from "../events/outbox";

/**
 * `POST /users/{id}/hijack/` (contract §14): an admin acts as another user of the same account
 * for one hour (support: "show me what you see"). Never another admin (or the caller), never a
 * user outside the account (404, as any id of another account), never from a hijack token. The
 * grant is recorded as a `user.hijacked` event and an audit log line; every request made with
 * the token logs the admin beside the user (http/middleware.ts).
 */
export async function hijackUser(env: Env, p: Principal, userId: string, baseUrl: string) {
  assertMayIssueTokens(p);
  if (p.role !== "admin") throw permissionDenied();
  const target = await getUserInAccount(env, p.accountId, userId);
  const role = await roleIn(env, target.id, p.accountId);
  if (!role) throw permissionDenied("This user has no active role in this account.");
  if (target.id === p.userId || role === "admin") throw permissionDenied("Admins cannot be hijacked.");
  const issued = await issueHijackSession(env, p, target.id);
  const now = Date.now();
  await eventStatement(env.DB, {
    accountId: p.accountId,
    type: "user.hijacked",
    objectId: target.id,
    data: {
      user: reverse(baseUrl, "users", target.id),
      hijacked_by: reverse(baseUrl, "users", p.userId),
      expires_at: new Date(issued.expiresAt!).toISOString(),
    },
    now,
  }).run();
  logLine({
    type: "audit",
    action: "user.hijacked",
    account: p.accountId,
    user: target.id,
    actor: p.userId,
    token: issued.id,
  });
  return { token: issued.token };
}
