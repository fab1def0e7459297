-- Up Migration
-- The message of an accepted request is written by the code that accepts it (src/deletions/service.ts),
-- its one source; a default here would be a second copy that could drift.
ALTER TABLE deletions ALTER COLUMN message DROP DEFAULT;

-- Down Migration
ALTER TABLE deletions ALTER COLUMN message SET DEFAULT 'Deletion request was received and will be processed';
