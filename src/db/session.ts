import { DIRECTORY, inAccount } from "./shards";
/**
 * A request's D1 session (contract §24; D1's Sessions API, "Global read replication" in
 * Cloudflare's D1 docs): reads may be served by a nearby replica, writes go to the primary,
 * and the session's bookmark (`X-D1-Bookmark`) lets the next request read at least what this
 * one wrote. The same wrapper counts the request's sequential D1 round trips: the edge pays
 * one per sequential call, wherever the primary is, so the count is what a far region feels.
 *
 * A call that starts while another of the same request is still in flight rides on that trip
 * (they overlap on the wire); one that starts after every earlier call settled is a new trip.
 * A batch is one trip, as D1 runs it as one call.
 */

/** What a session did, as a Durable Object reports it back to the request that called it. */
export type D1Report = { bookmark: string | null; trips: number };

/** A bookmark as D1 writes them: hex counters and a hash, dash-separated; nothing else is sent on. */
const BOOKMARK_RE = /^[0-9a-f]{8}(-[0-9a-f]{8,64}){1,7}$/i;

export const isBookmark = (value: string) => value.length <= 200 && BOOKMARK_RE.test(value);

/**
 * The `X-D1-Bookmark` header (issue 45 item 8): a D1 bookmark only means something on the
 * database that wrote it, and a request may run on two (the directory's session, then the
 * account's shard: http/account-scope.ts), so each bookmark goes out tagged with its database's
 * binding name, `<database>:<bookmark>` (`DB:…` the directory, `SHARD_<n>:…` a shard), as a
 * comma-separated list (RFC 9110 §5.6.1) when the request used both. On the way in, a request
 * takes the entry of each database it opens a session on; an entry of another database (another
 * shard's account, an account since moved), a malformed entry or a bare untagged bookmark is
 * ignored, never sent to D1, never a 400, and never echoed: an answer carries only what its own
 * sessions' queries left.
 */
const ENTRY_RE = /^(DB|SHARD_[0-9]+):(.+)$/;
const MAX_ENTRIES = 8;

/** The bookmarks of a request's header by database name; anything not well-formed is left out. */
export function parseBookmarks(header: string | null | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(",").slice(0, MAX_ENTRIES)) {
    const m = ENTRY_RE.exec(part.trim());
    if (m && isBookmark(m[2]) && !out.has(m[1])) out.set(m[1], m[2]);
  }
  return out;
}

/** The header's value for the sessions a request used (none used: null, no header). */
export function formatBookmarks(sessions: readonly MeteredSession[]): string | null {
  const byDatabase = new Map<string, string>();
  for (const s of sessions) {
    const b = s.used ? s.bookmark() : null;
    if (b) byDatabase.set(s.name, laterBookmark(byDatabase.get(s.name) ?? null, b)!);
  }
  return byDatabase.size ? [...byDatabase].map(([name, b]) => `${name}:${b}`).join(", ") : null;
}

/** The later of two bookmarks: D1 orders them as strings (its own session does the same). */
export function laterBookmark(a: string | null, b: string | null): string | null {
  if (!a) return b;
  if (!b) return a;
  return a.localeCompare(b) < 0 ? b : a;
}

const RAW = Symbol("raw statement");

/** Statements that only read: anything else is a write (conservatively: any write keyword). */
const isReadOnly = (sql: string) =>
  /^\s*(SELECT|WITH)\b/i.test(sql) && !/\b(INSERT|UPDATE|DELETE|REPLACE|UPSERT)\b/i.test(sql);

/** A statement waiting to ride on the request's first D1 call (the token's check, http/middleware.ts). */
type Rider = { statement: D1PreparedStatement; done: (result: D1Result | undefined) => void };

/**
 * A D1 binding in a session, metered. It stands where `env.DB` stood: services prepare and
 * batch on it as on the binding itself.
 */
export class MeteredSession {
  /** Sequential round trips so far (see the module's comment). */
  trips = 0;
  /**
   * Whether the session reached D1 at all (a call, or a Durable Object's report): an unused
   * session's bookmark would only be the one the request sent, which is not echoed.
   */
  used = false;
  private inFlight = 0;
  private absorbed: string | null = null;
  private readonly session: D1DatabaseSession;
  private readonly sqlOf = new WeakMap<object, string>();
  private rider: Rider | null = null;
  /** Awaited before the request's first write (see `holdWritesUntil`). */
  private writeGate: (() => Promise<void>) | null = null;

  constructor(
    private readonly base: D1Database,
    constraintOrBookmark: string,
    /** The database's binding name (db/shards.ts), which tags its bookmark. */
    readonly name: string = DIRECTORY,
  ) {
    // A stand-in binding without sessions (a test's broken database) is used as it is.
    this.session =
      typeof base.withSession === "function"
        ? base.withSession(constraintOrBookmark)
        : (base as unknown as D1DatabaseSession);
  }

  /** The database this session runs on. */
  get database(): D1Database {
    return this.base;
  }

  /** The latest bookmark of this request: its own queries' and its Durable Objects' writes. */
  bookmark(): string | null {
    return laterBookmark(this.session.getBookmark?.() ?? null, this.absorbed);
  }

  /** What a Durable Object did on this request's behalf (its own session at the primary). */
  absorb(report: D1Report | undefined) {
    if (!report) return;
    this.used = true;
    this.trips += report.trips;
    this.absorbed = laterBookmark(this.absorbed, report.bookmark);
  }

  report(): D1Report {
    return { bookmark: this.bookmark(), trips: this.trips };
  }

  /**
   * The answer is ready: calls from here on are work left running after it (`waitUntil`: the
   * outbox relay's checks), which delays no one, so they are not the request's round trips.
   */
  answered() {
    this.counting = false;
  }

  private counting = true;

  private async count<T>(call: () => Promise<T>): Promise<T> {
    this.used = true;
    if (this.inFlight === 0 && this.counting) this.trips++;
    this.inFlight++;
    try {
      return await call();
    } finally {
      this.inFlight--;
    }
  }

  /**
   * Runs `statement` together with the request's first D1 call, in one batch (one round trip
   * for both); `result()` gives its result, running it alone if no call came (or the batch that
   * carried it failed).
   */
  ride(statement: D1PreparedStatement): { result(): Promise<D1Result> } {
    let carried: Promise<D1Result | undefined>;
    const rider: Rider = { statement, done: () => {} };
    carried = new Promise((resolve) => {
      rider.done = resolve;
    });
    this.rider = rider;
    return {
      result: async () => {
        if (this.rider === rider) {
          this.rider = null;
          rider.done(undefined);
        }
        return (await carried) ?? (await this.count(() => statement.all()));
      },
    };
  }

  /** Until `gate` resolves, no write of this request starts (reads may: see http/middleware.ts). */
  holdWritesUntil(gate: (() => Promise<void>) | null) {
    this.writeGate = gate;
  }

  private async beforeWrite(sqls: string[]) {
    if (this.writeGate && sqls.some((q) => !isReadOnly(q))) await this.writeGate();
  }

  /** `statements` in one batch, with the rider in front when one waits. */
  private async send<T>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    await this.beforeWrite(statements.map((st) => this.sqlOf.get(st) ?? ""));
    const rider = this.rider;
    if (!rider) return this.count(() => this.session.batch<T>(statements.map(unwrap)));
    this.rider = null;
    try {
      const [carried, ...results] = await this.count(() =>
        this.session.batch<T>([rider.statement, ...statements].map(unwrap)),
      );
      rider.done(carried as D1Result);
      return results;
    } catch (err) {
      rider.done(undefined);
      throw err;
    }
  }

  prepare(query: string): D1PreparedStatement {
    return this.meter(this.session.prepare(query), query);
  }

  batch<T = unknown>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    return this.send<T>(statements);
  }

  /** Schema scripts only (migrations in tests): straight to the primary, outside the session. */
  exec(query: string): Promise<D1ExecResult> {
    return this.count(() => this.base.exec(query));
  }

  withSession(constraintOrBookmark?: string): D1DatabaseSession {
    return this.base.withSession(constraintOrBookmark);
  }

  dump(): Promise<ArrayBuffer> {
    return this.base.dump();
  }

  /**
   * The statement with its calls counted. A Proxy, not a copy: D1's `batch` reads the
   * statement's own fields, which a Proxy passes through untouched.
   */
  private meter(statement: D1PreparedStatement, sql: string): D1PreparedStatement {
    // The binding's statement is the prototype: D1's own reads of its fields go through; the
    // calls that reach the database are counted (and may carry a rider, or wait for a write gate).
    const metered = Object.create(statement) as D1PreparedStatement & { [RAW]: D1PreparedStatement };
    const direct = () => !this.rider && !this.writeGate;
    metered[RAW] = statement;
    metered.bind = (...args: unknown[]) => this.meter(statement.bind(...args), sql);
    metered.raw = (async (options?: { columnNames?: boolean }) => {
      await this.beforeWrite([sql]);
      return this.count(() => statement.raw(options as { columnNames: true }));
    }) as D1PreparedStatement["raw"];
    metered.all = (async () =>
      direct()
        ? this.count(() => statement.all())
        : (await this.send([metered]))[0]) as D1PreparedStatement["all"];
    metered.run = (async () =>
      direct()
        ? this.count(() => statement.run())
        : (await this.send([metered]))[0]) as D1PreparedStatement["run"];
    metered.first = (async (column?: string) => {
      if (direct())
        return this.count(() => (column === undefined ? statement.first() : statement.first(column)));
      const row = ((await this.send([metered]))[0].results[0] ?? null) as Record<string, unknown> | null;
      return column === undefined ? row : (row?.[column] ?? null);
    }) as D1PreparedStatement["first"];
    this.sqlOf.set(metered, sql);
    return metered;
  }
}

/** The binding's own statement behind a metered one (D1's batch wants its own objects). */
const unwrap = (st: D1PreparedStatement): D1PreparedStatement =>
  ((st as unknown as Record<symbol, D1PreparedStatement>)[RAW] ?? st) as D1PreparedStatement;

/** The request's session when `db` is one (HTTP requests), else undefined (queues, cron). */
export const sessionOf = (db: D1Database | MeteredSession): MeteredSession | undefined =>
  db instanceof MeteredSession ? db : undefined;

/** `env` with its D1 binding in a new metered session (for a request, or a Durable Object call). */
export function inSession(
  env: Env,
  constraintOrBookmark: string,
  name: string = DIRECTORY,
): { env: Env; db: MeteredSession } {
  const db = new MeteredSession(env.DB, constraintOrBookmark, name);
  // The request's env is the binding's env with DB in front: a copy of every binding per
  // request would cost more than the lookup through the prototype.
  const scoped = Object.create(env, { DB: { value: db, enumerable: true } }) as Env;
  return { env: scoped, db };
}

/**
 * A Durable Object's call run in its own session at the primary of the account's database
 * (db/shards.ts): `work` gets the env to use,
 * the result goes back with the session's report for the caller to `absorb`.
 */
export async function reported<T>(
  env: Env,
  accountId: string,
  work: (env: Env) => Promise<T>,
): Promise<{ value: T; d1: D1Report }> {
  const s = inSession(await inAccount(env, accountId), "first-primary");
  const value = await work(s.env);
  return { value, d1: s.db.report() };
}

/** Adds a Durable Object's report to the request's session (no-op outside a request). */
export function absorbReport(env: Env, report: D1Report | undefined) {
  sessionOf(env.DB as D1Database | MeteredSession)?.absorb(report);
}
