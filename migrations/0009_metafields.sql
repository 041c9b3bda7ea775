CREATE TABLE `metafields` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`key` text NOT NULL,
	`label` text DEFAULT '' NOT NULL,
	`applies_to` text NOT NULL,
	`value_type` text NOT NULL,
	`choices` text DEFAULT '[]' NOT NULL,
	`is_required_before_complete` integer DEFAULT false NOT NULL,
	`is_editable_by_worker` integer DEFAULT true NOT NULL,
	`hide_when_empty` integer DEFAULT false NOT NULL,
	`source` text DEFAULT 'manual' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `metafields_account_target_key_unique` ON `metafields` (`account_id`,`applies_to`,`key`);--> statement-breakpoint
CREATE INDEX `metafields_account_created_idx` ON `metafields` (`account_id`,`created_at`,`id`);