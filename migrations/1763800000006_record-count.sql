-- Up Migration
-- The number of the user's records (subscriptions rows, deleted ones included: what GET's `total` counts
-- without `since`), kept on the row every write of the user locks anyway, so that a GET costs the same for
-- a user with 100,000 records as for one with 100. The statements that create or remove records update it
-- (src/subscriptions/repo.ts, record-repo.ts); test/integration/record-count.test.ts checks it against count(*).
ALTER TABLE users ADD COLUMN record_count bigint NOT NULL DEFAULT 0;
UPDATE users u SET record_count = (SELECT count(*) FROM subscriptions s WHERE s.user_id = u.id);

-- A since-sync reads the ids of the changed records from this index alone (an index-only scan), whatever
-- plan PostgreSQL picks for the prepared statement: with the id in the index, scanning it is cheaper than
-- walking the primary key and reading every record of the user to test `changed`.
DROP INDEX subscriptions_user_changed_idx;
CREATE INDEX subscriptions_user_changed_idx ON subscriptions (user_id, changed) INCLUDE (id);

-- Down Migration
DROP INDEX subscriptions_user_changed_idx;
CREATE INDEX subscriptions_user_changed_idx ON subscriptions (user_id, changed);
ALTER TABLE users DROP COLUMN record_count;
