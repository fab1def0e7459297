-- Up Migration
-- Idle accounts' archives kept in the database (docs/idle-accounts.md), where every castsync instance
-- reaches them: each archived account holds its archive (the text `castsync export` writes, gzip-compressed),
-- written in the same statement that removes the user. A file is an optional copy (users archive --dir);
-- an account archived by an earlier release has its file only.
ALTER TABLE archived_accounts ADD COLUMN archive bytea;
ALTER TABLE archived_accounts ALTER COLUMN file DROP NOT NULL;
ALTER TABLE archived_accounts
  ADD CONSTRAINT archived_accounts_kept_check CHECK (archive IS NOT NULL OR file IS NOT NULL);

-- Down Migration
-- An archive kept only in the database would be lost: those accounts must be restored first.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM archived_accounts WHERE file IS NULL) THEN
    RAISE EXCEPTION 'archived accounts whose archive is only in the database: restore them (castsync users restore NAME) first';
  END IF;
END $$;
ALTER TABLE archived_accounts DROP CONSTRAINT archived_accounts_kept_check;
ALTER TABLE archived_accounts ALTER COLUMN file SET NOT NULL;
ALTER TABLE archived_accounts DROP COLUMN archive;
