-- Up Migration
-- The web page's imports take a gpodder.net archive too: the job keeps what was read from it (the file
-- itself is not kept) in `secret`, cleared when the import ends, as for the other sources.
ALTER TABLE imports DROP CONSTRAINT imports_source_check,
  ADD CONSTRAINT imports_source_check CHECK (source IN ('gpodder', 'nextcloud', 'archive', 'gpodder-archive'));

-- Down Migration
DELETE FROM imports WHERE source = 'gpodder-archive';
ALTER TABLE imports DROP CONSTRAINT imports_source_check,
  ADD CONSTRAINT imports_source_check CHECK (source IN ('gpodder', 'nextcloud', 'archive'));
