CREATE TABLE `recurrence_occurrences` (
	`recurrence_id` text NOT NULL,
	`occurrence_at` integer NOT NULL,
	`object_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`recurrence_id`) REFERENCES `recurrences`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `recurrence_occurrences_unique` ON `recurrence_occurrences` (`recurrence_id`,`occurrence_at`);--> statement-breakpoint
CREATE TABLE `recurrences` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`rule` text NOT NULL,
	`start_local` text NOT NULL,
	`end_local` text,
	`timezone` text NOT NULL,
	`assignee_id` text,
	`template` text DEFAULT '{}' NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`next_occurrence_at` integer,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `recurrences_account_created_idx` ON `recurrences` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `recurrences_due_idx` ON `recurrences` (`is_active`,`next_occurrence_at`);