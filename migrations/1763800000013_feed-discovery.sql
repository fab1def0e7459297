-- Up Migration
-- The feed fetcher finds the feeds people subscribe to by itself, after the requests, instead of every
-- subscription write noting them in the request: per user, the change stamp up to which the user's
-- records were looked at. A user's stamps follow commit order, so every record changed after it is still
-- to be seen (docs/decisions/feed-fetcher.md). The feeds of today's records were noted when they were
-- written: every user starts at their last change.
-- The look goes in bounded steps, record by record in (changed, id) order: noted_id is the last record it
-- looked at within noted_until (the largest bigint once it has looked at all of them).
CREATE TABLE feed_discovery (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  noted_until timestamptz NOT NULL,
  noted_id bigint NOT NULL
);
INSERT INTO feed_discovery (user_id, noted_until, noted_id) SELECT id, last_change, 9223372036854775807 FROM users;

-- Down Migration
DROP TABLE feed_discovery;
