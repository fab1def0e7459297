-- Up Migration
-- What the feed fetcher changed in a person's subscription because of what a feed said (a followed move,
-- a learnt podcast guid), with where it read it: shown in the person's activity, and a move can be undone
-- there. An undone move is kept (undone_at), so that the fetcher never follows that move of that record
-- again (docs/decisions/feed-rule.md).
CREATE TABLE feed_changes (
  user_id bigint NOT NULL,
  id bigint GENERATED ALWAYS AS IDENTITY,
  subscription_id bigint NOT NULL,
  at timestamptz NOT NULL,
  kind text NOT NULL,
  source text NOT NULL,
  old_value text NOT NULL,
  new_value text NOT NULL,
  undone_at timestamptz,
  PRIMARY KEY (user_id, id),
  FOREIGN KEY (user_id, subscription_id) REFERENCES subscriptions (user_id, id) ON DELETE CASCADE,
  CONSTRAINT feed_changes_kind_check CHECK (kind IN ('moved', 'guid'))
);
CREATE INDEX feed_changes_subscription_idx ON feed_changes (user_id, subscription_id);

-- Down Migration
DROP TABLE feed_changes;
