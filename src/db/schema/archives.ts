import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * The archive (contract §23): rows past their retention window, moved by the cron into R2 as
 * gzip JSON Lines, one object per account, kind and day (and part, past ARCHIVE_ROWS_PER_OBJECT
 * rows). A row here is written before its object, so a crash at any step is resumed from its
 * state: `writing` (the object may be partial: written again from the same rows), `written` (the
 * object is whole: verified, then its rows deleted by id), `done`. `account_id` is null for the
 * service's own rows (dead letters), which no account lists.
 */
export const archives = sqliteTable(
  "archives",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    kind: text("kind").notNull(),
    /** The UTC day of the rows' time, `YYYY-MM-DD`. */
    day: text("day").notNull(),
    part: integer("part").notNull().default(1),
    key: text("key").notNull(),
    state: text("state").notNull(),
    rows: integer("rows").notNull().default(0),
    bytes: integer("bytes").notNull().default(0),
    /** SHA-256 (hex) of the uncompressed JSON Lines, checked before any row is deleted. */
    sha256: text("sha256"),
    /** The last row id the part holds: the next part starts after it. */
    lastId: text("last_id"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("archives_part_unique").on(t.accountId, t.kind, t.day, t.part),
    index("archives_account_idx").on(t.accountId, t.createdAt, t.id),
    // Every cron run looks for parts a stopped run left unfinished (retention/archive.ts
    // `unfinishedParts`); partial, so it holds those few and not the table's millions of done
    // parts, which the query otherwise read in full each minute.
    index("archives_unfinished_idx").on(t.createdAt).where(sql`state != 'done'`),
  ],
);
