-- Contract §23 (storage that stays bounded): the two tables a delivered task writes most rows
-- into are stored clustered on the key every query reads them by (SQLite "WITHOUT ROWID"
-- tables, https://www.sqlite.org/withoutrowid.html): the row lives in the primary key's b-tree,
-- so neither keeps a rowid table beside a text-keyed index, nor a second index for its reads.
--
-- events: by (account_id, id). Every read is one account's events by id (/events/, the live
-- stream, a delivery's event, the archive's day ranges); the old (account_id, id) index goes.
-- payload: packed JSON bytes (src/formats/packed-json.ts) or JSON text written before.
CREATE TABLE `events_clustered` (
	`id` text NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`object_id` text,
	`payload` blob NOT NULL,
	`created_at` integer NOT NULL,
	`dispatched_at` integer,
	PRIMARY KEY (`account_id`, `id`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `events_clustered` (`id`, `account_id`, `type`, `object_id`, `payload`, `created_at`, `dispatched_at`)
	SELECT `id`, `account_id`, `type`, `object_id`, `payload`, `created_at`, `dispatched_at` FROM `events`;
--> statement-breakpoint
DROP TABLE `events`;
--> statement-breakpoint
ALTER TABLE `events_clustered` RENAME TO `events`;
--> statement-breakpoint
CREATE INDEX `events_undispatched_idx` ON `events` (`created_at`) WHERE dispatched_at IS NULL;
--> statement-breakpoint
-- webhook_deliveries: by (webhook_id, event_id), which was already unique. A delivery's id is
-- its event's id from now on (unique within its webhook; the Standard Webhooks `webhook-id` is
-- the message's id, the same for every endpoint it goes to, as Svix does), so the row carries
-- no id of its own, nor its account (its webhook's). Deliveries made before keep the id they
-- were given (legacy_id: their `webhook-id` on a retry stays the same), found by a partial
-- index that holds only them and empties as they pass the retention window.
CREATE TABLE `webhook_deliveries_clustered` (
	`webhook_id` text NOT NULL,
	`event_id` text NOT NULL,
	`state` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`last_status_code` integer,
	`last_error` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`legacy_id` text,
	PRIMARY KEY (`webhook_id`, `event_id`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `webhook_deliveries_clustered` (`webhook_id`, `event_id`, `state`, `attempts`, `next_attempt_at`, `last_status_code`, `last_error`, `created_at`, `updated_at`, `legacy_id`)
	SELECT `webhook_id`, `event_id`, `state`, `attempts`, `next_attempt_at`, `last_status_code`, `last_error`, `created_at`, `updated_at`, `id` FROM `webhook_deliveries`;
--> statement-breakpoint
DROP TABLE `webhook_deliveries`;
--> statement-breakpoint
ALTER TABLE `webhook_deliveries_clustered` RENAME TO `webhook_deliveries`;
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`state`, `next_attempt_at`) WHERE state = 'pending';
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_legacy_idx` ON `webhook_deliveries` (`legacy_id`) WHERE legacy_id IS NOT NULL;
