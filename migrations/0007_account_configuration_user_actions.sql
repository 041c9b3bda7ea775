ALTER TABLE `account_roles` ADD `show_travel_estimates` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `account_roles` ADD `vehicle_capacity` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `account_roles` ADD `start_address` text;--> statement-breakpoint
ALTER TABLE `account_roles` ADD `end_address` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `timezone` text DEFAULT 'UTC' NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `feature_signer_name` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `map_provider` text DEFAULT 'osm' NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `google_maps_region` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `optimize_earliest_start` text DEFAULT '08:00:00' NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `optimize_latest_end` text DEFAULT '17:00:00' NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `optimize_visit_duration_margin` text DEFAULT '00:00:00' NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `pod_show_images` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `pod_show_signatures` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `pod_show_task_events` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `pod_show_task_event_creators` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `pod_show_reference` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `pod_show_description` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `accounts` ADD `tracker_task_popup_template` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `auth_tokens` ADD `actor_user_id` text;--> statement-breakpoint
ALTER TABLE `users` ADD `email_verified_at` integer;--> statement-breakpoint
ALTER TABLE `attachments` ADD `signer_name` text;