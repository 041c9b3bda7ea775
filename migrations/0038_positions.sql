CREATE TABLE `position_slices` (
	`account_id` blob NOT NULL,
	`user_id` blob NOT NULL,
	`slice` integer NOT NULL,
	`count` integer NOT NULL,
	`data` blob NOT NULL,
	PRIMARY KEY(`account_id`, `user_id`, `slice`)
);
--> statement-breakpoint
CREATE INDEX `position_slices_sweep_idx` ON `position_slices` (`account_id`,`slice`);--> statement-breakpoint
CREATE TABLE `worker_positions` (
	`account_id` blob NOT NULL,
	`user_id` blob NOT NULL,
	`lon` real NOT NULL,
	`lat` real NOT NULL,
	`time` integer NOT NULL,
	`accuracy_m` real,
	PRIMARY KEY(`account_id`, `user_id`)
);
--> statement-breakpoint
ALTER TABLE `account_roles` ADD `on_duty` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `position_retention_days` integer DEFAULT 7 NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_open_due_idx` ON `tasks` (`complete_before`) WHERE assignee_id IS NOT NULL AND state IN ('assigned', 'accepted', 'transit', 'active');