CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`object_id` text,
	`payload` text NOT NULL,
	`created_at` integer NOT NULL,
	`dispatched_at` integer
);
--> statement-breakpoint
CREATE INDEX `events_account_idx` ON `events` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `events_undispatched_idx` ON `events` (`dispatched_at`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`event_id` text NOT NULL,
	`state` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`last_status_code` integer,
	`last_error` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_unique` ON `webhook_deliveries` (`webhook_id`,`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_idx` ON `webhook_deliveries` (`webhook_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`state` text DEFAULT 'active' NOT NULL,
	`failed_at` integer,
	`fail_message` text DEFAULT '' NOT NULL,
	`form_response_events` integer DEFAULT false NOT NULL,
	`secret` text NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhooks_account_idx` ON `webhooks` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `attachments` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`account_id` text NOT NULL,
	`task_id` text,
	`order_id` text,
	`file_upload_id` text,
	`external_id` text,
	`file_name` text NOT NULL,
	`key` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`visible_to_worker` integer DEFAULT true NOT NULL,
	`visible_to_client` integer DEFAULT false NOT NULL,
	`source` text,
	`created_by` text,
	`mimetype` text,
	`thumbnail_key` text,
	`recurrence_id` text,
	`s3_response_headers` text DEFAULT '{}' NOT NULL,
	`size` integer,
	`etag` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `attachments_account_kind_created_idx` ON `attachments` (`account_id`,`kind`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `attachments_account_task_idx` ON `attachments` (`account_id`,`kind`,`task_id`);--> statement-breakpoint
CREATE INDEX `attachments_account_order_idx` ON `attachments` (`account_id`,`kind`,`order_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `attachments_file_upload_unique` ON `attachments` (`kind`,`file_upload_id`);--> statement-breakpoint
CREATE TABLE `file_uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`created_by` text,
	`file_name` text NOT NULL,
	`file_type` text NOT NULL,
	`source` text DEFAULT 'integration' NOT NULL,
	`key` text NOT NULL,
	`uploaded_at` integer,
	`size` integer,
	`etag` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `file_uploads_account_created_idx` ON `file_uploads` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `file_uploads_key_unique` ON `file_uploads` (`key`);--> statement-breakpoint
CREATE TABLE `contact_addresses` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`external_id` text,
	`address` text DEFAULT '{}' NOT NULL,
	`contact` text DEFAULT '{}' NOT NULL,
	`metafields` text DEFAULT '{}' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `contact_addresses_external_id_unique` ON `contact_addresses` (`account_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `contact_addresses_account_created_idx` ON `contact_addresses` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `orders` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`external_id` text,
	`reference` text DEFAULT '' NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`client_id` text,
	`orderer` text,
	`assignee_id` text,
	`auto_assign` integer DEFAULT false NOT NULL,
	`created_by` text,
	`recurrence_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `orders_external_id_unique` ON `orders` (`account_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `orders_account_created_idx` ON `orders` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `orders_account_updated_idx` ON `orders` (`account_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE TABLE `task_commands` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`task_id` text NOT NULL,
	`external_id` text NOT NULL,
	`action` text NOT NULL,
	`time` integer NOT NULL,
	`assignee_id` text,
	`task_data` text DEFAULT '{}' NOT NULL,
	`notes` text DEFAULT '' NOT NULL,
	`location` text,
	`user_id` text,
	`state` text NOT NULL,
	`error_message` text DEFAULT '' NOT NULL,
	`accepted_at` integer,
	`rejected_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `task_commands_external_id_unique` ON `task_commands` (`account_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `task_commands_account_created_idx` ON `task_commands` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `task_commands_account_task_idx` ON `task_commands` (`account_id`,`task_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`state` text NOT NULL,
	`category` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`address` text DEFAULT '{}' NOT NULL,
	`geocoded_at` integer,
	`geocode_failed_at` integer,
	`contact` text DEFAULT '{}' NOT NULL,
	`complete_after` integer,
	`complete_before` integer,
	`scheduled_time` integer,
	`duration_seconds` integer,
	`assignee_id` text,
	`order_id` text,
	`order_index` integer,
	`position` real,
	`created_by` text,
	`metafields` text DEFAULT '{}' NOT NULL,
	`route_id` text,
	`signers` text,
	`form_default_values` text,
	`recurrence_id` text,
	`calendar_time` text,
	`contact_address_id` text,
	`contact_address_external_id` text,
	`task_import_id` text,
	`version` integer DEFAULT 1 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `tasks_account_created_idx` ON `tasks` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_account_updated_idx` ON `tasks` (`account_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_account_state_created_idx` ON `tasks` (`account_id`,`state`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_account_assignee_state_idx` ON `tasks` (`account_id`,`assignee_id`,`state`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_account_order_idx` ON `tasks` (`account_id`,`order_id`,`order_index`);--> statement-breakpoint
CREATE INDEX `tasks_account_after_idx` ON `tasks` (`account_id`,`complete_after`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_account_before_idx` ON `tasks` (`account_id`,`complete_before`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_account_position_idx` ON `tasks` (`account_id`,`position`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_account_category_idx` ON `tasks` (`account_id`,`category`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_account_contact_address_idx` ON `tasks` (`account_id`,`contact_address_id`);--> statement-breakpoint
CREATE INDEX `tasks_account_contact_address_ext_idx` ON `tasks` (`account_id`,`contact_address_external_id`);--> statement-breakpoint
CREATE INDEX `tasks_account_import_idx` ON `tasks` (`account_id`,`task_import_id`);--> statement-breakpoint
CREATE INDEX `tasks_account_geocoded_idx` ON `tasks` (`account_id`,`geocoded_at`);--> statement-breakpoint
CREATE INDEX `tasks_account_geocode_failed_idx` ON `tasks` (`account_id`,`geocode_failed_at`);