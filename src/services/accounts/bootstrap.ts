import { copyRows, databaseNamed, directoryOf, inAccount, shardForNewAccount } from "../../db/shards";
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
  const shard = await shardForNewAccount(env);
  const directory = directoryOf(env);
  const [account] = await directory.batch([
    directory
      .prepare(
        `INSERT INTO accounts (id, name, api_version, shard, created_at, updated_at)
       SELECT ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM accounts)`,
      )
      .bind(accountId, input.name, CURRENT_VERSION, shard, now, now),
    directory
      .prepare(
        `INSERT INTO users (id, email, name, password_hash, default_account_id, created_at, updated_at)
       SELECT ?, ?, ?, ?, ?, ?, ? WHERE ${created}`,
      )
      .bind(
        userId,
        input.email.trim().toLowerCase(),
        input.name,
        passwordHash,
        accountId,
        now,
        now,
        accountId,
      ),
    directory
      .prepare(
        `INSERT INTO account_roles (id, account_id, user_id, role, created_at, updated_at)
       SELECT ?, ?, ?, 'admin', ?, ? WHERE ${created}`,
      )
      .bind(uuidv7(now), accountId, userId, now, now, accountId),
  ]);
  if (account.meta.changes !== 1) throw permissionDenied("This deployment already has an account.");
  // The account's rows in its shard too (contract §24). Should that fail, the directory's go
  // again, so the deployment is still empty and bootstrap can be run once more.
  if (shard !== null) {
    const db = databaseNamed(env, shard);
    try {
      await copyRows(directory, db, "accounts", "id = ?", [accountId]);
      await copyRows(directory, db, "users", "id = ?", [userId]);
      await copyRows(directory, db, "account_roles", "account_id = ?", [accountId]);
    } catch (err) {
      await directory.batch([
        directory.prepare("DELETE FROM account_roles WHERE account_id = ?").bind(accountId),
        directory.prepare("DELETE FROM users WHERE id = ?").bind(userId),
        directory.prepare("DELETE FROM accounts WHERE id = ?").bind(accountId),
      ]);
      throw err;
    }
  }
  return { account: (await getAccountRow(await inAccount(env, accountId), accountId))!, userId };
}
