import { blob, index, integer, primaryKey, real, sqliteTable } from "drizzle-orm/sqlite-core";

/**
 * Workers' trails (contract §28): one row per worker and six hours ("slice"), its positions in time
 * order as one delta-encoded blob (src/domain/positions-codec.ts), written by the account's
 * stream object (durable-objects/account-stream/positions.ts), its only writer. A row per
 * position would make positions the largest table within a day (1,000 workers every 15 s is
 * 5.8 million a day); a row per slice costs its key and indexes once for ~1,440 positions.
 * Deleted by slice when older than the account's `position_retention_days`: personal data,
 * never archived.
 */
export const positionSlices = sqliteTable(
  "position_slices",
  {
    accountId: blob("account_id").notNull(),
    userId: blob("user_id").notNull(),
    /** Six-hour periods since the epoch (UTC): the slice of its positions (domain/positions-codec.ts). */
    slice: integer("slice").notNull(),
    /** Positions in `data`. */
    count: integer("count").notNull(),
    data: blob("data").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.userId, t.slice] }),
    // The retention sweep deletes an account's slices older than its window.
    index("position_slices_sweep_idx").on(t.accountId, t.slice),
  ],
);

/**
 * Each worker's latest position (contract §28), copied from the account's stream object (which
 * keeps it first) within a second of a change, one statement for every worker that moved: the
 * ETAs of task reads (services/eta) read it in the same batch as the tasks, so a GET of a task
 * keeps its one round trip.
 */
export const workerPositions = sqliteTable(
  "worker_positions",
  {
    accountId: blob("account_id").notNull(),
    userId: blob("user_id").notNull(),
    lon: real("lon").notNull(),
    lat: real("lat").notNull(),
    time: integer("time").notNull(),
    accuracyM: real("accuracy_m"),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.userId] })],
);
