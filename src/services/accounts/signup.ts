import {
  accountDatabase,
  databaseNamed,
  directoryOf,
  inAccount,
  shardForNewAccount,
  spreadUser,
} from "../../db/shards";
import { CURRENT_VERSION } from "../../http/versions";
import { uuidv7 } from "../../lib/ids";
import { hashPassword } from "../auth/passwords";
import {
  type AccountRoleRow,
  findUserByEmail,
  getAccountRow,
  isUniqueViolation,
  normEmail,
  sendInvitation,
} from ".";

/** Sign-up (contract §2): the account, its first user and the admin role in one D1 batch. */
export async function signUp(
  env: Env,
  input: { name: string; email: string; password: string },
  baseUrl = "",
) {
  const now = Date.now();
  const accountId = uuidv7(now);
  const userId = uuidv7(now);
  const passwordHash = await hashPassword(input.password);
  const shard = await shardForNewAccount(env);
  const roleId = uuidv7(now);
  try {
    await createOnShard(env, accountId, shard, (db) => [
      insertAccount(db, { id: accountId, name: input.name, shard, now }),
      db
        .prepare(
          "INSERT INTO users (id, email, name, password_hash, default_account_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(userId, normEmail(input.email), input.name, passwordHash, accountId, now, now),
      db
        .prepare(
          "INSERT INTO account_roles (id, account_id, user_id, role, created_at, updated_at) VALUES (?, ?, ?, 'admin', ?, ?)",
        )
        .bind(roleId, accountId, userId, now, now),
    ]);
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // A registered e-mail: answer as for a new one (no e-mail oracle, contract §2). The account
    // is made with a pending admin role for the registered user, who is told by e-mail and
    // may accept it; the password sent here is ignored.
    const existing = await findUserByEmail(env, input.email);
    if (!existing) throw err;
    await createOnShard(env, accountId, shard, (db) => [
      insertAccount(db, { id: accountId, name: input.name, shard, now }),
    ]);
    await directoryOf(env)
      .prepare(
        "INSERT INTO account_roles (id, account_id, user_id, role, state, created_at, updated_at) VALUES (?, ?, ?, 'admin', 'pending', ?, ?)",
      )
      .bind(roleId, accountId, existing.id, now, now)
      .run();
    // The registered user is a member of the new account's shard now: its rows go there too.
    await spreadUser(env, existing.id);
    const account = await accountDatabase(env, accountId);
    const role = await account
      .prepare("SELECT * FROM account_roles WHERE account_id = ? AND user_id = ?")
      .bind(accountId, existing.id)
      .first<AccountRoleRow>();
    await sendInvitation(await inAccount(env, accountId), baseUrl, role!, input.name);
    return {
      account: (await getAccountRow(await inAccount(env, accountId), accountId))!,
      userId: existing.id,
    };
  }
  return { account: (await getAccountRow(await inAccount(env, accountId), accountId))!, userId };
}

const insertAccount = (db: D1Database, a: { id: string; name: string; shard: string | null; now: number }) =>
  db
    .prepare(
      "INSERT INTO accounts (id, name, api_version, shard, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(a.id, a.name, CURRENT_VERSION, a.shard, a.now, a.now);

/**
 * A new account's first rows (contract §24): in the directory first, where an e-mail address is
 * unique across every account, then in its shard. Should the shard refuse, the directory's rows
 * go too, so no account is left that lives nowhere.
 */
async function createOnShard(
  env: Env,
  accountId: string,
  shard: string | null,
  build: (db: D1Database) => D1PreparedStatement[],
) {
  const directory = directoryOf(env);
  await directory.batch(build(directory));
  if (shard === null) return;
  try {
    const db = databaseNamed(env, shard);
    await db.batch(build(db));
  } catch (err) {
    await directory.batch([
      directory.prepare("DELETE FROM account_roles WHERE account_id = ?").bind(accountId),
      directory
        .prepare(
          "DELETE FROM users WHERE default_account_id = ? AND id NOT IN (SELECT user_id FROM account_roles)",
        )
        .bind(accountId),
      directory.prepare("DELETE FROM accounts WHERE id = ?").bind(accountId),
    ]);
    throw err;
  }
}
