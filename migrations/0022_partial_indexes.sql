DROP INDEX `webhook_deliveries_due_idx`;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`state`,`next_attempt_at`) WHERE state = 'pending';--> statement-breakpoint
DROP INDEX `tasks_account_contact_address_idx`;--> statement-breakpoint
DROP INDEX `tasks_account_contact_address_ext_idx`;--> statement-breakpoint
DROP INDEX `tasks_account_client_idx`;--> statement-breakpoint
DROP INDEX `tasks_account_route_idx`;--> statement-breakpoint
DROP INDEX `tasks_account_import_idx`;--> statement-breakpoint
DROP INDEX `tasks_account_geocode_failed_idx`;--> statement-breakpoint
CREATE INDEX `tasks_account_contact_address_idx` ON `tasks` (`account_id`,`contact_address_id`) WHERE contact_address_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_account_contact_address_ext_idx` ON `tasks` (`account_id`,`contact_address_external_id`) WHERE contact_address_external_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_account_client_idx` ON `tasks` (`account_id`,`client_id`,`created_at`,`id`) WHERE client_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_account_route_idx` ON `tasks` (`account_id`,`route_id`,`position`,`id`) WHERE route_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_account_import_idx` ON `tasks` (`account_id`,`task_import_id`) WHERE task_import_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_account_geocode_failed_idx` ON `tasks` (`account_id`,`geocode_failed_at`) WHERE geocode_failed_at IS NOT NULL;