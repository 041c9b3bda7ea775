CREATE TABLE `trackers` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`token` text NOT NULL,
	`task_ids` text NOT NULL,
	`order_id` text,
	`public_task_fields` text NOT NULL,
	`task_popup_template` text,
	`expires_at` integer NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `trackers_token_unique` ON `trackers` (`token`);--> statement-breakpoint
CREATE INDEX `trackers_account_created_idx` ON `trackers` (`account_id`,`created_at`,`id`);