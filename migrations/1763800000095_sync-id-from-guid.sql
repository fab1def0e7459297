-- Up Migration
-- A new record's sync_id is the guid it was made with, and is stored only once the record's guid changes:
-- sync_id is NULL while the record has the guid it was made with, and the id is then its guid. A record
-- is made without a write to an index of its own for the id: the unique index on (user_id, sync_id) was
-- one of five that every new record was written to, and cost about a fifth of PostgreSQL's time in an
-- insert of 100 new feeds (docs/performance.md, "The first POST of never-seen feeds"). The statements
-- that change a guid store the old one first (KEEP_SYNC_ID in src/subscriptions/repo.ts), so an id never
-- changes. Existing records keep the ids they have (stored, in the partial index), so apps that know them
-- go on finding them. The effective id, coalesce(sync_id, guid), is unique per user: a guid names one
-- record of a user (now or earlier), and a stored id is a record's own earlier guid or an id made before
-- this migration (random, or time-ordered: see 1763800000093).
ALTER TABLE subscriptions ALTER COLUMN sync_id DROP DEFAULT, ALTER COLUMN sync_id DROP NOT NULL;
DROP INDEX subscriptions_user_sync_id_key;
CREATE UNIQUE INDEX subscriptions_user_sync_id_key ON subscriptions (user_id, sync_id) WHERE sync_id IS NOT NULL;

-- Down Migration
-- Every record gets the id it has now, stored.
UPDATE subscriptions SET sync_id = guid WHERE sync_id IS NULL;
DROP INDEX subscriptions_user_sync_id_key;
CREATE UNIQUE INDEX subscriptions_user_sync_id_key ON subscriptions (user_id, sync_id);
ALTER TABLE subscriptions ALTER COLUMN sync_id SET DEFAULT castsync_time_ordered_uuid(), ALTER COLUMN sync_id SET NOT NULL;
