-- Up Migration
-- A deletion request; the work itself runs from the job queue (src/deletions/worker.ts).
CREATE TABLE deletions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- No foreign key: a merge moves requests to the surviving record (src/subscriptions/repo.ts mergeInto).
  subscription_id bigint NOT NULL,
  status text NOT NULL DEFAULT 'PENDING',
  message text NOT NULL DEFAULT 'Deletion request was received and will be processed',
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  CONSTRAINT deletions_status_check CHECK (status IN ('PENDING', 'SUCCESS', 'FAILURE'))
);
CREATE INDEX deletions_user_id_idx ON deletions (user_id, id);
CREATE INDEX deletions_subscription_idx ON deletions (user_id, subscription_id);

-- Down Migration
DROP TABLE deletions;
