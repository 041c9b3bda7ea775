import { accountDatabase } from "../../db/shards";
import { uuidBytes } from "../../db/uuid-bytes";
import {
  decodeRecords,
  type EncoderState,
  encodeRecords,
  mergeByTime,
  type Quantized,
  sliceOf,
  thin,
} from "../../domain/positions-codec";
import { fromHex, toHex } from "../../lib/crypto";

/**
 * Workers' positions in the account's stream object (contract §28): the object is the one
 * writer of the account's trails, so thinning, ordering and appending need no coordination.
 *
 * - The **latest** position of each worker lives here (memory, and the object's own SQLite
 *   storage across restarts): `GET /users/{id}/`, auto-assign and the console read it from here.
 *   ETAs and re-plans read it in D1 beside the tasks (`worker_positions`), so it is copied there
 *   before the 202, one statement for all the workers whose positions arrived within
 *   MIRROR_WINDOW_MS of each other (`mirrorSoon`).
 * - New positions wait in `pos_pending` (the object's storage, durable before the 202) and are
 *   **flushed** to D1 by the object's alarm about a second later, in one statement for every
 *   worker that sent some (a burst from many workers is one flush): each worker's slice
 *   (`position_slices`) gets the new records appended to its blob (domain/positions-codec.ts).
 *   The append is guarded by the slice's count as this object last wrote it, so a flush that
 *   reached D1 and was not recorded here (the object restarted between the two) is not
 *   appended twice.
 * - Positions older than the last flushed one of their worker (a phone back online with an old
 *   batch) are merged into their slices at once: read, merged in time order, written whole.
 */

/** A worker's latest position, as the API shows it. */
export type Fix = { lon: number; lat: number; time: number; accuracy_m: number | null };

/** What the Worker hands over with a batch (validated and quantized there). */
export type PositionsCall = {
  accountId: string;
  userId: string;
  items: Quantized[];
  /** Closer in time than this to a stored position of the same user: dropped. */
  minGapMs: number;
  /** Older than this (the account's retention window): dropped, it would be deleted at once. */
  oldestMs: number;
};

export type PositionStats = {
  /** Positions waiting in the object for the next flush. */
  buffered: number;
  /** Flushes to D1 since the object started. */
  flushes: number;
  /** D1 statements positions cost since the object started (flushes, late merges, lateness checks). */
  d1_statements: number;
};

/** Rows per flush statement: D1 caps a statement's size, and a flush of 1,000 workers stays well under it. */
const FLUSH_ROWS = 500;
/**
 * The guard of an append rides on the inserted `count`: `expected * COUNT_SHIFT + added`. A new
 * slice has expected 0, so it stores `added`; an existing one is appended to only when its count
 * is `expected` (see the statement). A flush adds far fewer than COUNT_SHIFT records to a slice.
 */
const COUNT_SHIFT = 1_048_576;

/**
 * Copies of the latest positions to D1 start at most this often. The first position after a quiet
 * spell is copied at once; those that arrive within this time of a copy wait for the next one and
 * share it (a group commit), so a burst from many workers costs a statement per window, not one
 * per worker, and each 202 still follows its own copy.
 */
export const MIRROR_WINDOW_MS = 250;

/** A worker whose last position is older than this is not checked after every write (the cron still is). */
const KNOWN_MS = 12 * 3_600_000;

type Tail = { slice: number; count: number; state: EncoderState };

const FLUSH_SQL = `INSERT INTO position_slices (account_id, user_id, slice, count, data)
SELECT ${uuidBytes("?1")}, ${uuidBytes("j.value ->> 0")}, j.value ->> 1, j.value ->> 2, unhex(j.value ->> 3)
FROM json_each(?2) AS j WHERE true
ON CONFLICT (account_id, user_id, slice) DO UPDATE SET
  data = position_slices.data || excluded.data,
  count = position_slices.count + excluded.count % ${COUNT_SHIFT}
WHERE position_slices.count = excluded.count / ${COUNT_SHIFT}`;

const REPLACE_SQL = `INSERT INTO position_slices (account_id, user_id, slice, count, data)
SELECT ${uuidBytes("?1")}, ${uuidBytes("?2")}, j.value ->> 0, j.value ->> 1, unhex(j.value ->> 2)
FROM json_each(?3) AS j WHERE true
ON CONFLICT (account_id, user_id, slice) DO UPDATE SET data = excluded.data, count = excluded.count`;

const MIRROR_SQL = `INSERT INTO worker_positions (account_id, user_id, lon, lat, time, accuracy_m)
SELECT ${uuidBytes("?1")}, ${uuidBytes("j.value ->> 0")}, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4
FROM json_each(?2) AS j WHERE true
ON CONFLICT (account_id, user_id) DO UPDATE SET lon = excluded.lon, lat = excluded.lat, time = excluded.time,
  accuracy_m = excluded.accuracy_m WHERE excluded.time > worker_positions.time`;

const SLICES_SQL = `SELECT slice, count, hex(data) AS data FROM position_slices
WHERE account_id = ${uuidBytes()} AND user_id = ${uuidBytes()} AND slice IN (SELECT value FROM json_each(?))`;

type Row = Record<string, SqlStorageValue>;
const qOf = (r: Row): Quantized => ({
  t: r.t as number,
  lat: r.lat as number,
  lon: r.lon as number,
  acc: r.acc as number | null,
  spd: r.spd as number | null,
  hdg: r.hdg as number | null,
});

export class PositionStore {
  private ready = false;
  private latestCache = new Map<string, Fix & { t: number }>();
  private latestLoaded = false;
  private lock: Promise<unknown> = Promise.resolve();
  private flushes = 0;
  private statements = 0;
  /** The copy to D1 that has not started yet, which a new position joins (`mirrorSoon`). */
  private nextMirror: { done: Promise<void> } | null = null;
  private lastMirrorAt = 0;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
  ) {}

  private get sql() {
    if (!this.ready) {
      this.ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS pos_pending (
        user TEXT NOT NULL, t INTEGER NOT NULL, lat INTEGER NOT NULL, lon INTEGER NOT NULL,
        acc INTEGER, spd INTEGER, hdg INTEGER, PRIMARY KEY (user, t)) WITHOUT ROWID`);
      this.ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS pos_tail (
        user TEXT PRIMARY KEY, slice INTEGER NOT NULL, count INTEGER NOT NULL, state TEXT NOT NULL)`);
      this.ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS pos_latest (
        user TEXT PRIMARY KEY, t INTEGER NOT NULL, lat INTEGER NOT NULL, lon INTEGER NOT NULL, acc INTEGER,
        mirrored INTEGER NOT NULL DEFAULT 0)`);
      this.ready = true;
    }
    return this.ctx.storage.sql;
  }

  /** One position call at a time: thinning reads what the one before it wrote. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.lock.then(work, work);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private tailOf(user: string): Tail | null {
    const r = this.sql.exec("SELECT slice, count, state FROM pos_tail WHERE user = ?", user).toArray()[0];
    return r
      ? { slice: r.slice as number, count: r.count as number, state: JSON.parse(r.state as string) }
      : null;
  }

  private setTail(user: string, tail: Tail) {
    this.sql.exec(
      "INSERT OR REPLACE INTO pos_tail (user, slice, count, state) VALUES (?, ?, ?, ?)",
      user,
      tail.slice,
      tail.count,
      JSON.stringify(tail.state),
    );
  }

  /** A user's positions waiting for the flush, in time order (all newer than what D1 holds of it). */
  pendingOf(user: string, from = -Infinity, to = Infinity): Quantized[] {
    return this.sql
      .exec(
        "SELECT t, lat, lon, acc, spd, hdg FROM pos_pending WHERE user = ? AND t >= ? AND t <= ? ORDER BY t",
        user,
        Number.isFinite(from) ? from : Number.MIN_SAFE_INTEGER,
        Number.isFinite(to) ? to : Number.MAX_SAFE_INTEGER,
      )
      .toArray()
      .map(qOf);
  }

  private loadLatest() {
    if (this.latestLoaded) return;
    for (const r of this.sql.exec("SELECT user, t, lat, lon, acc FROM pos_latest").toArray()) {
      this.latestCache.set(r.user as string, fixOf(qOf({ ...r, spd: null, hdg: null })));
    }
    this.latestLoaded = true;
  }

  latest(users: readonly string[]): Map<string, Fix> {
    this.loadLatest();
    const out = new Map<string, Fix>();
    for (const u of users) {
      const f = this.latestCache.get(u);
      if (f) out.set(u, { lon: f.lon, lat: f.lat, time: f.time, accuracy_m: f.accuracy_m });
    }
    return out;
  }

  stats(): PositionStats {
    const buffered = this.sql.exec("SELECT count(*) AS n FROM pos_pending").one().n as number;
    return { buffered, flushes: this.flushes, d1_statements: this.statements };
  }

  countStatements(n: number) {
    this.statements += n;
  }

  /**
   * Stores a batch of one user's positions: drops those too old or too close in time to one
   * already stored (contract §28), keeps the rest in time order. Returns the counts and the
   * user's latest position when this batch moved it.
   */
  record(call: PositionsCall): Promise<{ stored: number; dropped: number; moved: Fix | null }> {
    return this.serial(async () => {
      const { userId: user } = call;
      const items = call.items.filter((q) => q.t >= call.oldestMs);
      let dropped = call.items.length - items.length;
      const tail = this.tailOf(user);
      const pending = this.pendingOf(user);
      const late = tail ? items.filter((q) => q.t <= tail.state.t) : [];
      // What a new position is compared with: the waiting ones, the last flushed, and for an
      // old batch the stored slices around it.
      let near: Quantized[] = pending;
      if (tail) near = mergeByTime([tailRecord(tail)], near);
      const slices = new Map<number, { count: number; records: Quantized[] }>();
      if (late.length) {
        const wanted = new Set<number>();
        for (const q of late) {
          wanted.add(sliceOf(q.t - call.minGapMs));
          wanted.add(sliceOf(q.t));
          wanted.add(sliceOf(q.t + call.minGapMs));
        }
        const db = await accountDatabase(this.env, call.accountId);
        const { results } = await db
          .prepare(SLICES_SQL)
          .bind(call.accountId, user, JSON.stringify([...wanted]))
          .all<{ slice: number; count: number; data: string }>();
        this.statements++;
        for (const r of results) {
          const { records } = decodeRecords(r.slice, fromHex(r.data));
          slices.set(r.slice, { count: r.count, records });
          near = mergeByTime(records, near);
        }
      }
      const { kept, dropped: close } = thin(near, items, call.minGapMs);
      dropped += close;
      const keptLate = tail ? kept.filter((q) => q.t <= tail.state.t) : [];
      const keptNew = tail ? kept.filter((q) => q.t > tail.state.t) : kept;
      if (keptLate.length) await this.mergeLate(call.accountId, user, keptLate, slices, tail!);
      for (const q of keptNew) {
        this.sql.exec(
          "INSERT OR IGNORE INTO pos_pending (user, t, lat, lon, acc, spd, hdg) VALUES (?, ?, ?, ?, ?, ?, ?)",
          user,
          q.t,
          q.lat,
          q.lon,
          q.acc,
          q.spd,
          q.hdg,
        );
      }
      let moved: Fix | null = null;
      this.loadLatest();
      const newest = kept.reduce<Quantized | null>((m, q) => (!m || q.t > m.t ? q : m), null);
      const current = this.latestCache.get(user);
      if (newest && (!current || newest.t > current.t)) {
        this.sql.exec(
          "INSERT OR REPLACE INTO pos_latest (user, t, lat, lon, acc, mirrored) VALUES (?, ?, ?, ?, ?, 0)",
          user,
          newest.t,
          newest.lat,
          newest.lon,
          newest.acc,
        );
        const fix = fixOf(newest);
        this.latestCache.set(user, fix);
        moved = { lon: fix.lon, lat: fix.lat, time: fix.time, accuracy_m: fix.accuracy_m };
      }
      return { stored: kept.length, dropped, moved };
    });
  }

  /** Old positions into their stored slices: each slice read (above), merged, written whole. */
  private async mergeLate(
    accountId: string,
    user: string,
    records: Quantized[],
    slices: Map<number, { count: number; records: Quantized[] }>,
    tail: Tail,
  ) {
    const bySlice = new Map<number, Quantized[]>();
    for (const q of records) bySlice.get(sliceOf(q.t))?.push(q) ?? bySlice.set(sliceOf(q.t), [q]);
    const rows: [number, number, string][] = [];
    let newTail: Tail | null = null;
    for (const [slice, add] of bySlice) {
      const all = mergeByTime(slices.get(slice)?.records ?? [], add);
      const { bytes, state } = encodeRecords(slice, all);
      rows.push([slice, all.length, toHex(bytes)]);
      if (slice === tail.slice) newTail = { slice, count: all.length, state };
    }
    const db = await accountDatabase(this.env, accountId);
    await db.prepare(REPLACE_SQL).bind(accountId, user, JSON.stringify(rows)).run();
    this.statements++;
    if (newTail) this.setTail(user, newTail);
  }

  /** Writes the waiting positions to D1 (one statement per FLUSH_ROWS slices). Returns how many were written. */
  flush(accountId: string): Promise<number> {
    return this.serial(async () => {
      const rows = this.sql
        .exec("SELECT user, t, lat, lon, acc, spd, hdg FROM pos_pending ORDER BY user, t")
        .toArray();
      if (!rows.length) return 0;
      const groups = new Map<string, Quantized[]>();
      for (const r of rows) {
        const key = `${r.user}|${sliceOf(r.t as number)}`;
        groups.get(key)?.push(qOf(r)) ?? groups.set(key, [qOf(r)]);
      }
      const out: [string, number, number, string][] = [];
      const tails = new Map<string, Tail>();
      for (const [key, records] of groups) {
        const [user, sliceText] = key.split("|");
        const slice = Number(sliceText);
        const tail = tails.get(user) ?? this.tailOf(user);
        const append = tail && tail.slice === slice ? tail : null;
        const { bytes, state } = encodeRecords(slice, records, append?.state ?? null);
        const expected = append?.count ?? 0;
        out.push([user, slice, expected * COUNT_SHIFT + records.length, toHex(bytes)]);
        tails.set(user, { slice, count: expected + records.length, state });
      }
      const db = await accountDatabase(this.env, accountId);
      const statements = [];
      for (let i = 0; i < out.length; i += FLUSH_ROWS)
        statements.push(db.prepare(FLUSH_SQL).bind(accountId, JSON.stringify(out.slice(i, i + FLUSH_ROWS))));
      await db.batch(statements);
      this.statements += statements.length;
      this.flushes++;
      // Written: forget them here. A restart before this line flushes them again, and the
      // count guard leaves the slices as they are.
      this.ctx.storage.transactionSync(() => {
        for (const [user, tail] of tails) this.setTail(user, tail);
        // Every waiting row was read above, and no call ran in between (serial).
        this.sql.exec("DELETE FROM pos_pending");
      });
      return rows.length;
    });
  }

  /**
   * The latest positions copied to D1 before the caller answers: an ETA or a re-plan from now read
   * right after a 202 starts from that position (read-your-writes). Joins the copy waiting to
   * start, if one is; else starts one when MIRROR_WINDOW_MS have passed since the last. A failed
   * copy is left to the alarm (the rows stay unmirrored), and the position stays stored here.
   */
  mirrorSoon(accountId: string): Promise<void> {
    if (this.nextMirror) return this.nextMirror.done;
    const job = { done: Promise.resolve() };
    this.nextMirror = job;
    job.done = (async () => {
      // Always yields first, so that `job` is in place before it is cleared below.
      await new Promise((r) => setTimeout(r, Math.max(0, this.lastMirrorAt + MIRROR_WINDOW_MS - Date.now())));
      // From here on a new position waits for the next copy: this one may have read its rows.
      if (this.nextMirror === job) this.nextMirror = null;
      this.lastMirrorAt = Date.now();
      try {
        await this.mirrorLatest(accountId);
      } catch (e) {
        console.warn("positions: the copy to D1 failed; the alarm tries again", e);
      }
    })();
    return job.done;
  }

  /** Whether latest positions wait to be copied to D1 (`worker_positions`). */
  mirrorDue(): boolean {
    return this.sql.exec("SELECT 1 AS x FROM pos_latest WHERE mirrored = 0 LIMIT 1").toArray().length > 0;
  }

  /**
   * Copies the latest positions that changed to D1's `worker_positions` (services/eta reads them
   * there beside the tasks), one statement for every worker that moved since the last copy.
   */
  mirrorLatest(accountId: string): Promise<number> {
    return this.serial(async () => {
      const rows = this.sql
        .exec("SELECT user, t, lat, lon, acc FROM pos_latest WHERE mirrored = 0")
        .toArray();
      if (!rows.length) return 0;
      const values = rows.map((r) => [
        r.user,
        (r.lon as number) / 1e6,
        (r.lat as number) / 1e6,
        r.t,
        r.acc === null ? null : (r.acc as number) / 10,
      ]);
      const db = await accountDatabase(this.env, accountId);
      await db.prepare(MIRROR_SQL).bind(accountId, JSON.stringify(values)).run();
      this.statements++;
      // Only rows not moved again meanwhile (serial: none can be; the time makes it certain).
      for (const r of rows)
        this.sql.exec("UPDATE pos_latest SET mirrored = 1 WHERE user = ? AND t = ?", r.user, r.t);
      return rows.length;
    });
  }

  /** Users with a position in the last KNOWN_MS (a write's lateness check looks at them). */
  knownUsers(now = Date.now()): string[] {
    this.loadLatest();
    return [...this.latestCache].filter(([, f]) => f.t > now - KNOWN_MS).map(([u]) => u);
  }
}

const tailRecord = (tail: Tail): Quantized => ({
  t: tail.state.t,
  lat: tail.state.lat,
  lon: tail.state.lon,
  acc: null,
  spd: null,
  hdg: null,
});

function fixOf(q: Quantized): Fix & { t: number } {
  return {
    lon: q.lon / 1e6,
    lat: q.lat / 1e6,
    time: q.t,
    accuracy_m: q.acc === null ? null : q.acc / 10,
    t: q.t,
  };
}
