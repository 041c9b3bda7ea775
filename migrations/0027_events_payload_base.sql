-- Contract §23 (compact while hot): an event may be packed against another event of the same
-- write (src/formats/packed-json.ts format 2); `base_id` names it (the same account, a larger
-- id). NULL for a payload stored whole, as every row written before is.
ALTER TABLE `events` ADD `base_id` text;
