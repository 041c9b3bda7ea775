/**
 * Moving rows to the archive (contract §23): one object per account, kind and day (a new part
 * past ARCHIVE_ROWS_PER_OBJECT rows), gzip-compressed JSON Lines in R2 under
 * `archives/<account>/<kind>/<YYYY-MM-DD>[.<part>].jsonl.gz`. Each part goes through the states
 * of its `archives` row, so a crash anywhere is finished by the next cron run and neither loses
 * nor duplicates a row:
 *   1. `writing`: the row is there before the object. The part's rows are read (the same rows on
 *      a re-run: nothing of them is deleted yet, and no new row can join a past day), encoded,
 *      compressed and put; then the row becomes `written` with their count, bytes and SHA-256.
 *   2. `written`: the object is read back, decompressed, counted and hashed; only when both match
 *      are the rows it holds deleted, by the ids in it; then the row becomes `done`.
 * Rows are written as stored (one JSON object per row, columns as in D1; compressed payloads
 * decoded), so an archive can be read, and loaded back, without this service.
 */
import { paramFor } from "../../db/uuid-bytes";
import { uuidv7 } from "../../lib/ids";
import { dayOf } from "./windows";

export type ArchiveRow = {
  id: string;
  account_id: string;
  kind: string;
  day: string;
  part: number;
  key: string;
  state: "writing" | "written" | "done";
  rows: number;
  bytes: number;
  sha256: string | null;
  last_id: string | null;
  created_at: number;
  updated_at: number;
};

/** What the archive needs of a kind of row: how to read one part, write it, and delete it. */
export type ArchiveSource = {
  kind: string;
  /** Up to `limit` rows of one account and day past their window, in a stable order. */
  read(
    env: Env,
    accountId: string,
    day: { start: number; end: number },
    limit: number,
  ): Promise<{ id: string }[]>;
  /** The JSON Lines objects of those rows (one per row; it may carry the row's dependents). */
  lines(env: Env, rows: { id: string }[]): Promise<Record<string, unknown>[]>;
  /** Deletes exactly what these lines hold (by id), and whatever belongs to it alone. */
  remove(env: Env, accountId: string, lines: Record<string, unknown>[]): Promise<void>;
};

export const DEFAULT_ARCHIVE_ROWS_PER_OBJECT = 5000;
export function rowsPerObject(env: Env) {
  const n = Number((env as unknown as Record<string, string | undefined>).ARCHIVE_ROWS_PER_OBJECT);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_ARCHIVE_ROWS_PER_OBJECT;
}

const enc = new TextEncoder();

async function sha256Hex(bytes: Uint8Array) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function through(bytes: Uint8Array, stream: CompressionStream | DecompressionStream) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
}

const keyOf = (accountId: string, kind: string, day: string, part: number) =>
  `archives/${accountId}/${kind}/${day}${part > 1 ? `.${part}` : ""}.jsonl.gz`;

/** The part to work on for (account, kind, day): an unfinished one, else a new one. */
async function currentPart(db: D1Database, accountId: string, kind: string, day: string, now: number) {
  const last = await db
    .prepare(
      "SELECT * FROM archives WHERE account_id = ? AND kind = ? AND day = ? ORDER BY part DESC LIMIT 1",
    )
    .bind(accountId, kind, day)
    .first<ArchiveRow>();
  if (last && last.state !== "done") return last;
  const part = (last?.part ?? 0) + 1;
  const row: ArchiveRow = {
    // The real time, not `now` (the cron's, which a test may move): ids minted later in this
    // isolate must not sort after a moved clock (uuidv7 keeps them monotonic).
    id: uuidv7(),
    account_id: accountId,
    kind,
    day,
    part,
    key: keyOf(accountId, kind, day, part),
    state: "writing",
    rows: 0,
    bytes: 0,
    sha256: null,
    last_id: null,
    created_at: now,
    updated_at: now,
  };
  // A second cron run racing for the same part loses the unique index and takes the winner's.
  await db
    .prepare(
      `INSERT OR IGNORE INTO archives (id, account_id, kind, day, part, key, state, rows, bytes, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'writing', 0, 0, ?, ?)`,
    )
    .bind(row.id, accountId, kind, day, part, row.key, now, now)
    .run();
  return (await db
    .prepare("SELECT * FROM archives WHERE account_id = ? AND kind = ? AND day = ? AND part = ?")
    .bind(accountId, kind, day, part)
    .first<ArchiveRow>())!;
}

export type PartOutcome = { rows: number; bytes: number; key: string } | null;

/**
 * Archives one part of (source, account, day): writes it (unless already written), verifies it,
 * deletes its rows. Returns null when there was nothing (left) to archive for that day.
 */
export async function archivePart(
  env: Env,
  source: ArchiveSource,
  accountId: string,
  dayStart: number,
  now: number,
): Promise<PartOutcome> {
  const db = env.DB;
  const day = dayOf(dayStart);
  let part = await currentPart(db, accountId, source.kind, day.day, now);
  if (part.state === "writing") {
    const rows = await source.read(env, accountId, day, rowsPerObject(env));
    if (!rows.length) {
      // Nothing past the window that day (any more): no object, no row.
      await db.prepare("DELETE FROM archives WHERE id = ? AND state = 'writing'").bind(part.id).run();
      return null;
    }
    const lines = await source.lines(env, rows);
    const text = enc.encode(lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    const gz = await through(text, new CompressionStream("gzip"));
    const sha = await sha256Hex(text);
    await env.FILES.put(part.key, gz, {
      httpMetadata: {
        contentType: "application/gzip",
        contentDisposition: `attachment; filename="${part.key.split("/").slice(-2).join("-")}"`,
      },
      customMetadata: { rows: String(lines.length), sha256: sha },
    });
    await db
      .prepare(
        "UPDATE archives SET state = 'written', rows = ?, bytes = ?, sha256 = ?, last_id = ?, updated_at = ? WHERE id = ? AND state = 'writing'",
      )
      .bind(lines.length, gz.length, sha, rows[rows.length - 1].id, now, part.id)
      .run();
    part = { ...part, state: "written", rows: lines.length, bytes: gz.length, sha256: sha };
  }
  if (part.state === "written") {
    const object = await env.FILES.get(part.key);
    if (!object) throw new Error(`archive ${part.key}: written, but the object is missing`);
    const text = await through(new Uint8Array(await object.arrayBuffer()), new DecompressionStream("gzip"));
    const lines = new TextDecoder()
      .decode(text)
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    if (lines.length !== part.rows || (await sha256Hex(text)) !== part.sha256) {
      // Never delete what the archive does not hold: write the part again on the next run.
      await db
        .prepare("UPDATE archives SET state = 'writing', updated_at = ? WHERE id = ?")
        .bind(now, part.id)
        .run();
      throw new Error(`archive ${part.key}: verification failed; it will be written again`);
    }
    await source.remove(env, accountId, lines);
    await db
      .prepare("UPDATE archives SET state = 'done', updated_at = ? WHERE id = ?")
      .bind(now, part.id)
      .run();
  }
  return { rows: part.rows, bytes: part.bytes, key: part.key };
}

/** Parts left `writing` or `written` by a run that stopped: (kind, account, day start). */
export async function unfinishedParts(db: D1Database, limit = 20) {
  const { results } = await db
    .prepare("SELECT kind, account_id, day FROM archives WHERE state != 'done' ORDER BY created_at LIMIT ?")
    .bind(limit)
    .all<{ kind: string; account_id: string; day: string }>();
  return results.map((r) => ({ ...r, start: Date.parse(`${r.day}T00:00:00Z`) }));
}

/**
 * Deletes rows of `table` by id, a JSON list of ids per statement, in one batch. With the
 * account, by (account_id, id): the key of a table clustered on it (events), and no harm to one
 * keyed by id alone.
 */
export function deleteByIds(db: D1Database, table: string, ids: string[], accountId?: string, chunk = 500) {
  const statements: D1PreparedStatement[] = [];
  const id = paramFor(table, "id", "value");
  for (let i = 0; i < ids.length; i += chunk) {
    const list = JSON.stringify(ids.slice(i, i + chunk));
    statements.push(
      accountId === undefined
        ? db.prepare(`DELETE FROM ${table} WHERE id IN (SELECT ${id} FROM json_each(?))`).bind(list)
        : db
            .prepare(
              `DELETE FROM ${table} WHERE account_id = ${paramFor(table, "account_id")} AND id IN (SELECT ${id} FROM json_each(?))`,
            )
            .bind(accountId, list),
    );
  }
  return statements;
}
