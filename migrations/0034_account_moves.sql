CREATE TABLE `account_moves` (
	`account_id` text PRIMARY KEY NOT NULL,
	`source` text,
	`target` text NOT NULL,
	`phase` text NOT NULL,
	`table_index` integer DEFAULT 0 NOT NULL,
	`cursor` text,
	`rows_copied` integer DEFAULT 0 NOT NULL,
	`rows_deleted` integer DEFAULT 0 NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`detail` text,
	`requested_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`marked_at` integer,
	`switched_at` integer,
	`finished_at` integer,
	`claimed_until` integer
);
