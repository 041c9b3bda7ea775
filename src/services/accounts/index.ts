import type { RoleName } from "../../db/schema";
import { fieldError, notFound, permissionDenied } from "../../http/errors";
import { paginateByCreation } from "../../http/pagination";
import { CURRENT_VERSION } from "../../http/versions";
import { uuidv7 } from "../../lib/ids";
import { hashPassword } from "../auth/passwords";
import type { Principal } from "../auth/principal";

export type AccountRow = {
  id: string;
  name: string;
  api_version: string;
  feature_allow_worker_reordering: number;
  transit_active_limit: number | null;
  failed_reasons: string;
  review_emails_to_assignee: number;
  language: string;
  created_at: number;
  updated_at: number;
};

export type UserRow = {
  id: string;
  email: string;
  name: string;
  is_active: number;
  default_account_id: string | null;
  created_at: number;
  updated_at: number;
  role?: RoleName | null;
};

export type AccountRoleRow = {
  id: string;
  account_id: string;
  user_id: string;
  role: RoleName;
  is_active: number;
  created_at: number;
  updated_at: number;
};

const normEmail = (e: string) => e.trim().toLowerCase();

function isUniqueViolation(err: unknown): boolean {
  return /UNIQUE constraint failed/i.test(String((err as Error)?.message ?? err));
}

/** Sign-up (contract §2): the account, its first user and the admin role in one D1 batch. */
export async function signUp(env: Env, input: { name: string; email: string; password: string }) {
  const now = Date.now();
  const accountId = uuidv7(now);
  const userId = uuidv7(now);
  const passwordHash = await hashPassword(input.password);
  try {
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO accounts (id, name, api_version, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
      ).bind(accountId, input.name, CURRENT_VERSION, now, now),
      env.DB.prepare(
        "INSERT INTO users (id, email, name, password_hash, default_account_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ).bind(userId, normEmail(input.email), input.name, passwordHash, accountId, now, now),
      env.DB.prepare(
        "INSERT INTO account_roles (id, account_id, user_id, role, created_at, updated_at) VALUES (?, ?, ?, 'admin', ?, ?)",
      ).bind(uuidv7(now), accountId, userId, now, now),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw fieldError("email", "A user with that email already exists.");
    throw err;
  }
  return { account: (await getAccountRow(env, accountId))!, userId };
}

export async function getAccountRow(env: Env, id: string) {
  return env.DB.prepare("SELECT * FROM accounts WHERE id = ?").bind(id).first<AccountRow>();
}

/** Accounts in which the caller has an active role; any other id is 404 (contract §2). */
export async function getAccountFor(env: Env, p: Principal, id: string) {
  const row = await env.DB.prepare(
    "SELECT a.* FROM accounts a JOIN account_roles r ON r.account_id = a.id AND r.user_id = ? AND r.is_active = 1 WHERE a.id = ?",
  )
    .bind(p.userId, id)
    .first<AccountRow>();
  if (!row) throw notFound();
  return row;
}

export async function listAccountsFor(env: Env, p: Principal) {
  const { results } = await env.DB.prepare(
    "SELECT a.* FROM accounts a JOIN account_roles r ON r.account_id = a.id AND r.user_id = ? AND r.is_active = 1 ORDER BY a.created_at, a.id",
  )
    .bind(p.userId)
    .all<AccountRow>();
  return results;
}

export type AccountPatch = Partial<{
  name: string;
  api_version: string;
  feature_allow_worker_reordering: boolean;
  transit_active_limit: number | null;
  failed_reasons: string[];
  review_emails_to_assignee: boolean;
  language: string;
}>;

export async function updateAccount(env: Env, p: Principal, id: string, patch: AccountPatch) {
  await getAccountFor(env, p, id);
  const role = await roleIn(env, p.userId, id);
  if (role !== "admin") throw permissionDenied("Only account admins can change account settings.");
  const sets: string[] = [];
  const params: unknown[] = [];
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    sets.push(`${k} = ?`);
    params.push(k === "failed_reasons" ? JSON.stringify(v) : typeof v === "boolean" ? (v ? 1 : 0) : v);
  }
  if (sets.length) {
    sets.push("updated_at = ?");
    params.push(Date.now(), id);
    await env.DB.prepare(`UPDATE accounts SET ${sets.join(", ")} WHERE id = ?`)
      .bind(...params)
      .run();
  }
  return (await getAccountRow(env, id))!;
}

export async function roleIn(env: Env, userId: string, accountId: string): Promise<RoleName | null> {
  const r = await env.DB.prepare(
    "SELECT role FROM account_roles WHERE user_id = ? AND account_id = ? AND is_active = 1",
  )
    .bind(userId, accountId)
    .first<{ role: RoleName }>();
  return r?.role ?? null;
}

const USER_COLS =
  "u.id, u.email, u.name, u.is_active, u.default_account_id, u.created_at, u.updated_at, r.role";

/** A user is visible when it has a role in the caller's account; anything else is 404. */
export async function getUserInAccount(env: Env, accountId: string, userId: string) {
  const row = await env.DB.prepare(
    `SELECT ${USER_COLS} FROM users u JOIN account_roles r ON r.user_id = u.id AND r.account_id = ? WHERE u.id = ?`,
  )
    .bind(accountId, userId)
    .first<UserRow>();
  if (!row) throw notFound();
  return row;
}

type ListQuery = { role?: RoleName; cursor?: string; page_size?: number };

/** Users with a role in the caller's account, oldest first. */
export function listUsers(env: Env, p: Principal, q: ListQuery, url: string) {
  const where = ["r.account_id = ?"];
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

/** Admins add users to their account with a role (contract §2). */
export async function createUser(
  env: Env,
  p: Principal,
  input: { email: string; name?: string; password?: string; role: RoleName },
) {
  const now = Date.now();
  const userId = uuidv7(now);
  const hash = input.password ? await hashPassword(input.password) : null;
  try {
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO users (id, email, name, password_hash, is_active, default_account_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ).bind(userId, normEmail(input.email), input.name ?? "", hash, 1, p.accountId, now, now),
      env.DB.prepare(
        "INSERT INTO account_roles (id, account_id, user_id, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
      ).bind(uuidv7(now), p.accountId, userId, input.role, now, now),
    ]);
  } catch (err) {
    if (isUniqueViolation(err)) throw fieldError("email", "A user with that email already exists.");
    throw err;
  }
  return getUserInAccount(env, p.accountId, userId);
}

export async function updateUser(
  env: Env,
  p: Principal,
  userId: string,
  patch: { name?: string; password?: string; is_active?: boolean },
) {
  await getUserInAccount(env, p.accountId, userId);
  if (userId !== p.userId && p.role !== "admin") throw permissionDenied();
  if (patch.is_active !== undefined && p.role !== "admin") throw permissionDenied();
  const sets: string[] = [];
  const params: unknown[] = [];
  if (patch.name !== undefined) {
    sets.push("name = ?");
    params.push(patch.name);
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
    await env.DB.prepare(`UPDATE users SET ${sets.join(", ")} WHERE id = ?`)
      .bind(...params)
      .run();
  }
  return getUserInAccount(env, p.accountId, userId);
}

export async function getRole(env: Env, accountId: string, id: string) {
  const row = await env.DB.prepare("SELECT * FROM account_roles WHERE id = ? AND account_id = ?")
    .bind(id, accountId)
    .first<AccountRoleRow>();
  if (!row) throw notFound();
  return row;
}

/** Gives an existing user (named by URL or e-mail) a role in the caller's account. */
export async function createRole(
  env: Env,
  p: Principal,
  input: { userId?: string; email?: string; role: RoleName },
) {
  const user = input.userId
    ? await env.DB.prepare("SELECT id FROM users WHERE id = ?").bind(input.userId).first<{ id: string }>()
    : await env.DB.prepare("SELECT id FROM users WHERE email = ?")
        .bind(normEmail(input.email ?? ""))
        .first<{ id: string }>();
  if (!user) throw fieldError(input.userId ? "user" : "email", "Invalid hyperlink - Object does not exist.");
  const now = Date.now();
  const id = uuidv7(now);
  try {
    await env.DB.prepare(
      "INSERT INTO account_roles (id, account_id, user_id, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
    )
      .bind(id, p.accountId, user.id, input.role, now, now)
      .run();
  } catch (err) {
    if (isUniqueViolation(err)) throw fieldError("user", "This user already has a role in this account.");
    throw err;
  }
  return getRole(env, p.accountId, id);
}

export async function updateRole(
  env: Env,
  p: Principal,
  id: string,
  patch: { role?: RoleName; is_active?: boolean },
) {
  const row = await getRole(env, p.accountId, id);
  if (row.user_id === p.userId && ((patch.role && patch.role !== "admin") || patch.is_active === false)) {
    throw fieldError("role", "Admins cannot demote or deactivate themselves.");
  }
  await env.DB.prepare(
    "UPDATE account_roles SET role = COALESCE(?, role), is_active = COALESCE(?, is_active), updated_at = ? WHERE id = ?",
  )
    .bind(patch.role ?? null, patch.is_active === undefined ? null : patch.is_active ? 1 : 0, Date.now(), id)
    .run();
  return getRole(env, p.accountId, id);
}

export async function deleteRole(env: Env, p: Principal, id: string) {
  const row = await getRole(env, p.accountId, id);
  if (row.user_id === p.userId) throw fieldError("non_field_errors", "Admins cannot remove their own role.");
  await env.DB.prepare("DELETE FROM account_roles WHERE id = ?").bind(id).run();
}
