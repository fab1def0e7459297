-- Up Migration
CREATE TABLE users (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  username text NOT NULL,
  password_hash text NOT NULL,
  -- The user's latest change stamp. Every write of a user locks this row and stamps its changes later
  -- than this value, so stamps follow commit order (docs/sync.md).
  last_change timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT users_username_key UNIQUE (username),
  CONSTRAINT users_username_check CHECK (username ~ '^[A-Za-z0-9._-]{1,64}$')
);

-- Access, refresh and personal access tokens, stored as SHA-256 hashes of the random token.
CREATE TABLE tokens (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind text NOT NULL,
  token_hash bytea NOT NULL,
  -- A login session: its access and refresh tokens share a family, revoked together on logout or reuse.
  family uuid,
  label text,
  expires_at timestamptz,
  used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT tokens_token_hash_key UNIQUE (token_hash),
  CONSTRAINT tokens_kind_check CHECK (kind IN ('access', 'refresh', 'personal'))
);
CREATE INDEX tokens_user_id_idx ON tokens (user_id, kind);
CREATE INDEX tokens_family_idx ON tokens (family) WHERE family IS NOT NULL;
CREATE INDEX tokens_expires_at_idx ON tokens (expires_at) WHERE expires_at IS NOT NULL;

-- Down Migration
DROP TABLE tokens;
DROP TABLE users;
