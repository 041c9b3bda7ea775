import type { UserTokenKind } from "../../db/schema";
import { directoryOf } from "../../db/shards";
import { randomToken, sha256Hex } from "../../lib/crypto";
import { uuidv7 } from "../../lib/ids";

export const ACTIVATION_TTL_MS = 7 * 24 * 3600 * 1000;

/**
 * Issues a single-use token of `kind` for a user and invalidates the user's earlier unused
 * tokens of that kind (a re-sent link replaces the old one). Only the SHA-256 is stored, so a
 * database export yields no usable token.
 */
export async function issueUserToken(
  env: Env,
  input: { kind: UserTokenKind; userId: string; accountId: string | null; ttlMs: number },
): Promise<string> {
  const token = randomToken(32);
  const now = Date.now();
  // E-mailed links are opened anonymously: they live in the directory (contract §24).
  const db = directoryOf(env);
  await db.batch([
    db
      .prepare("UPDATE user_tokens SET used_at = ? WHERE user_id = ? AND kind = ? AND used_at IS NULL")
      .bind(now, input.userId, input.kind),
    db
      .prepare(
        "INSERT INTO user_tokens (id, kind, user_id, account_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      )
      .bind(
        uuidv7(now),
        input.kind,
        input.userId,
        input.accountId,
        await sha256Hex(token),
        now,
        now + input.ttlMs,
      ),
  ]);
  return token;
}

/**
 * Consumes a token: one UPDATE marks it used only if it is of `kind`, unused and unexpired,
 * so two concurrent requests with the same token cannot both succeed. Null when it is not valid.
 */
export async function consumeUserToken(
  env: Env,
  kind: UserTokenKind,
  token: string,
): Promise<{ user_id: string; account_id: string | null } | null> {
  const now = Date.now();
  return directoryOf(env)
    .prepare(
      "UPDATE user_tokens SET used_at = ? WHERE token_hash = ? AND kind = ? AND used_at IS NULL AND expires_at > ? RETURNING user_id, account_id",
    )
    .bind(now, await sha256Hex(token), kind, now)
    .first<{ user_id: string; account_id: string | null }>();
}
