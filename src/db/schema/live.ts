import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Tickets of the live stream (contract §25): a browser cannot set `Authorization` on a
 * WebSocket, so an authenticated `POST /events/stream_tickets/` hands out a single-use ticket
 * valid 60 seconds, stored only as its SHA-256, spent by the one UPDATE that opens the stream.
 */
export const streamTickets = sqliteTable(
  "stream_tickets",
  {
    hash: text("hash").primaryKey(),
    accountId: text("account_id").notNull(),
    userId: text("user_id").notNull(),
    tokenId: text("token_id").notNull(),
    role: text("role").notNull(),
    expiresAt: integer("expires_at").notNull(),
    usedAt: integer("used_at"),
    createdAt: integer("created_at").notNull(),
  },
  // The cron deletes lapsed tickets every minute (one per stream opened: tracking pages too).
  (t) => [index("stream_tickets_expires_idx").on(t.expiresAt)],
);
