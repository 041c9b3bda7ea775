import { env } from "cloudflare:workers";
import { accountDatabase, everyDatabase, inAccount, shardOfAccount } from "../src/db/shards";

/**
 * What the service stored, wherever it is (contract §24): accounts live on two shards in the
 * tests (SHARDS in vitest.config.ts) and a test that looks at rows does not care which. A
 * statement runs on every database and the answers are merged: rows are concatenated (one
 * account's rows are all in one database, so their order holds; a global row kept in several
 * comes once), a single row is the one database that has it (a global row whose copies differ:
 * the shard's, which requests read), an aggregate's fields (every database answers one) are
 * added up where several are numbers, else taken from the one that has a value (COUNT, SUM, MAX
 * and MIN over one account's rows come out right). An INSERT goes to the database of the
 * account it names (the first bound value that is an account), else to the first database whose
 * foreign keys admit it. EXPLAIN
 * runs on the directory alone (every database has the same schema).
 */
export const stored: D1Database = {
  prepare: (sql: string) => statement(sql, []),
  batch: async (statements: D1PreparedStatement[]) => {
    const out: D1Result[] = [];
    for (const s of statements) out.push(await (s as unknown as FanOut).all());
    return out;
  },
  exec: () => {
    throw new Error("stored.exec: use prepare");
  },
  dump: () => {
    throw new Error("stored.dump: not supported");
  },
  withSession: () => {
    throw new Error("stored.withSession: not supported");
  },
} as unknown as D1Database;

type FanOut = D1PreparedStatement & { all(): Promise<D1Result> };

function statement(sql: string, params: unknown[]): FanOut {
  const targets = async (): Promise<D1Database[]> => {
    const all = everyDatabase(env).map((d) => d.db);
    if (/^\s*EXPLAIN\b/i.test(sql)) return [all[0]];
    if (!/^\s*INSERT\b/i.test(sql)) return all;
    for (const p of params) {
      if (typeof p !== "string" || !/^[0-9a-f-]{36}$/i.test(p)) continue;
      const shard = await shardOfAccount(env, p, true);
      if (shard !== undefined)
        return [shard === null ? all[0] : everyDatabase(env).find((d) => d.name === shard)!.db];
    }
    // No account named: the first database whose foreign keys admit the row (a delivery goes
    // where its webhook is), shards first.
    return [...all.slice(1), all[0]];
  };
  const each = async () => {
    const dbs = await targets();
    if (!/^\s*INSERT\b/i.test(sql))
      return Promise.all(
        dbs.map((db) =>
          db
            .prepare(sql)
            .bind(...params)
            .all<Record<string, unknown>>(),
        ),
      );
    let failure: unknown;
    for (const db of dbs) {
      try {
        return [
          await db
            .prepare(sql)
            .bind(...params)
            .all<Record<string, unknown>>(),
        ];
      } catch (err) {
        if (!/FOREIGN KEY/i.test(String(err))) throw err;
        failure = err;
      }
    }
    throw failure;
  };
  const self = {
    bind: (...values: unknown[]) => statement(sql, values),
    all: async () => {
      const results = await each();
      if (results.length > 1 && AGGREGATE.test(sql) && !/\bGROUP\s+BY\b/i.test(sql)) {
        // One row from each database: the aggregate over all of them.
        const rows = results.map((r) => r.results[0]).filter((r) => r !== undefined);
        return { ...results[0], results: rows.length ? [merge(rows)] : [] };
      }
      // A global row (a user, a role, a token) is kept in the directory and copied to shards:
      // a row equal to one of an earlier database comes once.
      const earlier = new Set<string>();
      const rows: Record<string, unknown>[] = [];
      for (const r of results) {
        const mine = r.results.map((row) => JSON.stringify(row));
        r.results.forEach((row, i) => {
          if (!earlier.has(mine[i])) rows.push(row);
        });
        for (const key of mine) earlier.add(key);
      }
      return {
        ...results[0],
        results: rows,
        meta: { ...results[0].meta, changes: results.reduce((n, r) => n + (r.meta.changes ?? 0), 0) },
      };
    },
    run: async () => self.all(),
    first: async (column?: string) => {
      const rows = (await each()).map((r) => r.results[0]).filter((r) => r !== undefined);
      const distinct = [...new Map(rows.map((r) => [JSON.stringify(r), r])).values()];
      // Several different rows: an aggregate's (added up), else a global row whose shard copy
      // moved on (the last one: shards come after the directory; requests read the copy).
      const row =
        distinct.length <= 1
          ? (distinct[0] ?? null)
          : AGGREGATE.test(sql)
            ? merge(distinct)
            : distinct[distinct.length - 1];
      if (row === null) return null;
      return column === undefined ? row : (row[column] ?? null);
    },
    raw: async () => {
      const { results } = await self.all();
      return results.map((r) => Object.values(r));
    },
  };
  return self as unknown as FanOut;
}

const AGGREGATE = /\b(COUNT|SUM|TOTAL|MAX|MIN|AVG|GROUP_CONCAT|JSON_GROUP_ARRAY)\s*\(/i;

function merge(rows: Record<string, unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(rows[0])) {
    const values = rows.map((r) => r[key]).filter((v) => v !== null && v !== undefined);
    out[key] =
      values.length > 1 && values.every((v) => typeof v === "number")
        ? (values as number[]).reduce((a, b) => a + b, 0)
        : (values.find((v) => v !== 0) ?? values[0] ?? null);
  }
  return out;
}

/** `base` (the Worker's env, or one with test doubles) scoped to the account's database. */
export const scopedTo = (accountId: string, base: Env = env): Promise<Env> => inAccount(base, accountId);

/** `e` with another `DB` in front (a test double wrapping the account's database), still scoped. */
export const withDb = (e: Env, db: D1Database): Env =>
  Object.create(e, { DB: { value: db, enumerable: true } }) as Env;

/** The database that holds the account's rows, for a test that writes rows of its own there. */
export const dbOf = (accountId: string): Promise<D1Database> => accountDatabase(env, accountId, true);
