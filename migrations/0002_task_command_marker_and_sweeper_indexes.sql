ALTER TABLE `tasks` ADD `last_command_id` text;--> statement-breakpoint
CREATE INDEX `tasks_scheduled_due_idx` ON `tasks` (`scheduled_time`) WHERE state = 'scheduled';--> statement-breakpoint
CREATE UNIQUE INDEX `tasks_order_index_unique` ON `tasks` (`order_id`,`order_index`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`state`,`next_attempt_at`);