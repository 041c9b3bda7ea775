CREATE INDEX `auth_tokens_expires_idx` ON `auth_tokens` (`expires_at`) WHERE expires_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `auth_tokens_revoked_idx` ON `auth_tokens` (`revoked_at`) WHERE revoked_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `sign_in_failures_window_idx` ON `sign_in_failures` (`window_start`);--> statement-breakpoint
CREATE INDEX `user_tokens_expires_idx` ON `user_tokens` (`expires_at`);--> statement-breakpoint
CREATE INDEX `user_tokens_used_idx` ON `user_tokens` (`used_at`) WHERE used_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `stream_tickets_expires_idx` ON `stream_tickets` (`expires_at`);