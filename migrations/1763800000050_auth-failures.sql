-- Up Migration
-- Failed logins and failed authentications, counted per client address and username in a window that
-- starts at the first failure, so that every instance counts the same (src/http/limits.ts). The key is a
-- SHA-256 digest of the address and the username: neither is stored.
CREATE TABLE auth_failures (
  -- Which limit: 'login' (LOGIN_RATE_LIMIT) or 'auth' (AUTH_FAILURE_RATE_LIMIT).
  scope text NOT NULL,
  key_hash bytea NOT NULL,
  refused integer NOT NULL,
  ends_at timestamptz NOT NULL,
  CONSTRAINT auth_failures_pkey PRIMARY KEY (scope, key_hash)
);
-- The hourly clean-up of ended windows.
CREATE INDEX auth_failures_ends_at_idx ON auth_failures (ends_at);

-- Down Migration
DROP TABLE auth_failures;
