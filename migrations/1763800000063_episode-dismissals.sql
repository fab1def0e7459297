-- Up Migration
-- New episodes' "Dismiss" (docs/web.md): per user, the episodes taken off their New episodes page. No
-- protocol carries a dismissal: it is the web page's alone. The episode is named as everywhere else: the
-- key of its enclosure URL, and its guid within its podcast (a moved enclosure stays dismissed).
CREATE TABLE episode_dismissals (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  episode_hash uuid NOT NULL,
  podcast_hash uuid NOT NULL,
  episode_guid text,
  dismissed_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, episode_hash)
);
CREATE INDEX episode_dismissals_guid_idx ON episode_dismissals (user_id, podcast_hash, episode_guid)
  WHERE episode_guid IS NOT NULL;

-- Down Migration
DROP TABLE episode_dismissals;
