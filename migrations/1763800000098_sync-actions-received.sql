-- Up Migration
-- The sync draft's kept action ids are forgotten 30 days after they came (src/sync/retention.ts): the nightly
-- clean-up finds them by when they came.
CREATE INDEX sync_actions_received_idx ON sync_actions (received);

-- Down Migration
DROP INDEX sync_actions_received_idx;
