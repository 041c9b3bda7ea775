CREATE TABLE `notification_sends` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`task_id` text NOT NULL,
	`event` text NOT NULL,
	`template_id` text NOT NULL,
	`channel` text NOT NULL,
	`recipient` text NOT NULL,
	`state` text DEFAULT 'pending' NOT NULL,
	`sms_id` text,
	`error_message` text DEFAULT '' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`enqueued_at` integer,
	`sent_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_sends_once_idx` ON `notification_sends` (`task_id`,`event`,`template_id`,`recipient`);--> statement-breakpoint
CREATE INDEX `notification_sends_pending_idx` ON `notification_sends` (`state`,`enqueued_at`);--> statement-breakpoint
CREATE INDEX `notification_sends_task_idx` ON `notification_sends` (`account_id`,`task_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `notification_templates` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`event` text NOT NULL,
	`channel` text NOT NULL,
	`language` text NOT NULL,
	`subject` text DEFAULT '' NOT NULL,
	`body` text NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`pod_show_images` integer,
	`pod_show_signatures` integer,
	`pod_show_task_events` integer,
	`pod_show_task_event_creators` integer,
	`pod_show_reference` integer,
	`pod_show_description` integer,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `notification_templates_account_created_idx` ON `notification_templates` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `notification_templates_event_idx` ON `notification_templates` (`account_id`,`event`,`is_active`);--> statement-breakpoint
ALTER TABLE `outbound_emails` ADD `attachments` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
-- Written by hand (drizzle-kit does not model triggers). Contract §18: when a task reaches an
-- event (assigned, transit, completed, failed), each active template of that event owes one
-- message to each of the task's contact phones (sms) or e-mails (email), plus the assignee's
-- copy of task_completed e-mails when the account has review_emails_to_assignee (§11). The
-- database plans them in the statement that moves the task, so every write path (commands,
-- creation, orders, the scheduled alarm, imports, recurrences) is covered and a rolled-back
-- move plans nothing. Once per task, event, template and recipient: NOT EXISTS here, and the
-- unique index notification_sends_once_idx behind it.
CREATE TRIGGER `tasks_notification_sends_insert` AFTER INSERT ON `tasks`
WHEN NEW.state IN ('assigned', 'transit', 'completed', 'failed') BEGIN
  INSERT INTO notification_sends (id, account_id, task_id, event, template_id, channel, recipient, state, error_message, attempts, created_at, updated_at)
    SELECT lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
             || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
           NEW.account_id, NEW.id, t.event, t.id, t.channel, r.recipient, 'pending', '', 0,
           CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
    FROM notification_templates t
    JOIN (
      SELECT 'sms' AS channel, trim(p.value) AS recipient
        FROM json_each(CASE WHEN json_valid(NEW.contact) THEN NEW.contact ELSE '{}' END, '$.phones') p
        WHERE p.type = 'text' AND trim(p.value) <> ''
      UNION
      SELECT 'email', lower(trim(e.value))
        FROM json_each(CASE WHEN json_valid(NEW.contact) THEN NEW.contact ELSE '{}' END, '$.emails') e
        WHERE e.type = 'text' AND trim(e.value) <> ''
      UNION
      SELECT 'email', lower(u.email) FROM users u JOIN accounts a ON a.id = NEW.account_id
        WHERE NEW.state = 'completed' AND u.id = NEW.assignee_id AND a.review_emails_to_assignee = 1
    ) r ON r.channel = t.channel
    WHERE t.account_id = NEW.account_id AND t.event = 'task_' || NEW.state AND t.is_active = 1
      AND NOT EXISTS (SELECT 1 FROM notification_sends s
                      WHERE s.task_id = NEW.id AND s.event = t.event AND s.template_id = t.id AND s.recipient = r.recipient);
END;
--> statement-breakpoint
CREATE TRIGGER `tasks_notification_sends_update` AFTER UPDATE OF state ON `tasks`
WHEN NEW.state <> OLD.state AND NEW.state IN ('assigned', 'transit', 'completed', 'failed') BEGIN
  INSERT INTO notification_sends (id, account_id, task_id, event, template_id, channel, recipient, state, error_message, attempts, created_at, updated_at)
    SELECT lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
             || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
           NEW.account_id, NEW.id, t.event, t.id, t.channel, r.recipient, 'pending', '', 0,
           CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
    FROM notification_templates t
    JOIN (
      SELECT 'sms' AS channel, trim(p.value) AS recipient
        FROM json_each(CASE WHEN json_valid(NEW.contact) THEN NEW.contact ELSE '{}' END, '$.phones') p
        WHERE p.type = 'text' AND trim(p.value) <> ''
      UNION
      SELECT 'email', lower(trim(e.value))
        FROM json_each(CASE WHEN json_valid(NEW.contact) THEN NEW.contact ELSE '{}' END, '$.emails') e
        WHERE e.type = 'text' AND trim(e.value) <> ''
      UNION
      SELECT 'email', lower(u.email) FROM users u JOIN accounts a ON a.id = NEW.account_id
        WHERE NEW.state = 'completed' AND u.id = NEW.assignee_id AND a.review_emails_to_assignee = 1
    ) r ON r.channel = t.channel
    WHERE t.account_id = NEW.account_id AND t.event = 'task_' || NEW.state AND t.is_active = 1
      AND NOT EXISTS (SELECT 1 FROM notification_sends s
                      WHERE s.task_id = NEW.id AND s.event = t.event AND s.template_id = t.id AND s.recipient = r.recipient);
END;
