-- Up Migration
-- An item's show notes: the markup its feed gives (content:encoded, else description, else itunes:summary),
-- at most 65,536 characters, unsanitised (the web page sanitises them when it shows them).
ALTER TABLE feed_items ADD COLUMN notes text;

-- Down Migration
ALTER TABLE feed_items DROP COLUMN notes;
