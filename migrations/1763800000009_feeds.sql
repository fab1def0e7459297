-- Up Migration
-- What the feed fetcher knows of a feed, once for all users: keyed like a subscription URL (the urlHash of
-- the normalised URL, src/subscriptions/urls.ts), so a record finds its feed by its current URL.
-- The table is also the fetch schedule: next_fetch_at is when the feed is due (a new feed: at once).
CREATE TABLE feeds (
  url_hash uuid PRIMARY KEY,
  feed_url text NOT NULL,
  title text,
  description text,
  link text,
  artwork_url text,
  author text,
  language text,
  -- The feed's declared podcast:guid.
  podcast_guid uuid,
  -- Where the feed moved: the end of its permanent redirects, or its itunes:new-feed-url.
  moved_to text,
  etag text,
  last_modified text,
  -- The last fetch that gave a feed (200) or confirmed it (304).
  fetched_at timestamptz,
  -- Failed fetches in a row, and what went wrong the last time.
  failures integer NOT NULL DEFAULT 0,
  last_error text,
  next_fetch_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX feeds_next_fetch_idx ON feeds (next_fetch_at);

-- The URLs a record had before a change of its URL (a PATCH, or a move the fetcher learnt), with the
-- time of the change: state-syncing clients (gpodder, Nextcloud) are told to remove the old URL.
CREATE TABLE subscription_moves (
  user_id bigint NOT NULL,
  subscription_id bigint NOT NULL,
  moved_at timestamptz NOT NULL,
  old_url text NOT NULL,
  PRIMARY KEY (user_id, subscription_id, moved_at),
  FOREIGN KEY (user_id, subscription_id) REFERENCES subscriptions (user_id, id) ON DELETE CASCADE
);
CREATE INDEX subscription_moves_user_moved_idx ON subscription_moves (user_id, moved_at);

-- Down Migration
DROP TABLE subscription_moves;
DROP TABLE feeds;
