-- Up Migration
-- One row per logical subscription; id is the creation order that paging follows.
CREATE TABLE subscriptions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  guid uuid NOT NULL,
  feed_url text NOT NULL,
  is_subscribed boolean NOT NULL DEFAULT true,
  subscription_changed timestamptz NOT NULL,
  guid_changed timestamptz,
  deleted timestamptz,
  changed timestamptz GENERATED ALWAYS AS (greatest(subscription_changed, guid_changed, deleted)) STORED,
  CONSTRAINT subscriptions_user_guid_key UNIQUE (user_id, guid)
);
CREATE INDEX subscriptions_user_id_idx ON subscriptions (user_id, id);
CREATE INDEX subscriptions_user_changed_idx ON subscriptions (user_id, changed);

-- Every guid a subscription has had (the guid chain), with the time it became the current one.
-- The primary key makes a guid name at most one record of a user.
CREATE TABLE subscription_guids (
  user_id bigint NOT NULL,
  guid uuid NOT NULL,
  subscription_id bigint NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
  valid_from timestamptz NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (user_id, guid)
);
CREATE INDEX subscription_guids_subscription_idx ON subscription_guids (subscription_id, valid_from, seq);

-- Every feed URL a subscription has had, keyed by the SHA-256 of its normalised form (a btree entry
-- must stay small whatever the URL). The primary key makes a URL name at most one record of a user.
CREATE TABLE subscription_urls (
  user_id bigint NOT NULL,
  url_hash bytea NOT NULL,
  subscription_id bigint NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
  feed_url text NOT NULL,
  PRIMARY KEY (user_id, url_hash)
);
CREATE INDEX subscription_urls_subscription_idx ON subscription_urls (subscription_id);

-- Down Migration
DROP TABLE subscription_urls;
DROP TABLE subscription_guids;
DROP TABLE subscriptions;
