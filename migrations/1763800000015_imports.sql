-- Up Migration
-- Imports started on the web page (from another sync server or an archive), run by a job: what the page
-- shows while one runs and after it ended. The CLI's imports run in the CLI and are not kept here.
CREATE TABLE imports (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  id bigint GENERATED ALWAYS AS IDENTITY,
  source text NOT NULL CONSTRAINT imports_source_check CHECK (source IN ('gpodder', 'nextcloud', 'archive')),
  -- The other server and the user's name there (null for an archive).
  server_url text,
  remote_user text,
  dry_run boolean NOT NULL,
  -- What only the job needs: the password for the other server, or the archive's text. Cleared as soon as
  -- the import ends, whatever the outcome.
  secret text,
  state text NOT NULL DEFAULT 'queued' CONSTRAINT imports_state_check CHECK (state IN ('queued', 'running', 'done', 'failed')),
  -- The step under way, for the page ("storing episode actions 5000 of 20000").
  progress text NOT NULL DEFAULT '',
  -- How many times a job began it: more than one means it was resumed after a restart.
  runs integer NOT NULL DEFAULT 0,
  -- The summary of a finished import (src/transfer/import.ts, Summary), or why it failed.
  summary jsonb,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, id)
);
CREATE UNIQUE INDEX imports_id_key ON imports (id);

-- Down Migration
DROP TABLE imports;
