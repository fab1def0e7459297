-- Up Migration
-- A new-episode event keeps the date its item had when it was noted (docs/notifications.md). The event is
-- what stops an item a feed lists again from being announced again; an item dated more than 30 days ago is
-- no longer announced (src/notifications/retention.ts), so an event whose item is that old may go.
-- The events noted before this migration take the date their item has in its feed now; one whose item the
-- feed no longer lists, or that has no date, has none, and is kept.
ALTER TABLE notification_events ADD COLUMN published_at timestamptz;
UPDATE notification_events e SET published_at = i.published_at
  FROM feed_items i WHERE i.feed_hash = e.feed_hash AND i.item_key = e.item_key;

-- Down Migration
ALTER TABLE notification_events DROP COLUMN published_at;
