-- Contract §23: `object_id` was written with every event and read by no query (readers take the
-- object from the payload); 36 bytes and more per event. SQLite rewrites the rows in place
-- (ALTER TABLE DROP COLUMN, https://www.sqlite.org/lang_altertable.html#altertabdropcol).
ALTER TABLE `events` DROP COLUMN `object_id`;
