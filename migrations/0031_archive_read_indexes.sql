CREATE INDEX `outbound_emails_account_id_idx` ON `outbound_emails` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `data_exports_account_id_idx` ON `data_exports` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `data_imports_account_id_idx` ON `data_imports` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `route_optimizations_account_id_idx` ON `route_optimizations` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `sms_account_id_idx` ON `sms` (`account_id`,`id`);