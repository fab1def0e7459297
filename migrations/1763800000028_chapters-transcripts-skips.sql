-- Up Migration
-- What an item declares of its chapters and transcript (podcast:chapters, Podlove Simple Chapters inline,
-- podcast:transcript), and the documents fetched from those addresses, kept with the item (and gone with it).
ALTER TABLE feed_items
  ADD COLUMN chapters_url text,
  -- Podlove Simple Chapters given inline in the feed: [{"start": seconds, "title": ..., "url": ...}].
  ADD COLUMN chapters jsonb,
  ADD COLUMN transcript_url text,
  -- vtt, srt, json, html or text: how castsync reads the transcript at transcript_url.
  ADD COLUMN transcript_format text;

-- A chapters or transcript document fetched for an item: its content as castsync serves it, or why it could
-- not be had; fetched again when the item names another address or the copy is old (docs/web.md).
CREATE TABLE item_documents (
  item_id bigint NOT NULL REFERENCES feed_items (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('chapters', 'transcript')),
  source_url text NOT NULL,
  fetched_at timestamptz NOT NULL,
  content jsonb,
  error text,
  CHECK ((content IS NULL) <> (error IS NULL)),
  PRIMARY KEY (item_id, kind)
);

-- The web player's skip lengths a person chose (seconds back and forward).
CREATE TABLE player_settings (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  skip_back smallint NOT NULL CHECK (skip_back BETWEEN 1 AND 300),
  skip_forward smallint NOT NULL CHECK (skip_forward BETWEEN 1 AND 300)
);

-- Down Migration
DROP TABLE player_settings;
DROP TABLE item_documents;
ALTER TABLE feed_items DROP COLUMN chapters_url, DROP COLUMN chapters, DROP COLUMN transcript_url,
  DROP COLUMN transcript_format;
