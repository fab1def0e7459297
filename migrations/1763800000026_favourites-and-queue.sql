-- Up Migration
-- Favourites: per user and episode (the episode as /v1/episodes names it: the key of its enclosure URL),
-- set or cleared, with the app's time of that (the later time wins) and the change stamp of the write
-- (what `since` compares). A cleared favourite stays as a row, so an older "set" cannot bring it back.
CREATE TABLE episode_favourites (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  episode_hash uuid NOT NULL,
  podcast_url text NOT NULL,
  podcast_hash uuid NOT NULL,
  enclosure_url text NOT NULL,
  episode_guid text,
  favourite boolean NOT NULL,
  at timestamptz NOT NULL,
  changed timestamptz NOT NULL,
  PRIMARY KEY (user_id, episode_hash)
);
CREATE INDEX episode_favourites_changed_idx ON episode_favourites (user_id, changed);
CREATE INDEX episode_favourites_set_idx ON episode_favourites (user_id, at DESC) WHERE favourite;

-- Up next: one ordered list per user (positions 0..n-1), each episode once; `added` is the change stamp
-- of the write that added it (a play to the end stamped later takes it off the list). The version counts
-- the list's changes: it is the list's ETag.
CREATE TABLE queue_items (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  position integer NOT NULL,
  episode_hash uuid NOT NULL,
  podcast_url text NOT NULL,
  podcast_hash uuid NOT NULL,
  enclosure_url text NOT NULL,
  episode_guid text,
  added timestamptz NOT NULL,
  UNIQUE (user_id, episode_hash)
);
CREATE INDEX queue_items_order_idx ON queue_items (user_id, position);
CREATE TABLE queue_versions (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  version bigint NOT NULL
);

-- Down Migration
DROP TABLE queue_versions;
DROP TABLE queue_items;
DROP TABLE episode_favourites;
