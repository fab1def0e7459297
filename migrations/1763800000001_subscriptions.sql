-- Up Migration
-- One row per logical subscription. id is the creation order that paging follows. guid is the current
-- guid; url_hash is the SHA-256 of the normalised form of the record's first feed URL (src/subscriptions/
-- urls.ts). Both are unique per user, and a POST of a new feed writes this one row and nothing else.
-- No foreign key to users: it would cost a lookup for every inserted row, and a user's subscriptions are
-- removed with the user, in one transaction (src/auth/repo.ts deleteUser).
CREATE TABLE subscriptions (
  user_id bigint NOT NULL,
  id bigint GENERATED ALWAYS AS IDENTITY,
  guid uuid NOT NULL,
  feed_url text NOT NULL,
  url_hash bytea NOT NULL,
  is_subscribed boolean NOT NULL DEFAULT true,
  subscription_changed timestamptz NOT NULL,
  guid_changed timestamptz,
  deleted timestamptz,
  changed timestamptz GENERATED ALWAYS AS (greatest(subscription_changed, guid_changed, deleted)) STORED,
  PRIMARY KEY (user_id, id),
  CONSTRAINT subscriptions_user_guid_key UNIQUE (user_id, guid),
  CONSTRAINT subscriptions_user_url_key UNIQUE (user_id, url_hash)
);
CREATE INDEX subscriptions_user_changed_idx ON subscriptions (user_id, changed);

-- The earlier guids of a record (its guid chain), each with the time it stopped being the current one.
-- A guid names at most one record of a user, current or earlier: the service checks both tables under
-- the user's row lock before it gives a record a guid.
CREATE TABLE subscription_guids (
  user_id bigint NOT NULL,
  guid uuid NOT NULL,
  subscription_id bigint NOT NULL,
  replaced_at timestamptz NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (user_id, guid),
  FOREIGN KEY (user_id, subscription_id) REFERENCES subscriptions (user_id, id) ON DELETE CASCADE
);
CREATE INDEX subscription_guids_subscription_idx ON subscription_guids (user_id, subscription_id, replaced_at);

-- The record's other feed URLs (any URL it was sent under besides the first), keyed like url_hash.
CREATE TABLE subscription_urls (
  user_id bigint NOT NULL,
  url_hash bytea NOT NULL,
  subscription_id bigint NOT NULL,
  feed_url text NOT NULL,
  PRIMARY KEY (user_id, url_hash),
  FOREIGN KEY (user_id, subscription_id) REFERENCES subscriptions (user_id, id) ON DELETE CASCADE
);
CREATE INDEX subscription_urls_subscription_idx ON subscription_urls (user_id, subscription_id);

-- Down Migration
DROP TABLE subscription_urls;
DROP TABLE subscription_guids;
DROP TABLE subscriptions;
