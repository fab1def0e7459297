-- Up Migration
-- The person's own speed on the web player: what a podcast plays at unless they chose one for it
-- (podcast_speeds).
ALTER TABLE player_settings ADD COLUMN speed real NOT NULL DEFAULT 1 CHECK (speed >= 0.5 AND speed <= 3);

-- Down Migration
ALTER TABLE player_settings DROP COLUMN speed;
