CREATE TABLE `route_optimizations` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`state` text DEFAULT 'queued' NOT NULL,
	`route_ids` text NOT NULL,
	`task_ids` text NOT NULL,
	`ignore_time_windows` integer DEFAULT false NOT NULL,
	`objective` text,
	`apply` integer DEFAULT true NOT NULL,
	`result` text,
	`error_message` text DEFAULT '' NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `route_optimizations_account_created_idx` ON `route_optimizations` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `routes` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text DEFAULT '' NOT NULL,
	`assignee_id` text,
	`date` text,
	`state` text DEFAULT 'draft' NOT NULL,
	`objective` text DEFAULT 'distance' NOT NULL,
	`start_address` text,
	`end_address` text,
	`metafields` text DEFAULT '{}' NOT NULL,
	`distance_m` real,
	`duration_s` real,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `routes_account_created_idx` ON `routes` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_account_route_idx` ON `tasks` (`account_id`,`route_id`,`position`,`id`);