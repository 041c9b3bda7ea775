DROP INDEX `task_commands_account_task_idx`;--> statement-breakpoint
CREATE INDEX `task_commands_task_idx` ON `task_commands` (`task_id`,`created_at`,`id`);