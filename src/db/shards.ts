/**
 * Where an account's data lives (contract §24, issue 29): the directory database (the `DB`
 * binding) says, per account, which shard binding holds its rows (`accounts.shard`); the shard
 * bindings are the D1 databases named in the `SHARDS` setting (`SHARD_0,SHARD_1`). An account
 * whose `shard` is null lives in the directory's own database, where every account lived before
 * shards existed, so an existing deployment keeps working unchanged and moves its accounts out
 * with `npm run accounts:move` when it likes.
 *
 * Every database carries the same schema (one migration history, applied to each): the
 * directory's copies of account tables hold the accounts that never moved, a shard's copies of
 * the global tables hold the rows its accounts' statements join.
 *
 * This module is the only code that reads a `SHARD_*` binding (scripts/check-layout.mjs).
 */

/** The name the directory's own database goes by where a shard's name would stand. */
export const DIRECTORY = "DB";

const NAME_RE = /^SHARD_[0-9]+$/;

/** The shard bindings the `SHARDS` setting names, in order; each must be a D1 binding. */
export function shardNames(env: Env): string[] {
  const names = (env.SHARDS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!NAME_RE.test(name)) throw new Error(`SHARDS: "${name}" is not a shard binding name (SHARD_<n>)`);
    if (!isDatabase((env as unknown as Record<string, unknown>)[name]))
      throw new Error(`SHARDS names ${name}, which is not a D1 binding of this Worker (wrangler.jsonc)`);
  }
  return names;
}

const isDatabase = (b: unknown): b is D1Database =>
  typeof b === "object" && b !== null && typeof (b as D1Database).prepare === "function";

/**
 * The directory database, from any env: a scoped env (`inAccount`) keeps it aside, since its
 * `DB` is then the account's database.
 */
export function directoryOf(env: Env): D1Database {
  return (env as ScopedEnv)[DIRECTORY_DB] ?? env.DB;
}

/** The binding named `name` (a shard, or the directory for null and "DB"). */
export function databaseNamed(env: Env, name: string | null): D1Database {
  if (name === null || name === DIRECTORY) return directoryOf(env);
  if (!shardNames(env).includes(name)) throw new Error(`${name} is not a shard listed in SHARDS`);
  return (env as unknown as Record<string, D1Database>)[name];
}

/** Every database an account may live in: the directory's own first, then each shard. */
export function everyDatabase(env: Env): { name: string; db: D1Database }[] {
  return [
    { name: DIRECTORY, db: directoryOf(env) },
    ...shardNames(env).map((name) => ({ name, db: databaseNamed(env, name) })),
  ];
}

const DIRECTORY_DB = Symbol("directory database");
const DATABASE_NAME = Symbol("database name");
type ScopedEnv = Env & { [DIRECTORY_DB]?: D1Database; [DATABASE_NAME]?: string };

/**
 * `env` whose `DB` is `db` (the account's database, or a session on it), the directory kept
 * for `directoryOf`. Services prepare on `env.DB` as before: in an account's scope that is the
 * account's own database.
 */
export function withDatabase(env: Env, db: D1Database, name: string): Env {
  const directory = directoryOf(env);
  return Object.create(env, {
    DB: { value: db, enumerable: true },
    [DIRECTORY_DB]: { value: directory },
    [DATABASE_NAME]: { value: name },
  }) as Env;
}

/**
 * Which shard an account lives in, as this isolate last read it from the directory, for at most
 * PLACEMENT_TTL_MS: a move (services/accounts/move.ts) switches the directory's entry, then
 * waits that long before it deletes the old copy, so no isolate still reads from it.
 */
const placed = new Map<string, { shard: string | null; at: number }>();
const MAX_PLACED = 50_000;
export const PLACEMENT_TTL_MS = 10_000;

/** The account's shard name (null: the directory's own database); undefined: no such account. */
export async function shardOfAccount(
  env: Env,
  accountId: string,
  fresh = false,
): Promise<string | null | undefined> {
  const known = placed.get(accountId);
  if (!fresh && known && Date.now() - known.at < PLACEMENT_TTL_MS) return known.shard;
  const row = await directoryOf(env)
    .prepare("SELECT shard FROM accounts WHERE id = ?")
    .bind(accountId)
    .first<{ shard: string | null }>();
  if (!row) return undefined;
  if (placed.size >= MAX_PLACED) placed.clear();
  placed.set(accountId, { shard: row.shard, at: Date.now() });
  return row.shard;
}

/** The database that holds the account's rows (the directory's own when it has no shard). */
export async function accountDatabase(env: Env, accountId: string, fresh = false): Promise<D1Database> {
  // No shard configured: every account lives in the directory's database, nothing to look up.
  if (shardNames(env).length === 0) return directoryOf(env);
  const shard = await shardOfAccount(env, accountId, fresh);
  return databaseNamed(env, shard ?? null);
}

/** `env` scoped to the account: its `DB` is the account's database (queues, cron, objects). */
export async function inAccount(env: Env, accountId: string): Promise<Env> {
  if (shardNames(env).length === 0) return env;
  const shard = (await shardOfAccount(env, accountId)) ?? DIRECTORY;
  return withDatabase(env, databaseNamed(env, shard), shard);
}

/**
 * The shard a new account goes to: the one with the most room, i.e. the smallest database
 * (D1 reports its size after every statement, `meta.size_after`); null when `SHARDS` lists
 * none, so the account lives in the directory's own database. Ties go to the first listed.
 */
export async function shardForNewAccount(env: Env): Promise<string | null> {
  const names = shardNames(env);
  if (names.length === 0) return null;
  const sizes = await Promise.all(
    names.map(async (name) => {
      const r = await databaseNamed(env, name).prepare("SELECT 1").run();
      return Number((r.meta as { size_after?: number }).size_after ?? 0);
    }),
  );
  let best = 0;
  for (let i = 1; i < names.length; i++) if (sizes[i] < sizes[best]) best = i;
  return names[best];
}

/** Forgets what this isolate knew of an account's place (tests, and a move's own steps). */
export function forgetPlacement(accountId: string) {
  placed.delete(accountId);
}

/**
 * The shards that hold copies of global rows for these accounts and users (db/shards.ts's
 * module comment): an account's shard; for a user, the shard of every account it has a role
 * in. The directory itself is not among them. Empty without shards.
 */
export async function shardsOf(
  env: Env,
  scope: { accountIds?: string[]; userIds?: string[] },
): Promise<D1Database[]> {
  if (shardNames(env).length === 0) return [];
  const names = new Set<string>();
  for (const id of scope.accountIds ?? []) {
    const shard = await shardOfAccount(env, id);
    if (shard) names.add(shard);
  }
  if (scope.userIds?.length) {
    const { results } = await directoryOf(env)
      .prepare(
        `SELECT DISTINCT a.shard FROM account_roles r JOIN accounts a ON a.id = r.account_id
  WHERE r.user_id IN (SELECT value FROM json_each(?)) AND a.shard IS NOT NULL`,
      )
      .bind(JSON.stringify(scope.userIds))
      .all<{ shard: string }>();
    for (const r of results) names.add(r.shard);
  }
  return [...names].map((name) => databaseNamed(env, name));
}

/**
 * A write of global rows (accounts, users, roles, tokens: what the directory holds) made
 * everywhere they are kept: on each shard that keeps a copy for its accounts' statements (the
 * token check of a request and the joins of its reads run there), and on the directory. The
 * shards go first, so a crash between the two leaves the copy a request checks at least as
 * strict as the directory (a revocation, a removed role); `directoryFirst` reverses it for a
 * write the directory must admit first (an e-mail address unique across accounts), and the
 * shards then follow. `build` makes the batch for one database (told whether it is the
 * directory, which alone keeps some rows: e-mailed links). Answers the directory's results.
 */
export async function replicate(
  env: Env,
  scope: { accountIds?: string[]; userIds?: string[] },
  build: (db: D1Database, isDirectory: boolean) => D1PreparedStatement[],
  options: { directoryFirst?: boolean } = {},
): Promise<D1Result[]> {
  const shards = await shardsOf(env, scope);
  // The request's own session where the shard is the one it runs on: its bookmark then covers
  // this write (read-your-writes on the next request, contract §24).
  const own = (db: D1Database) => (sameDatabase(env.DB, db) ? env.DB : db);
  const onShards = () => Promise.all(shards.map((db) => own(db).batch(build(own(db), false))));
  const directory = directoryOf(env);
  const onDirectory = () => own(directory).batch(build(own(directory), true));
  if (options.directoryFirst) {
    const results = await onDirectory();
    await onShards();
    return results;
  }
  await onShards();
  return onDirectory();
}

/** Whether `db` (a binding or a request's session on one) runs on `binding`. */
function sameDatabase(db: D1Database, binding: D1Database): boolean {
  if (db === binding) return true;
  const inner = (db as unknown as { database?: D1Database }).database;
  return inner === binding;
}

/**
 * Copies rows of `table` matching `where` from one database to another, as they are: a row
 * already there (same `id`) is updated in place, never deleted and inserted again, so rows that
 * name it by a foreign key stay valid. A user joining an account on a shard that had no copy of
 * them, bootstrap, and the move of an account use it.
 */
export async function copyRows(
  from: D1Database,
  to: D1Database,
  table: string,
  where: string,
  params: unknown[],
): Promise<number> {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`not a table name: ${table}`);
  const { results } = await from
    .prepare(`SELECT * FROM ${table} WHERE ${where}`)
    .bind(...params)
    .all<Record<string, unknown>>();
  await upsertRows(to, table, ["id"], results);
  return results.length;
}

/**
 * Writes rows read from another database of the same schema into `to`: inserted, or where the
 * key (`key`: the primary key's columns, or a unique index's) is taken, updated in place (an
 * upsert, SQLite's `ON CONFLICT DO UPDATE`; `INSERT OR REPLACE` would delete the row first and
 * cascade to its children). BLOBs come out of D1 as arrays of bytes and go back as bytes.
 */
export async function upsertRows(
  to: D1Database,
  table: string,
  key: readonly string[],
  rows: Record<string, unknown>[],
): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const rest = columns.filter((c) => !key.includes(c));
  const sql = `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})
  ON CONFLICT (${key.join(", ")}) DO ${rest.length ? `UPDATE SET ${rest.map((c) => `${c} = excluded.${c}`).join(", ")}` : "NOTHING"}`;
  const statements = rows.map((r) =>
    to
      .prepare(sql)
      .bind(...columns.map((c) => (Array.isArray(r[c]) ? new Uint8Array(r[c] as number[]) : r[c]))),
  );
  for (let i = 0; i < statements.length; i += 50) await to.batch(statements.slice(i, i + 50));
}

/**
 * A user's global rows copied from the directory to every shard where it has a role (after a
 * role is granted: a new member, an invitation), so those shards' token checks and joins find
 * them: its `users` row, its tokens, its roles in that shard's accounts, and a stub of each
 * account it belongs to (foreign keys hold in every D1 database, and its rows name those
 * accounts). Idempotent: running it again repairs a copy a crash left behind. A role granted to
 * an existing user is therefore written to the directory, then spread.
 */
export async function spreadUser(env: Env, userId: string): Promise<void> {
  const shards = await shardsOf(env, { userIds: [userId] });
  if (shards.length === 0) return;
  const directory = directoryOf(env);
  for (const db of shards) {
    await copyUsers(directory, db, [userId]);
    await copyRows(
      directory,
      db,
      "account_roles",
      "user_id = ? AND account_id IN (SELECT id FROM accounts WHERE shard = ?)",
      [userId, shardNameOf(env, db)],
    );
  }
}

/**
 * Users' global rows copied from the directory to `db`: a stub of every account they name (their
 * roles', their default, their tokens': the foreign keys every D1 database enforces), their
 * `users` rows and their tokens. Upserts: running it again repairs a copy. Their roles are the
 * caller's to copy (only those of the accounts `db` holds).
 */
export async function copyUsers(directory: D1Database, db: D1Database, userIds: string[]) {
  if (userIds.length === 0) return;
  const ids = JSON.stringify(userIds);
  const { results: named } = await directory
    .prepare(
      `SELECT account_id AS id FROM account_roles WHERE user_id IN (SELECT value FROM json_each(?1))
  UNION SELECT default_account_id FROM users WHERE id IN (SELECT value FROM json_each(?1)) AND default_account_id IS NOT NULL
  UNION SELECT account_id FROM auth_tokens WHERE user_id IN (SELECT value FROM json_each(?1)) AND account_id IS NOT NULL`,
    )
    .bind(ids)
    .all<{ id: string }>();
  await ensureAccountStubs(
    directory,
    db,
    named.map((r) => r.id),
  );
  await copyRows(directory, db, "users", "id IN (SELECT value FROM json_each(?))", [ids]);
  await copyRows(
    directory,
    db,
    "auth_tokens",
    "user_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, id",
    [ids],
  );
}

/** The shard binding name of `db`. */
function shardNameOf(env: Env, db: D1Database): string {
  return shardNames(env).find((name) => databaseNamed(env, name) === db) ?? DIRECTORY;
}

/**
 * An accounts row for each of these accounts that `db` lacks: its id, name and shard only (no
 * settings, no retention window), for the foreign keys of copied users and tokens.
 */
export async function ensureAccountStubs(directory: D1Database, db: D1Database, accountIds: string[]) {
  if (accountIds.length === 0) return;
  const { results } = await directory
    .prepare(
      "SELECT id, name, api_version, shard, created_at, updated_at FROM accounts WHERE id IN (SELECT value FROM json_each(?))",
    )
    .bind(JSON.stringify(accountIds))
    .all<{
      id: string;
      name: string;
      api_version: string;
      shard: string | null;
      created_at: number;
      updated_at: number;
    }>();
  if (results.length === 0) return;
  await db.batch(
    results.map((a) =>
      db
        .prepare(
          "INSERT OR IGNORE INTO accounts (id, name, api_version, shard, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(a.id, a.name, a.api_version, a.shard, a.created_at, a.updated_at),
    ),
  );
}

/**
 * `work` run on every database that holds accounts, each with an env scoped to it (the cron's
 * sweeps), in parallel; what each answers is added up: numbers summed, objects field by field.
 * One database's failure fails the whole (the cron logs it), after the others finished.
 */
export async function onEveryDatabase<T>(env: Env, work: (env: Env) => Promise<T>): Promise<T> {
  const settled = await Promise.allSettled(
    everyDatabase(env).map(({ name, db }) => work(withDatabase(env, db, name))),
  );
  const failed = settled.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return (settled as PromiseFulfilledResult<T>[]).map((r) => r.value).reduce(addUp);
}

function addUp<T>(a: T, b: T): T {
  if (typeof a === "number" && typeof b === "number") return (a + b) as T;
  if (a && b && typeof a === "object" && typeof b === "object") {
    const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
    for (const [k, v] of Object.entries(b as Record<string, unknown>))
      out[k] = k in out ? addUp(out[k], v) : v;
    return out as T;
  }
  return a ?? b;
}

/**
 * For an anonymous entry point whose key names no account (a tracking page's token, a stored
 * upload's key): `find` asked of every database at once, each by a unique index; the one that
 * has it answers, with `env` scoped to it. Null when none has it.
 */
export async function findInAnyDatabase<T>(
  env: Env,
  find: (env: Env) => Promise<T | null | undefined>,
): Promise<{ env: Env; value: T } | null> {
  if (shardNames(env).length === 0) {
    const value = await find(env);
    return value == null ? null : { env, value };
  }
  const found = await Promise.all(
    everyDatabase(env).map(async ({ name, db }) => {
      const scoped = name === DIRECTORY ? env : withDatabase(env, db, name);
      const value = await find(scoped);
      return value == null ? null : { env: scoped, value };
    }),
  );
  return found.find((f) => f !== null) ?? null;
}

/**
 * The directory's lookups for anonymous entry points (`public_keys`): a key a stranger presents
 * (kind "tracker": a tracking page's token) names its account, so the entry point reads that
 * account's database alone; the isolate remembers the answer (a key never changes account, and a
 * move changes where the account lives, not the lookup). Recorded after the row it points at
 * commits; a row without its lookup (made before lookups existed, or a crash in between) is
 * still found, by asking every database, and its lookup is then recorded.
 */
const publicKeyAccounts = new Map<string, string>();

export async function registerPublicKey(env: Env, kind: string, key: string, accountId: string) {
  if (shardNames(env).length === 0) return;
  await directoryOf(env)
    .prepare("INSERT OR IGNORE INTO public_keys (kind, key, account_id, created_at) VALUES (?, ?, ?, ?)")
    .bind(kind, key, accountId, Date.now())
    .run();
}

export async function findByPublicKey<T extends { account_id: string }>(
  env: Env,
  kind: string,
  key: string,
  find: (env: Env) => Promise<T | null | undefined>,
): Promise<{ env: Env; value: T } | null> {
  if (shardNames(env).length === 0) return findInAnyDatabase(env, find);
  const memo = `${kind}:${key}`;
  const accountId =
    publicKeyAccounts.get(memo) ??
    (await directoryOf(env)
      .prepare("SELECT account_id FROM public_keys WHERE kind = ? AND key = ?")
      .bind(kind, key)
      .first<string>("account_id"));
  if (accountId) {
    const scoped = await inAccount(env, accountId);
    const value = await find(scoped);
    if (value) {
      if (publicKeyAccounts.size >= MAX_PLACED) publicKeyAccounts.clear();
      publicKeyAccounts.set(memo, accountId);
      return { env: scoped, value };
    }
  }
  const found = await findInAnyDatabase(env, find);
  if (found && found.value.account_id !== accountId)
    await registerPublicKey(env, kind, key, found.value.account_id).catch(() => {});
  return found;
}

/** Whether `env.DB` is already some account's database (scoped by a request, a consumer, the cron). */
export function isScoped(env: Env): boolean {
  return (env as ScopedEnv)[DATABASE_NAME] !== undefined;
}

/** The name of the database `env.DB` is (a shard's binding, or the directory's). */
export const databaseNameOf = (env: Env): string => (env as ScopedEnv)[DATABASE_NAME] ?? DIRECTORY;

/** `env` marked as scoped to the database it already has (an account that lives in the directory). */
export function markScoped(env: Env, name: string): Env {
  return Object.create(env, { [DATABASE_NAME]: { value: name } }) as Env;
}

/**
 * The env to serve `accountId` with: `env` itself when it is already scoped (a request, a
 * consumer that resolved its message), else scoped to the account. Entry points that the
 * queues, the Durable Objects and tests call with the Worker's own env start with it.
 */
export async function accountEnv(env: Env, accountId: string): Promise<Env> {
  return isScoped(env) ? env : inAccount(env, accountId);
}

/**
 * A sweep that reads what is due in one database, made to run on every database when called
 * with the Worker's own env (the cron, tests): figures added up as `onEveryDatabase` does.
 */
export function perDatabase<F extends (env: Env, ...args: any[]) => Promise<unknown>>(sweep: F): F {
  return ((env: Env, ...args: unknown[]) =>
    isScoped(env) || shardNames(env).length === 0
      ? sweep(env, ...args)
      : onEveryDatabase(env, (scoped) => sweep(scoped, ...args))) as F;
}

/**
 * The env for a queue message that names rows but no account (a webhook delivery, a
 * notification, an import, a thumbnail): whichever database `probe` finds its row in, each
 * asked at once by primary key, so a message sent before shards or before its account moved
 * finds its rows where they are now. `env` itself when already scoped.
 */
export async function messageEnv(env: Env, probe: (db: D1Database) => Promise<unknown>): Promise<Env> {
  if (isScoped(env) || shardNames(env).length === 0) return env;
  const found = await findInAnyDatabase(env, async (scoped) => ((await probe(scoped.DB)) ? true : null));
  return found?.env ?? env;
}
