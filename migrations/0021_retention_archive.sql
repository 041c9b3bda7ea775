CREATE TABLE `archives` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`day` text NOT NULL,
	`part` integer DEFAULT 1 NOT NULL,
	`key` text NOT NULL,
	`state` text NOT NULL,
	`rows` integer DEFAULT 0 NOT NULL,
	`bytes` integer DEFAULT 0 NOT NULL,
	`sha256` text,
	`last_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `archives_part_unique` ON `archives` (`account_id`,`kind`,`day`,`part`);--> statement-breakpoint
CREATE INDEX `archives_account_idx` ON `archives` (`account_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `accounts` ADD `data_retention_days` integer;