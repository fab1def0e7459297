-- Up Migration
-- The aggregated view keeps the latest action per episode and action type, not per episode: a `delete` after
-- a `play` must not hide the play's position (Kasts' first sync asks for the aggregated view). Rebuilt from
-- the actions, which are all kept.
DELETE FROM episode_latest;
ALTER TABLE episode_latest ADD COLUMN action text NOT NULL;
ALTER TABLE episode_latest DROP CONSTRAINT episode_latest_pkey;
ALTER TABLE episode_latest ADD PRIMARY KEY (user_id, episode_hash, action);
INSERT INTO episode_latest (user_id, episode_hash, action, action_id, at, changed)
SELECT DISTINCT ON (user_id, episode_hash, action) user_id, episode_hash, action, id, at, changed
  FROM episode_actions
 ORDER BY user_id, episode_hash, action, at DESC, id DESC;

-- Down Migration
DELETE FROM episode_latest;
ALTER TABLE episode_latest DROP CONSTRAINT episode_latest_pkey;
ALTER TABLE episode_latest DROP COLUMN action;
ALTER TABLE episode_latest ADD PRIMARY KEY (user_id, episode_hash);
INSERT INTO episode_latest (user_id, episode_hash, action_id, at, changed)
SELECT DISTINCT ON (user_id, episode_hash) user_id, episode_hash, id, at, changed
  FROM episode_actions
 ORDER BY user_id, episode_hash, at DESC, id DESC;
