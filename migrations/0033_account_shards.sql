ALTER TABLE `accounts` ADD `shard` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `moving_until` integer;