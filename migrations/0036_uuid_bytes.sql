-- Contract §23 (storage that stays bounded): the UUIDs of the three tables a delivered task
-- writes the most rows into are stored as their 16 bytes (RFC 9562 §4) instead of 36 characters
-- of text, in the rows and in every index that holds them (src/db/uuid-bytes.ts converts in
-- SQL, so the API reads the same ids). `unhex(x, '-')` needs SQLite 3.41 or later (D1 and
-- workerd have it). events drops `object_id`, which nothing has written since migration 0027:
-- the table is rewritten anyway.
CREATE TABLE `events_bytes` (
	`id` blob NOT NULL,
	`account_id` blob NOT NULL,
	`type` text NOT NULL,
	`payload` blob NOT NULL,
	`base_id` blob,
	`created_at` integer NOT NULL,
	`dispatched_at` integer,
	PRIMARY KEY (`account_id`, `id`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `events_bytes` (`id`, `account_id`, `type`, `payload`, `base_id`, `created_at`, `dispatched_at`)
	SELECT unhex(`id`, '-'), unhex(`account_id`, '-'), `type`, `payload`, unhex(`base_id`, '-'), `created_at`, `dispatched_at` FROM `events`;
--> statement-breakpoint
DROP TABLE `events`;
--> statement-breakpoint
ALTER TABLE `events_bytes` RENAME TO `events`;
--> statement-breakpoint
CREATE INDEX `events_undispatched_idx` ON `events` (`created_at`) WHERE dispatched_at IS NULL;
--> statement-breakpoint
CREATE TABLE `webhook_deliveries_bytes` (
	`webhook_id` blob NOT NULL,
	`event_id` blob NOT NULL,
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
INSERT INTO `webhook_deliveries_bytes` (`webhook_id`, `event_id`, `state`, `attempts`, `next_attempt_at`, `last_status_code`, `last_error`, `created_at`, `updated_at`, `legacy_id`)
	SELECT unhex(`webhook_id`, '-'), unhex(`event_id`, '-'), `state`, `attempts`, `next_attempt_at`, `last_status_code`, `last_error`, `created_at`, `updated_at`, `legacy_id` FROM `webhook_deliveries`;
--> statement-breakpoint
DROP TABLE `webhook_deliveries`;
--> statement-breakpoint
ALTER TABLE `webhook_deliveries_bytes` RENAME TO `webhook_deliveries`;
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`state`, `next_attempt_at`) WHERE state = 'pending';
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_legacy_idx` ON `webhook_deliveries` (`legacy_id`) WHERE legacy_id IS NOT NULL;
--> statement-breakpoint
CREATE TABLE `task_commands_bytes` (
	`id` blob PRIMARY KEY NOT NULL,
	`account_id` blob NOT NULL,
	`task_id` blob NOT NULL,
	`external_id` text NOT NULL,
	`action` text NOT NULL,
	`time` integer NOT NULL,
	`assignee_id` blob,
	`task_data` text DEFAULT '{}' NOT NULL,
	`notes` text DEFAULT '' NOT NULL,
	`location` text,
	`user_id` blob,
	`state` text NOT NULL,
	`error_message` text DEFAULT '' NOT NULL,
	`accepted_at` integer,
	`rejected_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `task_commands_bytes` (`id`, `account_id`, `task_id`, `external_id`, `action`, `time`, `assignee_id`, `task_data`, `notes`, `location`, `user_id`, `state`, `error_message`, `accepted_at`, `rejected_at`, `created_at`, `updated_at`)
	SELECT unhex(`id`, '-'), unhex(`account_id`, '-'), unhex(`task_id`, '-'), `external_id`, `action`, `time`, unhex(`assignee_id`, '-'), `task_data`, `notes`, `location`, unhex(`user_id`, '-'), `state`, `error_message`, `accepted_at`, `rejected_at`, `created_at`, `updated_at` FROM `task_commands` ORDER BY `created_at`, `id`;
--> statement-breakpoint
DROP TABLE `task_commands`;
--> statement-breakpoint
ALTER TABLE `task_commands_bytes` RENAME TO `task_commands`;
--> statement-breakpoint
CREATE UNIQUE INDEX `task_commands_external_id_unique` ON `task_commands` (`account_id`,`external_id`);
--> statement-breakpoint
CREATE INDEX `task_commands_account_created_idx` ON `task_commands` (`account_id`,`created_at`,`id`);
--> statement-breakpoint
CREATE INDEX `task_commands_task_idx` ON `task_commands` (`task_id`,`created_at`,`id`);
--> statement-breakpoint
CREATE INDEX `task_commands_pending_idx` ON `task_commands` (`created_at`,`id`) WHERE state = 'pending';
--> statement-breakpoint
CREATE INDEX `task_commands_user_location_idx` ON `task_commands` (`user_id`,`time`) WHERE location IS NOT NULL;
