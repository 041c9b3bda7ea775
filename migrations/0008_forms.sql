CREATE TABLE `form_fields` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`form_id` text NOT NULL,
	`key` text NOT NULL,
	`label` text DEFAULT '' NOT NULL,
	`field_type` text NOT NULL,
	`choices` text DEFAULT '[]' NOT NULL,
	`default_value` text,
	`required` integer DEFAULT false NOT NULL,
	`position` real DEFAULT 0 NOT NULL,
	`visible_to_worker` integer DEFAULT true NOT NULL,
	`collapsed` integer DEFAULT false NOT NULL,
	`layout` text DEFAULT 'list' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `form_fields_form_key_unique` ON `form_fields` (`form_id`,`key`);--> statement-breakpoint
CREATE INDEX `form_fields_account_created_idx` ON `form_fields` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `form_responses` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`form_id` text NOT NULL,
	`task_id` text,
	`data` text DEFAULT '{}' NOT NULL,
	`state` text DEFAULT 'draft' NOT NULL,
	`completed_at` integer,
	`completed_by` text,
	`schema_snapshot` text,
	`created_by` text,
	`version` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `form_responses_account_created_idx` ON `form_responses` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `form_responses_account_task_idx` ON `form_responses` (`account_id`,`task_id`);--> statement-breakpoint
CREATE INDEX `form_responses_form_idx` ON `form_responses` (`form_id`,`state`);--> statement-breakpoint
CREATE TABLE `forms` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `forms_account_created_idx` ON `forms` (`account_id`,`created_at`,`id`);