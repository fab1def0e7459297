-- Up Migration
-- One index on a record's URL key instead of two. The unique key was (user_id, url_hash) and the fetcher's
-- "every record of this feed" (liveRecordsWithUrl) had an index of its own on url_hash. Both keys are
-- hashes, so each new record was written to a random page of each index. A unique index on
-- (url_hash, user_id) answers both: a user's record of a URL (both columns equal) and a feed's records
-- across users (the first column). A POST of new feeds writes one index fewer for each
-- (docs/performance.md, "The first POST of never-seen feeds"). No statement reads a user's records in
-- url_hash order; the key (user_id, id) serves "all of a user's records". The same goes for the
-- earlier URLs of records (subscription_urls). ON CONFLICT (user_id, url_hash) finds the new index:
-- PostgreSQL matches an index by its set of columns, not their order.
-- Rebuilding them holds writes to the two tables for a while: about a second for 450,000 records.
ALTER TABLE subscriptions
  DROP CONSTRAINT subscriptions_user_url_key,
  ADD CONSTRAINT subscriptions_user_url_key UNIQUE (url_hash, user_id);
DROP INDEX subscriptions_url_hash_idx;
ALTER TABLE subscription_urls
  DROP CONSTRAINT subscription_urls_pkey,
  ADD CONSTRAINT subscription_urls_pkey PRIMARY KEY (url_hash, user_id);
DROP INDEX subscription_urls_url_hash_idx;

-- Down Migration
CREATE INDEX subscription_urls_url_hash_idx ON subscription_urls (url_hash);
ALTER TABLE subscription_urls
  DROP CONSTRAINT subscription_urls_pkey,
  ADD CONSTRAINT subscription_urls_pkey PRIMARY KEY (user_id, url_hash);
CREATE INDEX subscriptions_url_hash_idx ON subscriptions (url_hash);
ALTER TABLE subscriptions
  DROP CONSTRAINT subscriptions_user_url_key,
  ADD CONSTRAINT subscriptions_user_url_key UNIQUE (user_id, url_hash);
