CREATE TABLE `task_metafield_values` (
	`account_id` text NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`task_id` text NOT NULL,
	PRIMARY KEY(`account_id`, `key`, `value`, `task_id`)
);
--> statement-breakpoint
CREATE INDEX `task_metafield_values_task_idx` ON `task_metafield_values` (`task_id`);--> statement-breakpoint
-- Written by hand (drizzle-kit does not model triggers): the index of task metafield values is
-- kept by the database itself, in the statement that writes the task, whatever path writes it.
-- One row per scalar value (booleans as 'true'/'false', numbers as SQLite's text of them) and
-- per scalar item of a list value; null, objects and nested lists are not indexed.
CREATE TRIGGER `tasks_metafield_values_insert` AFTER INSERT ON `tasks` BEGIN
  INSERT OR IGNORE INTO task_metafield_values (account_id, key, value, task_id)
    SELECT NEW.account_id, m.key,
      CASE m.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(m.value AS TEXT) END, NEW.id
    FROM json_each(CASE WHEN json_valid(NEW.metafields) AND json_type(NEW.metafields) = 'object' THEN NEW.metafields ELSE '{}' END) m
    WHERE m.type NOT IN ('null', 'array', 'object');
  INSERT OR IGNORE INTO task_metafield_values (account_id, key, value, task_id)
    SELECT NEW.account_id, m.key,
      CASE i.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(i.value AS TEXT) END, NEW.id
    FROM json_each(CASE WHEN json_valid(NEW.metafields) AND json_type(NEW.metafields) = 'object' THEN NEW.metafields ELSE '{}' END) m, json_each(m.value) i
    WHERE m.type = 'array' AND i.type NOT IN ('null', 'array', 'object');
END;
--> statement-breakpoint
CREATE TRIGGER `tasks_metafield_values_update` AFTER UPDATE OF metafields ON `tasks` BEGIN
  DELETE FROM task_metafield_values WHERE task_id = OLD.id;
  INSERT OR IGNORE INTO task_metafield_values (account_id, key, value, task_id)
    SELECT NEW.account_id, m.key,
      CASE m.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(m.value AS TEXT) END, NEW.id
    FROM json_each(CASE WHEN json_valid(NEW.metafields) AND json_type(NEW.metafields) = 'object' THEN NEW.metafields ELSE '{}' END) m
    WHERE m.type NOT IN ('null', 'array', 'object');
  INSERT OR IGNORE INTO task_metafield_values (account_id, key, value, task_id)
    SELECT NEW.account_id, m.key,
      CASE i.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(i.value AS TEXT) END, NEW.id
    FROM json_each(CASE WHEN json_valid(NEW.metafields) AND json_type(NEW.metafields) = 'object' THEN NEW.metafields ELSE '{}' END) m, json_each(m.value) i
    WHERE m.type = 'array' AND i.type NOT IN ('null', 'array', 'object');
END;
--> statement-breakpoint
CREATE TRIGGER `tasks_metafield_values_delete` AFTER DELETE ON `tasks` BEGIN
  DELETE FROM task_metafield_values WHERE task_id = OLD.id;
END;
--> statement-breakpoint
INSERT OR IGNORE INTO task_metafield_values (account_id, key, value, task_id)
  SELECT t.account_id, m.key, CASE m.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(m.value AS TEXT) END, t.id
  FROM tasks t, json_each(CASE WHEN json_valid(t.metafields) AND json_type(t.metafields) = 'object' THEN t.metafields ELSE '{}' END) m
  WHERE m.type NOT IN ('null', 'array', 'object');
--> statement-breakpoint
INSERT OR IGNORE INTO task_metafield_values (account_id, key, value, task_id)
  SELECT t.account_id, m.key, CASE i.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(i.value AS TEXT) END, t.id
  FROM tasks t, json_each(CASE WHEN json_valid(t.metafields) AND json_type(t.metafields) = 'object' THEN t.metafields ELSE '{}' END) m, json_each(m.value) i
  WHERE m.type = 'array' AND i.type NOT IN ('null', 'array', 'object');
