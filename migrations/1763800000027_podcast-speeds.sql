-- Up Migration
-- The web player's speed a person chose for a podcast (by the key of its feed URL), kept on the server so
-- that every browser plays that podcast at it.
CREATE TABLE podcast_speeds (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  podcast_hash uuid NOT NULL,
  speed real NOT NULL CHECK (speed >= 0.5 AND speed <= 3),
  PRIMARY KEY (user_id, podcast_hash)
);

-- Down Migration
DROP TABLE podcast_speeds;
