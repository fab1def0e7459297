-- Up Migration
-- The Open Podcast API's sync endpoint (/api/v1/sync, docs/opa-sync.md).

-- Each record's sync_id: the id the sync endpoint names it by, random so that it says nothing of other
-- users' records. Set by default, so the statements that create records need not know of it (a
-- volatile default: adding the column rewrites the table once, at the upgrade).
ALTER TABLE subscriptions ADD COLUMN sync_id uuid NOT NULL DEFAULT gen_random_uuid();
CREATE UNIQUE INDEX subscriptions_user_sync_id_key ON subscriptions (user_id, sync_id);

-- The latest change a sync action made to a record: the app's times (what last-write-wins compares and
-- what subscribed_at / unsubscribed_at show), and the app install (Client-ID) that made it. It describes
-- the record only while `stamp` is the record's `changed`: a later change through another door makes it
-- stale, and then the server's time of that change counts. Merged-away records take it with them.
CREATE TABLE sync_subscription_changes (
  user_id bigint NOT NULL,
  subscription_id bigint NOT NULL,
  subscribed_at timestamptz NOT NULL,
  unsubscribed_at timestamptz,
  occurred_at timestamptz NOT NULL,
  stamp timestamptz NOT NULL,
  client_id uuid,
  PRIMARY KEY (user_id, subscription_id),
  FOREIGN KEY (user_id, subscription_id) REFERENCES subscriptions (user_id, id) ON DELETE CASCADE
);

-- The app install (Client-ID) whose sync action made an episode's latest change, while `stamp` is that
-- change's stamp (the episode's newest in episode_latest); any later change through another door makes it stale.
CREATE TABLE sync_episode_changes (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  episode_hash uuid NOT NULL,
  stamp timestamptz NOT NULL,
  client_id uuid,
  PRIMARY KEY (user_id, episode_hash)
);

-- Each action a sync batch applied or ignored, by its action_id, so that a retried action is answered
-- the same and applied once. entity_id names what it acted on (a subscription's or an episode's sync_id).
CREATE TABLE sync_actions (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  action_id uuid NOT NULL,
  type text NOT NULL,
  action text NOT NULL,
  status text NOT NULL,
  entity_id uuid NOT NULL,
  received timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, action_id),
  CONSTRAINT sync_actions_status_check CHECK (status IN ('applied', 'ignored'))
);

-- Down Migration
DROP TABLE sync_actions;
DROP TABLE sync_episode_changes;
DROP TABLE sync_subscription_changes;
DROP INDEX subscriptions_user_sync_id_key;
ALTER TABLE subscriptions DROP COLUMN sync_id;
