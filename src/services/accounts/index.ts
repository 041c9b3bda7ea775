import type { RoleName, RoleState } from "../../db/schema";
import { directoryOf, replicate, spreadUser } from "../../db/shards";
import { fieldError, notFound, permissionDenied } from "../../http/errors";
import { paginateByCreation } from "../../http/pagination";
import { uuidv7 } from "../../lib/ids";
import { hashPassword, verifyPassword } from "../auth/passwords";
import type { Principal } from "../auth/principal";
import { assertNotHijack } from "../auth/tokens";
import { closeRevokedStreams, closeStreamsOfUser } from "../live";
import { emailSenderFromEnv } from "../messaging/email";
import { ACTIVATION_TTL_MS, consumeUserToken, issueUserToken } from "../user-tokens";

export type AccountRow = {
  id: string;
  name: string;
  api_version: string;
  feature_allow_worker_reordering: number;
  transit_active_limit: number | null;
  failed_reasons: string;
  review_emails_to_assignee: number;
  language: string;
  timezone: string;
  feature_signer_name: number;
  map_provider: string;
  google_maps_region: string | null;
  optimize_earliest_start: string;
  optimize_latest_end: string;
  optimize_visit_duration_margin: string;
  pod_show_images: number;
  pod_show_signatures: number;
  pod_show_task_events: number;
  pod_show_task_event_creators: number;
  pod_show_reference: number;
  pod_show_description: number;
  tracker_task_popup_template: string;
  data_retention_days: number | null;
  position_retention_days: number;
  auto_assign: "off" | "insert";
  created_at: number;
  updated_at: number;
};

export type UserRow = {
  id: string;
  email: string;
  name: string;
  is_active: number;
  default_account_id: string | null;
  email_verified_at?: number | null;
  created_at: number;
  updated_at: number;
  role?: RoleName | null;
  /** The role's id and duty in the account read in (contract §28: `GET /users/me/`). */
  role_id?: string | null;
  on_duty?: number | null;
};

export type AccountRoleRow = {
  id: string;
  account_id: string;
  user_id: string;
  role: RoleName;
  state: RoleState;
  is_active: number;
  show_travel_estimates: number;
  /** JSON list of up to 3 non-negative integers; empty = unlimited. */
  vehicle_capacity: string;
  /** JSON Address objects with their geocoding outcome, or null. */
  start_address: string | null;
  end_address: string | null;
  /** Contract §28. */
  on_duty: number;
  created_at: number;
  updated_at: number;
};

export const normEmail = (e: string) => e.trim().toLowerCase();

export function isUniqueViolation(err: unknown): boolean {
  return /UNIQUE constraint failed/i.test(String((err as Error)?.message ?? err));
}

export async function findUserByEmail(env: Env, email: string) {
  return directoryOf(env)
    .prepare("SELECT id, email FROM users WHERE email = ?")
    .bind(normEmail(email))
    .first<{ id: string; email: string }>();
}

export async function getAccountRow(env: Env, id: string) {
  return env.DB.prepare("SELECT * FROM accounts WHERE id = ?").bind(id).first<AccountRow>();
}

/**
 * The account the caller's token acts in (contract §2): what a request may read or change is
 * decided against that account alone, never the user's roles elsewhere, so any other id is 404
 * (a user in two accounts exchanges a session for an authorization JWT of the other one).
 */
export async function getAccountFor(env: Env, p: Principal, id: string) {
  const row = id === p.accountId ? await getAccountRow(env, id) : null;
  if (!row) throw notFound();
  return row;
}

/**
 * `GET /accounts/`: the token's account, as a one-item page, so lists and details agree. The
 * other accounts of a user are reached through `POST /session_tokens/authorize/`.
 */
export async function listAccountsFor(env: Env, p: Principal) {
  return [await getAccountFor(env, p, p.accountId)];
}

/** Accounts in which a user holds an accepted, active role: what `/session_tokens/authorize/` may exchange for. */
export async function memberAccount(env: Env, userId: string, id: string) {
  // The user's roles in every account: the directory's (contract §24).
  const row = await directoryOf(env)
    .prepare(
      "SELECT a.* FROM accounts a JOIN account_roles r ON r.account_id = a.id AND r.user_id = ? AND r.is_active = 1 AND r.state = 'active' WHERE a.id = ?",
    )
    .bind(userId, id)
    .first<AccountRow>();
  if (!row) throw notFound();
  return row;
}

/** Validated by the API's zod schema: its keys are columns of `accounts`. */
export type AccountPatch = Record<string, string | number | boolean | string[] | null | undefined>;

export async function updateAccount(env: Env, p: Principal, id: string, patch: AccountPatch) {
  await getAccountFor(env, p, id);
  if (p.role !== "admin") throw permissionDenied("Only account admins can change account settings.");
  const sets: string[] = [];
  const params: unknown[] = [];
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    sets.push(`${k} = ?`);
    params.push(Array.isArray(v) ? JSON.stringify(v) : typeof v === "boolean" ? (v ? 1 : 0) : v);
  }
  if (sets.length) {
    sets.push("updated_at = ?");
    params.push(Date.now(), id);
    await replicate(env, { accountIds: [id] }, (db) => [
      db.prepare(`UPDATE accounts SET ${sets.join(", ")} WHERE id = ?`).bind(...params),
    ]);
  }
  return (await getAccountRow(env, id))!;
}

export async function roleIn(env: Env, userId: string, accountId: string): Promise<RoleName | null> {
  const r = await env.DB.prepare(
    "SELECT role FROM account_roles WHERE user_id = ? AND account_id = ? AND is_active = 1 AND state = 'active'",
  )
    .bind(userId, accountId)
    .first<{ role: RoleName }>();
  return r?.role ?? null;
}

const USER_COLS =
  "u.id, u.email, u.name, u.is_active, u.default_account_id, u.email_verified_at, u.created_at, u.updated_at, r.role, r.id AS role_id, r.on_duty";

/**
 * A user is visible when it has an accepted role in the caller's account; anything else is
 * 404. A pending role (an invitation, or a new user before activation) shows nothing of the
 * user, so an invitation tells the inviting account nothing about a registered user.
 */
export async function getUserInAccount(env: Env, accountId: string, userId: string) {
  const row = await env.DB.prepare(
    `SELECT ${USER_COLS} FROM users u JOIN account_roles r ON r.user_id = u.id AND r.account_id = ? AND r.state = 'active' WHERE u.id = ?`,
  )
    .bind(accountId, userId)
    .first<UserRow>();
  if (!row) throw notFound();
  return row;
}

type ListQuery = { role?: RoleName; cursor?: string; page_size?: number };

/** Users with a role in the caller's account, oldest first. */
export function listUsers(env: Env, p: Principal, q: ListQuery, url: string) {
  const where = ["r.account_id = ?", "r.state = 'active'"];
  const params: unknown[] = [p.accountId];
  if (q.role) {
    where.push("r.role = ?");
    params.push(q.role);
  }
  return paginateByCreation<UserRow>({
    db: env.DB,
    select: `SELECT ${USER_COLS} FROM users u JOIN account_roles r ON r.user_id = u.id`,
    where,
    params,
    createdExpr: "u.created_at",
    idExpr: "u.id",
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

/** Roles of the caller's account, oldest first. */
export function listRoles(env: Env, p: Principal, q: ListQuery, url: string) {
  const where = ["account_id = ?"];
  const params: unknown[] = [p.accountId];
  if (q.role) {
    where.push("role = ?");
    params.push(q.role);
  }
  return paginateByCreation<AccountRoleRow>({
    db: env.DB,
    select: "SELECT * FROM account_roles",
    where,
    params,
    cursor: q.cursor,
    pageSize: q.page_size,
    url,
  });
}

type Invite = { email: string; name?: string; password?: string; role: RoleName };

/**
 * Adds an e-mail to the caller's account with a role (contract §2). A registered e-mail gets a
 * pending role (an invitation) that grants nothing until that user accepts it; a new e-mail
 * gets a new user, active at once when the admin set a password, else pending until the user
 * activates it from the e-mailed link. Either way the caller learns the same: the role.
 */
export async function inviteByEmail(env: Env, p: Principal, input: Invite, baseUrl: string) {
  const email = normEmail(input.email);
  const now = Date.now();
  let existing = await findUserByEmail(env, email);
  if (!existing) {
    const userId = uuidv7(now);
    const hash = input.password ? await hashPassword(input.password) : null;
    const state = hash ? "active" : "pending";
    try {
      const roleId = uuidv7(now);
      // The directory first: an e-mail address is unique across every account.
      await replicate(
        env,
        { accountIds: [p.accountId] },
        (db) => [
          db
            .prepare(
              "INSERT INTO users (id, email, name, password_hash, is_active, default_account_id, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?)",
            )
            .bind(userId, email, input.name ?? "", hash, p.accountId, now, now),
          db
            .prepare(
              "INSERT INTO account_roles (id, account_id, user_id, role, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(roleId, p.accountId, userId, input.role, state, now, now),
        ],
        { directoryFirst: true },
      );
      if (!hash) {
        const token = await issueUserToken(env, {
          kind: "activation",
          userId,
          accountId: p.accountId,
          ttlMs: ACTIVATION_TTL_MS,
        });
        await sendActivation(env, baseUrl, { email, accountId: p.accountId, token });
      }
      return { userId, role: (await roleOf(env, p.accountId, userId))! };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // Registered meanwhile by a concurrent request: invite that user instead.
      existing = await findUserByEmail(env, email);
      if (!existing) throw err;
    }
  }
  const before = await roleOf(env, p.accountId, existing.id);
  if (before) throw fieldError("email", "This user already has a role in this account.");
  try {
    // The directory first (it has the user); the account's shard gets the role with the
    // user's other rows, which it may not have had (contract §24).
    await directoryOf(env)
      .prepare(
        "INSERT INTO account_roles (id, account_id, user_id, role, state, created_at, updated_at) VALUES (?, ?, ?, ?, 'pending', ?, ?)",
      )
      .bind(uuidv7(now), p.accountId, existing.id, input.role, now, now)
      .run();
  } catch (err) {
    if (isUniqueViolation(err)) throw fieldError("email", "This user already has a role in this account.");
    throw err;
  }
  await spreadUser(env, existing.id);
  const role = (await roleOf(env, p.accountId, existing.id))!;
  const account = await getAccountRow(env, p.accountId);
  await sendInvitation(env, baseUrl, role, account?.name ?? "");
  return { userId: existing.id, role };
}

async function roleOf(env: Env, accountId: string, userId: string) {
  return env.DB.prepare("SELECT * FROM account_roles WHERE account_id = ? AND user_id = ?")
    .bind(accountId, userId)
    .first<AccountRoleRow>();
}

export async function sendInvitation(env: Env, baseUrl: string, role: AccountRoleRow, accountName: string) {
  const user = await env.DB.prepare("SELECT email FROM users WHERE id = ?")
    .bind(role.user_id)
    .first<{ email: string }>();
  await emailSenderFromEnv(env).send({
    kind: "invitation",
    accountId: role.account_id,
    to: user!.email,
    subject: `Invitation to ${accountName || "an account"}`,
    text:
      `You are invited to the account "${accountName}" as ${role.role}.\n\n` +
      `To accept, sign in and send POST ${baseUrl}/account_roles/${role.id}/accept/\n` +
      "Ignore this message to decline: the invitation grants nothing until you accept it.\n",
  });
}

export async function sendActivation(
  env: Env,
  baseUrl: string,
  m: { email: string; accountId: string; token: string },
) {
  await emailSenderFromEnv(env).send({
    kind: "activation",
    accountId: m.accountId,
    to: m.email,
    subject: "Activate your account",
    text:
      "An account was created for you. Choose a password to activate it (the token is valid 7 days, once):\n\n" +
      `POST ${baseUrl}/users/activate/ {"token": "${m.token}", "password": "<your password>"}\n\n` +
      `token: ${m.token}\n`,
  });
}

/** The 201 of POST /users/: the same fields whether the e-mail was new or registered. */
export function invitedUserView(p: Principal, input: Invite, userId: string, role: AccountRoleRow): UserRow {
  return {
    id: userId,
    email: normEmail(input.email),
    name: input.name ?? "",
    is_active: 1,
    default_account_id: p.accountId,
    created_at: role.created_at,
    updated_at: role.created_at,
    role: role.role,
  };
}

/** `POST /users/activate/`: a single-use activation token sets the password and accepts the role. */
export async function activateUser(env: Env, token: string, password: string) {
  const hash = await hashPassword(password);
  const t = await consumeUserToken(env, "activation", token);
  if (!t) throw fieldError("token", "Invalid or expired token.");
  const now = Date.now();
  await replicate(env, { userIds: [t.user_id], accountIds: t.account_id ? [t.account_id] : [] }, (db) => [
    db.prepare("UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?").bind(hash, now, t.user_id),
    db
      .prepare(
        "UPDATE account_roles SET state = 'active', updated_at = ? WHERE user_id = ? AND account_id = ? AND state = 'pending'",
      )
      .bind(now, t.user_id, t.account_id),
  ]);
}

/** `POST /account_roles/{id}/accept/`: only the invited user accepts; anyone else gets 404. */
export async function acceptRole(env: Env, p: Principal, id: string) {
  assertNotHijack(p);
  // An invitation may be to an account on another shard: the directory has every role.
  const directory = directoryOf(env);
  const row = await directory
    .prepare("SELECT * FROM account_roles WHERE id = ? AND user_id = ?")
    .bind(id, p.userId)
    .first<AccountRoleRow>();
  // An invitation is the user's to accept with their own (session or access) token; a token
  // scoped to one account sees nothing of another's.
  if (!row || (p.tokenKind === "authorization" && row.account_id !== p.accountId)) throw notFound();
  if (row.state === "pending") {
    const now = Date.now();
    await replicate(env, { accountIds: [row.account_id] }, (db) => [
      db.prepare("UPDATE account_roles SET state = 'active', updated_at = ? WHERE id = ?").bind(now, id),
    ]);
  }
  return (await directory
    .prepare("SELECT * FROM account_roles WHERE id = ?")
    .bind(id)
    .first<AccountRoleRow>())!;
}

export async function updateUser(
  env: Env,
  p: Principal,
  userId: string,
  patch: { name?: string; email?: string; password?: string; current_password?: string; is_active?: boolean },
) {
  await getUserInAccount(env, p.accountId, userId);
  const self = userId === p.userId;
  // A user's profile is theirs in every account: an admin acting as them (hijack) may not
  // change it, as that admin could not (below) for a user with roles elsewhere.
  if (self) assertNotHijack(p);
  if (!self && p.role !== "admin") throw permissionDenied();
  if (patch.is_active !== undefined && p.role !== "admin") throw permissionDenied();
  const sensitive =
    patch.password !== undefined ||
    patch.email !== undefined ||
    patch.is_active !== undefined ||
    patch.name !== undefined;
  if (sensitive && !self) {
    // A user may hold roles in several accounts: one account's admin changes the credentials,
    // the name or the activity of a user only when every role of that user is in that account.
    const other = await directoryOf(env)
      .prepare("SELECT 1 AS x FROM account_roles WHERE user_id = ? AND account_id != ? LIMIT 1")
      .bind(userId, p.accountId)
      .first();
    if (other)
      throw permissionDenied("This user also has roles in other accounts; only the user can change this.");
  }
  if (self && (patch.password !== undefined || patch.email !== undefined)) {
    if (!patch.current_password) throw fieldError("current_password", "This field is required.");
    const row = await env.DB.prepare("SELECT password_hash FROM users WHERE id = ?")
      .bind(userId)
      .first<{ password_hash: string | null }>();
    if (!(await verifyPassword(patch.current_password, row?.password_hash)))
      throw fieldError("current_password", "Wrong password.");
  }
  if (self && patch.is_active === false) throw fieldError("is_active", "You cannot deactivate yourself.");
  const sets: string[] = [];
  const params: unknown[] = [];
  if (patch.name !== undefined) {
    sets.push("name = ?");
    params.push(patch.name);
  }
  const newEmail = patch.email !== undefined && normEmail(patch.email) !== (await emailOf(env, userId));
  if (newEmail) {
    // A new address is unverified until its owner confirms it (contract §14).
    sets.push("email = ?", "email_verified_at = NULL");
    params.push(normEmail(patch.email!));
  }
  if (patch.is_active !== undefined) {
    sets.push("is_active = ?");
    params.push(patch.is_active ? 1 : 0);
  }
  if (patch.password !== undefined) {
    sets.push("password_hash = ?");
    params.push(await hashPassword(patch.password));
  }
  if (sets.length) {
    sets.push("updated_at = ?");
    params.push(Date.now(), userId);
    const now = Date.now();
    const stmts = (db: D1Database, isDirectory: boolean) => {
      const list = [db.prepare(`UPDATE users SET ${sets.join(", ")} WHERE id = ?`).bind(...params)];
      // Contract §2: a new password (or a deactivation) ends every other session and access
      // token of the user, in the same batch, so no stolen token outlives the change.
      // Links mailed to the old address verify nothing any more (the directory keeps them).
      if (newEmail && isDirectory) {
        list.push(
          db
            .prepare(
              "UPDATE user_tokens SET used_at = ? WHERE user_id = ? AND kind = 'email_verification' AND used_at IS NULL",
            )
            .bind(now, userId),
        );
      }
      if (patch.password !== undefined || patch.is_active === false) {
        list.push(
          db
            .prepare(
              "UPDATE auth_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL AND id != ?",
            )
            .bind(now, userId, self ? p.tokenId : ""),
        );
      }
      return list;
    };
    try {
      // A new address must be unique across every account: the directory decides first. Else
      // the shards first, where requests check tokens (db/shards.ts, `replicate`).
      await replicate(env, { userIds: [userId] }, stmts, { directoryFirst: newEmail });
    } catch (err) {
      if (isUniqueViolation(err)) throw fieldError("email", "A user with that email already exists.");
      throw err;
    }
    // The tokens revoked above close the live streams they opened (contract §25).
    if (patch.password !== undefined || patch.is_active === false) await closeRevokedStreams(env, userId);
  }
  return getUserInAccount(env, p.accountId, userId);
}

async function emailOf(env: Env, userId: string) {
  const row = await directoryOf(env)
    .prepare("SELECT email FROM users WHERE id = ?")
    .bind(userId)
    .first<{ email: string }>();
  return row?.email ?? null;
}

export async function getRole(env: Env, accountId: string, id: string) {
  const row = await env.DB.prepare("SELECT * FROM account_roles WHERE id = ? AND account_id = ?")
    .bind(id, accountId)
    .first<AccountRoleRow>();
  if (!row) throw notFound();
  return row;
}

/**
 * `POST /account_roles/`: by e-mail, an invitation (see `inviteByEmail`); by `user` URL, only a
 * user already seen by this account (another account's user is "does not exist", contract §2).
 */
export async function createRole(
  env: Env,
  p: Principal,
  input: { userId?: string; email?: string; role: RoleName },
  baseUrl: string,
) {
  if (input.email !== undefined && !input.userId) {
    return (await inviteByEmail(env, p, { email: input.email, role: input.role }, baseUrl)).role;
  }
  const known = await roleOf(env, p.accountId, input.userId ?? "");
  if (!known) throw fieldError("user", "Invalid hyperlink - Object does not exist.");
  throw fieldError("user", "This user already has a role in this account.");
}

export async function deleteRole(env: Env, p: Principal, id: string) {
  const row = await getRole(env, p.accountId, id);
  if (row.user_id === p.userId) throw fieldError("non_field_errors", "Admins cannot remove their own role.");
  await replicate(env, { accountIds: [p.accountId] }, (db) => [
    db.prepare("DELETE FROM account_roles WHERE id = ?").bind(id),
  ]);
  await closeStreamsOfUser(env, p.accountId, row.user_id);
}
