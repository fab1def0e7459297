-- Up Migration
-- The file a person uploads to import (a castsync archive, a gpodder.net archive), kept as it came, in
-- pieces of at most 1 MiB, until its import ends: the request only stores it, and the import's job reads it
-- as it streams, twice (once to check all of it, once to store it), on whichever instance runs the job.
CREATE TABLE import_uploads (
  user_id bigint NOT NULL,
  import_id bigint NOT NULL,
  seq integer NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (user_id, import_id, seq),
  FOREIGN KEY (user_id, import_id) REFERENCES imports (user_id, id) ON DELETE CASCADE
);
-- Compressed already (zstd) or read once: not worth compressing again.
ALTER TABLE import_uploads ALTER COLUMN bytes SET STORAGE EXTERNAL;

-- Imports under way across the upgrade: a castsync archive's text was its file, and becomes its upload (in
-- one piece); a gpodder.net archive was kept as what the request had read of it, which no job reads now.
INSERT INTO import_uploads (user_id, import_id, seq, bytes)
SELECT user_id, id, 0, convert_to(secret, 'UTF8') FROM imports
 WHERE source = 'archive' AND state IN ('queued', 'running') AND secret IS NOT NULL;
UPDATE imports SET secret = '' WHERE source = 'archive' AND state IN ('queued', 'running') AND secret IS NOT NULL;
UPDATE imports
   SET state = 'failed', secret = NULL, progress = '', updated_at = now(),
       error = 'Stopped by an upgrade of castsync: send the file again'
 WHERE source = 'gpodder-archive' AND state IN ('queued', 'running');

-- Down Migration
DROP TABLE import_uploads;
