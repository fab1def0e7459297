-- Up Migration
-- The records of a feed, across users: after each fetch of a feed that declares a guid of its own or moved,
-- the fetcher looks up every record whose URL is the feed's (liveRecordsWithUrl in
-- src/subscriptions/record-repo.ts). Without these PostgreSQL read both tables whole for it (98 ms at
-- 450,000 records), so that a cycle over the feeds cost feeds × records (docs/performance.md, "At
-- gpodder.net's size"). Building them holds writes to the two tables for a while: 0.26 s for 450,000 records.
-- Most lists share a few feeds, so the keys repeat and the index stays small (8 bytes a record there).
CREATE INDEX subscriptions_url_hash_idx ON subscriptions (url_hash);
CREATE INDEX subscription_urls_url_hash_idx ON subscription_urls (url_hash);

-- Down Migration
DROP INDEX subscription_urls_url_hash_idx;
DROP INDEX subscriptions_url_hash_idx;
