CREATE TABLE `public_keys` (
	`kind` text NOT NULL,
	`key` text NOT NULL,
	`account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`kind`, `key`)
) WITHOUT ROWID;
