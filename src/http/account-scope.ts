import type { Context } from "hono";
import { inSession } from "../db/session";
import { DIRECTORY, databaseNamed, markScoped, shardOfAccount, withDatabase } from "../db/shards";
import type { AppEnv } from "./context";

/**
 * Puts the request's D1 work on the account's own database (contract §24): `c.env.DB` becomes
 * a session on the account's shard, with the bookmark the caller sent for that shard, so every service the
 * route calls reads and writes the account's rows where they live. An account without a shard
 * lives in the directory's database, where the request already is: nothing changes.
 *
 * Returns false when the directory has no such account (a token naming a deleted one): the
 * request stays where it is and its token check fails there as it always did.
 */
export async function scopeToAccount(c: Context<AppEnv>, accountId: string, fresh = false): Promise<boolean> {
  const d1 = c.get("d1");
  const shard = await shardOfAccount(d1.base, accountId, fresh);
  if (shard === undefined) return false;
  const target = databaseNamed(d1.base, shard);
  const current = d1.sessions[d1.sessions.length - 1];
  if (current.database === target) {
    c.env = markScoped(c.env, shard ?? DIRECTORY);
    return true;
  }
  const name = shard ?? DIRECTORY;
  const session = inSession(withDatabase(d1.base, target, name), d1.constraint(name), name);
  d1.sessions.push(session.db);
  c.env = session.env;
  return true;
}
