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

-- Down Migration
DROP TABLE import_uploads;
