CREATE TABLE `sms` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`to_number` text NOT NULL,
	`message` text NOT NULL,
	`task_id` text,
	`state` text DEFAULT 'queued' NOT NULL,
	`provider` text NOT NULL,
	`provider_message_id` text,
	`error_message` text DEFAULT '' NOT NULL,
	`sent_at` integer,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sms_account_created_idx` ON `sms` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `sms_duplicate_idx` ON `sms` (`account_id`,`to_number`,`created_at`);--> statement-breakpoint
CREATE INDEX `sms_provider_message_idx` ON `sms` (`provider_message_id`);