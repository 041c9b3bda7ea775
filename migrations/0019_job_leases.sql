ALTER TABLE `data_exports` ADD `lease_expires_at` integer;--> statement-breakpoint
ALTER TABLE `data_exports` ADD `lease_attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `data_exports` ADD `base_url` text;--> statement-breakpoint
ALTER TABLE `data_exports` ADD `file_expires_at` integer;--> statement-breakpoint
CREATE INDEX `data_exports_lease_idx` ON `data_exports` (`lease_expires_at`) WHERE state IN ('queued', 'running');--> statement-breakpoint
CREATE INDEX `data_exports_file_expiry_idx` ON `data_exports` (`file_expires_at`) WHERE file_key IS NOT NULL;--> statement-breakpoint
ALTER TABLE `data_imports` ADD `lease_expires_at` integer;--> statement-breakpoint
ALTER TABLE `data_imports` ADD `lease_attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `data_imports` ADD `base_url` text;--> statement-breakpoint
CREATE INDEX `data_imports_lease_idx` ON `data_imports` (`lease_expires_at`) WHERE state IN ('queued', 'running');--> statement-breakpoint
ALTER TABLE `route_optimizations` ADD `lease_expires_at` integer;--> statement-breakpoint
ALTER TABLE `route_optimizations` ADD `lease_attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `route_optimizations` ADD `base_url` text;--> statement-breakpoint
CREATE INDEX `route_optimizations_lease_idx` ON `route_optimizations` (`lease_expires_at`) WHERE state IN ('queued', 'running');--> statement-breakpoint
-- Jobs already under way when this migration runs get a lease from their last update, so the
-- cron's sweep re-queues any whose message was lost before leases existed.
UPDATE `data_exports` SET `lease_expires_at` = `updated_at` + 600000 WHERE `state` IN ('queued', 'running');--> statement-breakpoint
UPDATE `data_imports` SET `lease_expires_at` = `updated_at` + 600000 WHERE `state` IN ('queued', 'running');--> statement-breakpoint
UPDATE `route_optimizations` SET `lease_expires_at` = `updated_at` + 600000 WHERE `state` IN ('queued', 'running');
