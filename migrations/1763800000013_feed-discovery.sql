-- Up Migration
-- The feed fetcher finds the feeds people subscribe to by itself, after the requests, instead of every
-- subscription write noting them in the request: per user, the change stamp up to which the user's
-- records were looked at. A user's stamps follow commit order, so every record changed after it is still
-- to be seen (docs/decisions/feed-fetcher.md). The feeds of today's records were noted when they were
-- written: every user starts at their last change.
CREATE TABLE feed_discovery (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  noted_until timestamptz NOT NULL
);
INSERT INTO feed_discovery (user_id, noted_until) SELECT id, last_change FROM users;

-- Down Migration
DROP TABLE feed_discovery;
