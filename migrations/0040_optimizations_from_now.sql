ALTER TABLE `route_optimizations` ADD `from_now` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `route_optimizations` ADD `reassign` integer DEFAULT true NOT NULL;