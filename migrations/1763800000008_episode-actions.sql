-- Up Migration
-- Episode actions (gpodder.net's name): what a user did with an episode on a device (downloaded, played to a
-- position, deleted, marked new). Every action is kept; episode_latest names each episode's latest one.
CREATE TABLE episode_actions (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  id bigint GENERATED ALWAYS AS IDENTITY,
  -- The podcast's feed URL as stored (podcast schemes rewritten), and the key of its normalised form,
  -- which also matches a subscription's earlier URLs (src/subscriptions/urls.ts).
  podcast_url text NOT NULL,
  podcast_hash uuid NOT NULL,
  -- The subscription record the podcast was when the action arrived, if the user had one. No foreign key:
  -- a merge moves actions to the surviving record, a deletion removes them.
  subscription_id bigint,
  episode_url text NOT NULL,
  -- urlHash of the episode URL as sent: one key per episode, whatever its length.
  episode_hash uuid NOT NULL,
  episode_guid text,
  action text NOT NULL,
  -- The client's time of the action, UTC.
  at timestamptz NOT NULL,
  started integer,
  position integer,
  total integer,
  device_id text,
  -- The user's change stamp of the write that stored it: what `since` compares (docs/decisions/sync-stamps.md).
  changed timestamptz NOT NULL,
  PRIMARY KEY (user_id, id),
  CONSTRAINT episode_actions_action_check CHECK (action IN ('download', 'play', 'delete', 'new'))
);
-- Clients retry whole batches after a timeout: an action already stored is not stored again.
CREATE UNIQUE INDEX episode_actions_same_key ON episode_actions
  (user_id, podcast_hash, episode_hash, action, at, coalesce(device_id, ''), coalesce(position, -1));
CREATE INDEX episode_actions_changed_idx ON episode_actions (user_id, changed, id);
CREATE INDEX episode_actions_subscription_idx ON episode_actions (user_id, subscription_id) WHERE subscription_id IS NOT NULL;

-- The latest action of each episode (by the action's own time; ties: the later stored), kept by the write
-- that stores actions, so that the aggregated view costs what its episodes cost, not all their history.
CREATE TABLE episode_latest (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  episode_hash uuid NOT NULL,
  action_id bigint NOT NULL,
  at timestamptz NOT NULL,
  changed timestamptz NOT NULL,
  PRIMARY KEY (user_id, episode_hash)
);
CREATE INDEX episode_latest_changed_idx ON episode_latest (user_id, changed);

-- Down Migration
DROP TABLE episode_latest;
DROP TABLE episode_actions;
