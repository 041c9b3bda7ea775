CREATE TABLE `clients` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`external_id` text,
	`emails` text DEFAULT '[]' NOT NULL,
	`phones` text DEFAULT '[]' NOT NULL,
	`notes` text DEFAULT '' NOT NULL,
	`metafields` text DEFAULT '{}' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `clients_external_id_unique` ON `clients` (`account_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `clients_account_created_idx` ON `clients` (`account_id`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `tasks` ADD `client_id` text;--> statement-breakpoint
CREATE INDEX `tasks_account_client_idx` ON `tasks` (`account_id`,`client_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `orders_account_client_idx` ON `orders` (`account_id`,`client_id`,`created_at`,`id`);