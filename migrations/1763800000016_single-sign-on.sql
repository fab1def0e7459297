-- Up Migration
-- Single sign-on: a person an OpenID provider knows is linked to a user by the provider's stable subject
-- (the name at the provider may change), and a user who signs in only that way has no castsync password.
ALTER TABLE users ALTER COLUMN password_hash DROP NOT NULL;
CREATE TABLE user_identities (
  issuer text NOT NULL,
  subject text NOT NULL,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (issuer, subject),
  -- One person at each provider per user.
  CONSTRAINT user_identities_user_issuer_key UNIQUE (user_id, issuer)
);

-- Down Migration
DROP TABLE user_identities;
-- A hash nothing verifies: such users sign in again once an administrator sets a password.
UPDATE users SET password_hash = '!' WHERE password_hash IS NULL;
ALTER TABLE users ALTER COLUMN password_hash SET NOT NULL;
