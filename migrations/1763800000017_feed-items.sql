-- Up Migration
-- The episodes of each feed, as its last fetch listed them (the newest 1,000 at most), once for all users.
-- An item keeps its id while the feed lists it, so that the web page's links to it hold across fetches.
CREATE TABLE feed_items (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  feed_hash uuid NOT NULL REFERENCES feeds (url_hash) ON DELETE CASCADE,
  -- The item's guid, else its enclosure URL: what the item is known by within its feed.
  item_key text NOT NULL,
  guid text,
  title text,
  enclosure_url text,
  -- urlHash of the enclosure URL as the feed gives it: an app's episode action carries the same URL.
  enclosure_hash uuid,
  enclosure_type text,
  enclosure_length bigint,
  published_at timestamptz,
  -- Seconds.
  duration integer,
  link text,
  artwork_url text,
  season integer,
  episode integer,
  -- The item's place in the feed's document (0: first), for items without a date.
  ord integer NOT NULL,
  CONSTRAINT feed_items_feed_key UNIQUE (feed_hash, item_key)
);
CREATE INDEX feed_items_feed_published_idx ON feed_items (feed_hash, published_at DESC NULLS LAST, ord);
CREATE INDEX feed_items_enclosure_idx ON feed_items (enclosure_hash);
-- An app's action names its episode by guid as well as by URL: a moved enclosure is still found by guid.
CREATE INDEX episode_actions_guid_idx ON episode_actions (user_id, episode_guid) WHERE episode_guid IS NOT NULL;

-- Down Migration
DROP INDEX episode_actions_guid_idx;
DROP TABLE feed_items;
