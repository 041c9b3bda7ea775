import { permissionDenied } from "../../http/errors";
import { CURRENT_VERSION } from "../../http/versions";
import { sha256Hex, timingSafeEqual } from "../../lib/crypto";
import { uuidv7 } from "../../lib/ids";
import { hashPassword } from "../auth/passwords";
import { type AccountRow, getAccountRow } from ".";

const enc = new TextEncoder();

/**
 * The first admin of a deployment where sign-up is closed. The operator sets a one-time
 * `BOOTSTRAP_TOKEN` secret and presents it; the account is created only while the database
 * has no account at all (checked in the INSERT itself, so two racing calls make one), after
 * which the token opens nothing and the operator deletes the secret.
 */
export async function bootstrapFirstAdmin(
  env: Env,
  presented: string | undefined,
  input: { name: string; email: string; password: string },
): Promise<{ account: AccountRow; userId: string }> {
  const expected = env.BOOTSTRAP_TOKEN;
  // Compared as digests, so the comparison's time does not depend on where they differ.
  if (
    !expected ||
    expected.length < 32 ||
    !presented ||
    !timingSafeEqual(enc.encode(await sha256Hex(presented)), enc.encode(await sha256Hex(expected)))
  ) {
    throw permissionDenied("Bootstrap is not open: BOOTSTRAP_TOKEN is unset or does not match.");
  }
  const now = Date.now();
  const accountId = uuidv7(now);
  const userId = uuidv7(now);
  const passwordHash = await hashPassword(input.password);
  const created = "EXISTS (SELECT 1 FROM accounts WHERE id = ?)";
  const [account] = await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO accounts (id, name, api_version, created_at, updated_at)
       SELECT ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM accounts)`,
    ).bind(accountId, input.name, CURRENT_VERSION, now, now),
    env.DB.prepare(
      `INSERT INTO users (id, email, name, password_hash, default_account_id, created_at, updated_at)
       SELECT ?, ?, ?, ?, ?, ?, ? WHERE ${created}`,
    ).bind(
      userId,
      input.email.trim().toLowerCase(),
      input.name,
      passwordHash,
      accountId,
      now,
      now,
      accountId,
    ),
    env.DB.prepare(
      `INSERT INTO account_roles (id, account_id, user_id, role, created_at, updated_at)
       SELECT ?, ?, ?, 'admin', ?, ? WHERE ${created}`,
    ).bind(uuidv7(now), accountId, userId, now, now, accountId),
  ]);
  if (account.meta.changes !== 1) throw permissionDenied("This deployment already has an account.");
  return { account: (await getAccountRow(env, accountId))!, userId };
}
