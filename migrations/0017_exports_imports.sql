CREATE TABLE `data_exports` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`format` text NOT NULL,
	`fields` text NOT NULL,
	`filters` text DEFAULT '{}' NOT NULL,
	`time_zone` text,
	`state` text DEFAULT 'queued' NOT NULL,
	`row_count` integer DEFAULT 0 NOT NULL,
	`file_key` text,
	`error_message` text DEFAULT '' NOT NULL,
	`step` integer DEFAULT 0 NOT NULL,
	`cursor` text,
	`upload_id` text,
	`parts` text DEFAULT '[]' NOT NULL,
	`carry_bytes` integer DEFAULT 0 NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`completed_at` integer
);
--> statement-breakpoint
CREATE INDEX `data_exports_account_kind_created_idx` ON `data_exports` (`account_id`,`kind`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `data_imports` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`file_upload_id` text NOT NULL,
	`file_key` text NOT NULL,
	`dry_run` integer DEFAULT false NOT NULL,
	`columns` text NOT NULL,
	`time_zone` text,
	`state` text DEFAULT 'queued' NOT NULL,
	`staged` integer DEFAULT false NOT NULL,
	`total_rows` integer,
	`groups` integer DEFAULT 0 NOT NULL,
	`cursor` integer DEFAULT 0 NOT NULL,
	`processed_rows` integer DEFAULT 0 NOT NULL,
	`created` integer DEFAULT 0 NOT NULL,
	`updated` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`errors` text DEFAULT '[]' NOT NULL,
	`error_message` text DEFAULT '' NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`completed_at` integer
);
--> statement-breakpoint
CREATE INDEX `data_imports_account_created_idx` ON `data_imports` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `import_rows` (
	`import_id` text NOT NULL,
	`row` integer NOT NULL,
	`grp` integer NOT NULL,
	`cells` text NOT NULL,
	PRIMARY KEY(`import_id`, `row`)
);
--> statement-breakpoint
CREATE INDEX `import_rows_group_idx` ON `import_rows` (`import_id`,`grp`,`row`);