-- Up Migration
-- A gpodder session opened by HTTP Basic with an app password names it, and ends with it: AntennaPod sends
-- Basic only to log in and then the sessionid cookie, so revoking the app password must end that session
-- too, or the revoked app would go on syncing for the session's year. Sessions opened before this
-- migration name no app password (which one opened them was not kept).
ALTER TABLE tokens ADD COLUMN app_password_id bigint;
ALTER TABLE tokens ADD CONSTRAINT tokens_app_password_id_fkey
  FOREIGN KEY (app_password_id) REFERENCES tokens (id) ON DELETE CASCADE;
CREATE INDEX tokens_app_password_id_idx ON tokens (app_password_id) WHERE app_password_id IS NOT NULL;

-- Down Migration
DROP INDEX tokens_app_password_id_idx;
ALTER TABLE tokens DROP COLUMN app_password_id;
