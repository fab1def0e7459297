-- Up Migration
-- Idle accounts (docs/idle-accounts.md).

-- When each user was last seen: the last request one of their credentials signed, noted at most once an
-- hour. Seeded with what the tables already tell: a device's last sync, an app's last report, a login's
-- last refresh.
CREATE TABLE user_activity (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  seen_at timestamptz NOT NULL
);
INSERT INTO user_activity (user_id, seen_at)
SELECT u.id, seen.at
  FROM users u
 CROSS JOIN LATERAL (SELECT greatest((SELECT max(last_seen) FROM devices d WHERE d.user_id = u.id),
                                     (SELECT max(at) FROM sync_reports r WHERE r.user_id = u.id),
                                     (SELECT max(used_at) FROM tokens t WHERE t.user_id = u.id)) AS at) seen
 WHERE seen.at IS NOT NULL;

-- An account archived to a file and removed: its data is in the file; what stays here answers its sign-in,
-- keeps its name from being taken, and lets the restore bring it back as it was (its password, role and
-- links to identity providers). Keyed by the name: the user, and with it the user id, is gone.
CREATE TABLE archived_accounts (
  username text PRIMARY KEY,
  password_hash text,
  is_admin boolean NOT NULL,
  created_at timestamptz NOT NULL,
  last_active timestamptz NOT NULL,
  archived_at timestamptz NOT NULL DEFAULT now(),
  -- The archive file, as the archiving wrote it.
  file text NOT NULL,
  -- [{"issuer": ..., "subject": ...}]: the user's links to OpenID providers.
  identities jsonb NOT NULL DEFAULT '[]',
  CONSTRAINT archived_accounts_username_check CHECK (username ~ '^[A-Za-z0-9._-]{1,64}$')
);

-- The app passwords of archived accounts, as digests like every token: an app that signs in with one is
-- told that the account is archived, and the restore gives them back, so the apps sync again unchanged.
CREATE TABLE archived_app_passwords (
  token_hash bytea PRIMARY KEY,
  username text NOT NULL REFERENCES archived_accounts (username) ON DELETE CASCADE,
  label text,
  created_at timestamptz NOT NULL
);
CREATE INDEX archived_app_passwords_username_idx ON archived_app_passwords (username);

-- Down Migration
DROP TABLE archived_app_passwords;
DROP TABLE archived_accounts;
DROP TABLE user_activity;
