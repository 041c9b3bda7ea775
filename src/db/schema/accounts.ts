import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Timestamps are epoch milliseconds (integers): they index and compare cheaply, and the
// serializer renders them in the caller's time zone.

export const accounts = sqliteTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    apiVersion: text("api_version").notNull(),
    featureAllowWorkerReordering: integer("feature_allow_worker_reordering", { mode: "boolean" })
      .notNull()
      .default(false),
    transitActiveLimit: integer("transit_active_limit").default(1),
    failedReasons: text("failed_reasons", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    reviewEmailsToAssignee: integer("review_emails_to_assignee", { mode: "boolean" })
      .notNull()
      .default(false),
    language: text("language").notNull().default("en"),
    // Account configuration (contract §11).
    timezone: text("timezone").notNull().default("UTC"),
    featureSignerName: integer("feature_signer_name", { mode: "boolean" }).notNull().default(false),
    mapProvider: text("map_provider").notNull().default("osm"),
    googleMapsRegion: text("google_maps_region"),
    optimizeEarliestStart: text("optimize_earliest_start").notNull().default("08:00:00"),
    optimizeLatestEnd: text("optimize_latest_end").notNull().default("17:00:00"),
    optimizeVisitDurationMargin: text("optimize_visit_duration_margin").notNull().default("00:00:00"),
    podShowImages: integer("pod_show_images", { mode: "boolean" }).notNull().default(true),
    podShowSignatures: integer("pod_show_signatures", { mode: "boolean" }).notNull().default(true),
    podShowTaskEvents: integer("pod_show_task_events", { mode: "boolean" }).notNull().default(true),
    podShowTaskEventCreators: integer("pod_show_task_event_creators", { mode: "boolean" })
      .notNull()
      .default(false),
    podShowReference: integer("pod_show_reference", { mode: "boolean" }).notNull().default(true),
    podShowDescription: integer("pod_show_description", { mode: "boolean" }).notNull().default(true),
    trackerTaskPopupTemplate: text("tracker_task_popup_template").notNull().default(""),
    /** Days a finished task stays before it is archived to R2 and removed (contract §23); null: kept. */
    dataRetentionDays: integer("data_retention_days"),
    /** Days a worker's positions are kept, then deleted, not archived (contract §28; at most 90). */
    positionRetentionDays: integer("position_retention_days").notNull().default(7),
    /** Contract §29: `insert` places each new unassigned task of today on an on-duty worker's route. */
    autoAssign: text("auto_assign", { enum: ["off", "insert"] })
      .notNull()
      .default("off"),

    /** Until when the account may have live streams open (set when one opens): writes poke its stream object. */
    liveUntil: integer("live_until"),
    /**
     * The shard binding that holds the account's data (contract §24, src/db/shards.ts); null: the
     * directory's own database, where every account lived before shards.
     */
    shard: text("shard"),
    /** While `npm run accounts:move` copies the account: its writes answer 503 until then (epoch ms). */
    movingUntil: integer("moving_until"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  // The cron's list of accounts that archive their finished tasks (retention/tasks.ts
  // `retainingAccounts`), every minute: the few that set a window, not every account.
  (t) => [
    index("accounts_retention_idx").on(t.dataRetentionDays, t.id).where(sql`data_retention_days IS NOT NULL`),
  ],
);

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    name: text("name").notNull().default(""),
    passwordHash: text("password_hash"),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    defaultAccountId: text("default_account_id").references(() => accounts.id),
    /** Set by `POST /users/verify_email/confirm/` (contract §14); cleared when the e-mail changes. */
    emailVerifiedAt: integer("email_verified_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("users_email_unique").on(t.email)],
);

export const ROLES = ["admin", "manager", "worker", "integration"] as const;
export type RoleName = (typeof ROLES)[number];
export const ROLE_STATES = ["active", "pending"] as const;
export type RoleState = (typeof ROLE_STATES)[number];

export const accountRoles = sqliteTable(
  "account_roles",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    role: text("role").$type<RoleName>().notNull(),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    /**
     * `pending` is an invitation (or a new user's role before activation): it grants nothing
     * until the user accepts it, because no account's admin may hand another account's user a
     * role on its own (a user may hold roles in several accounts).
     */
    state: text("state").$type<RoleState>().notNull().default("active"),
    // The worker's vehicle and depots for route optimization (contract §11, §16).
    showTravelEstimates: integer("show_travel_estimates", { mode: "boolean" }).notNull().default(true),
    vehicleCapacity: text("vehicle_capacity", { mode: "json" })
      .$type<number[]>()
      .notNull()
      .default(sql`'[]'`),
    startAddress: text("start_address", { mode: "json" }),
    endAddress: text("end_address", { mode: "json" }),
    /** On duty (contract §28): set by the worker itself or the account's admins and managers. */
    onDuty: integer("on_duty", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("account_roles_account_user_unique").on(t.accountId, t.userId),
    index("account_roles_user_idx").on(t.userId),
  ],
);

export const TOKEN_KINDS = ["session", "authorization", "access"] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/**
 * Every credential that can be presented is a row, so revocation is immediate: JWTs carry
 * the row id (`jti`), access tokens are found by their SHA-256 hash (the token itself is
 * never stored).
 */
export const authTokens = sqliteTable(
  "auth_tokens",
  {
    id: text("id").primaryKey(),
    kind: text("kind").$type<TokenKind>().notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    /** The account an authorization token is scoped to; null acts in the user's default account. */
    accountId: text("account_id").references(() => accounts.id),
    /** For authorization tokens: the session they were exchanged from (revoked with it). */
    parentId: text("parent_id"),
    tokenHash: text("token_hash"),
    name: text("name").notNull().default(""),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at"),
    revokedAt: integer("revoked_at"),
    lastUsedAt: integer("last_used_at"),
    /**
     * For a hijack token (contract §14): the admin acting as `user_id`, carried in the JWT's
     * `act` claim too (RFC 8693 §4.1). Such a token is scoped to `account_id` and mints no other.
     */
    actorUserId: text("actor_user_id"),
  },
  (t) => [
    uniqueIndex("auth_tokens_hash_unique").on(t.tokenHash),
    index("auth_tokens_user_idx").on(t.userId, t.createdAt),
    // The cron deletes spent tokens every minute (retention/sweep.ts): through these (SQLite
    // joins the two sides of its OR, "MULTI-INDEX OR") it reads the rows it deletes, where it
    // read every token of the service (D1 bills each row read). Partial: a live token has
    // neither time set, or only an expiry.
    index("auth_tokens_expires_idx").on(t.expiresAt).where(sql`expires_at IS NOT NULL`),
    index("auth_tokens_revoked_idx").on(t.revokedAt).where(sql`revoked_at IS NOT NULL`),
  ],
);

export const USER_TOKEN_KINDS = ["activation", "email_verification", "password_reset"] as const;
export type UserTokenKind = (typeof USER_TOKEN_KINDS)[number];

/**
 * Single-use tokens mailed to a user (activation today; e-mail verification and the like
 * later). Only the SHA-256 of the token is stored; `used_at` is set by the one UPDATE that
 * consumes it, so a token cannot be used twice even by two concurrent requests.
 */
export const userTokens = sqliteTable(
  "user_tokens",
  {
    id: text("id").primaryKey(),
    kind: text("kind").$type<UserTokenKind>().notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    /** The account the token was issued for (the role an activation accepts); null if none. */
    accountId: text("account_id").references(() => accounts.id),
    tokenHash: text("token_hash").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    usedAt: integer("used_at"),
  },
  (t) => [
    uniqueIndex("user_tokens_hash_unique").on(t.tokenHash),
    index("user_tokens_user_idx").on(t.userId, t.kind),
    // The cron's delete of spent and lapsed ones, as for auth_tokens above.
    index("user_tokens_expires_idx").on(t.expiresAt),
    index("user_tokens_used_idx").on(t.usedAt).where(sql`used_at IS NOT NULL`),
  ],
);

/**
 * Outbound e-mail kept by the local provider (development and tests), readable at
 * `GET /outbox/` by the admins of the account the message was sent for.
 */
export const outboundEmails = sqliteTable(
  "outbound_emails",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id"),
    kind: text("kind").notNull(),
    to: text("to_address").notNull(),
    subject: text("subject").notNull(),
    text: text("text").notNull(),
    /** JSON list of `{file_name, content_type, size, key}`: the attachments' bytes are in R2 at `key`. */
    attachments: text("attachments").notNull().default("[]"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    index("outbound_emails_account_idx").on(t.accountId, t.createdAt),
    // The archive reads an account's rows of a day in id order (retention/sources.ts).
    index("outbound_emails_account_id_idx").on(t.accountId, t.id),
  ],
);

/**
 * Sign-in failures per key (`user:<email>` or `ip:<address>`), counted in one UPSERT so two
 * concurrent failures never read the same count.
 */
export const signInFailures = sqliteTable(
  "sign_in_failures",
  {
    key: text("key").primaryKey(),
    windowStart: integer("window_start").notNull(),
    failures: integer("failures").notNull(),
    /** How many times the key has been blocked in a row: the back-off doubles with it. */
    strikes: integer("strikes").notNull().default(0),
    blockedUntil: integer("blocked_until"),
  },
  // The cron's delete of old windows: a credential-stuffing run leaves a row per name it
  // tried, which the delete would otherwise read in full every minute.
  (t) => [index("sign_in_failures_window_idx").on(t.windowStart)],
);

/** Metafield definitions (contract §12): custom fields of tasks, orders, routes and contact addresses. */
export const metafields = sqliteTable(
  "metafields",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    key: text("key").notNull(),
    label: text("label").notNull().default(""),
    appliesTo: text("applies_to").notNull(),
    valueType: text("value_type").notNull(),
    choices: text("choices", { mode: "json" }).$type<string[]>().notNull().default(sql`'[]'`),
    isRequiredBeforeComplete: integer("is_required_before_complete", { mode: "boolean" })
      .notNull()
      .default(false),
    isEditableByWorker: integer("is_editable_by_worker", { mode: "boolean" }).notNull().default(true),
    hideWhenEmpty: integer("hide_when_empty", { mode: "boolean" }).notNull().default(false),
    source: text("source").notNull().default("manual"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    // One key per account and target, enforced by the INSERT (racing creates cannot both win).
    uniqueIndex("metafields_account_target_key_unique").on(t.accountId, t.appliesTo, t.key),
    index("metafields_account_created_idx").on(t.accountId, t.createdAt, t.id),
  ],
);

/**
 * Moves of accounts between databases (contract §24, `npm run accounts:move`), kept in the
 * directory: the script asks for one, the cron carries it out a step at a time
 * (services/accounts/move.ts), and what it reached is here, so a crash resumes where it stopped.
 */
export const accountMoves = sqliteTable("account_moves", {
  accountId: text("account_id").primaryKey(),
  /** The binding the account leaves ("DB": the directory's own database) and the shard it goes to. */
  source: text("source"),
  target: text("target").notNull(),
  /** requested, marked, copying, verifying, draining, deleting, done, failed */
  phase: text("phase").notNull(),
  /** Where the copy or the delete stands: the table's place in the list and its last key (JSON). */
  tableIndex: integer("table_index").notNull().default(0),
  cursor: text("cursor"),
  rowsCopied: integer("rows_copied").notNull().default(0),
  rowsDeleted: integer("rows_deleted").notNull().default(0),
  /** Failed steps so far: a move that fails before its switch five times gives up, whole on its source. */
  attempts: integer("attempts").notNull().default(0),
  /** Per table: rows and checksum as verified; the last error. JSON. */
  detail: text("detail"),
  requestedAt: integer("requested_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
  markedAt: integer("marked_at"),
  switchedAt: integer("switched_at"),
  finishedAt: integer("finished_at"),
  /** The cron run carrying the move out holds it until then (epoch ms): runs never overlap on one move. */
  claimedUntil: integer("claimed_until"),
});

/**
 * The directory's lookups for anonymous entry points (contract §24): a key a stranger presents
 * (a tracking page's token) and the account it belongs to, so the page is read from that
 * account's database alone instead of asking every database (db/shards.ts `findByPublicKey`).
 * Keys point at accounts, not shards: a move leaves them as they are.
 */
export const publicKeys = sqliteTable(
  "public_keys",
  {
    kind: text("kind").notNull(),
    key: text("key").notNull(),
    accountId: text("account_id").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.key] })],
);
