-- Up Migration
-- Devices, as the gpodder.net API names them: every device of a user shares the user's one list.
CREATE TABLE devices (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  device_id text NOT NULL,
  caption text NOT NULL,
  type text NOT NULL DEFAULT 'other',
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, device_id),
  CONSTRAINT devices_device_id_check CHECK (device_id ~ '^[A-Za-z0-9._-]{1,64}$'),
  CONSTRAINT devices_type_check CHECK (type IN ('desktop', 'laptop', 'mobile', 'server', 'other'))
);

-- Browser-style sessions of the gpodder API (the sessionid cookie), stored as digests like every token.
ALTER TABLE tokens DROP CONSTRAINT tokens_kind_check;
ALTER TABLE tokens ADD CONSTRAINT tokens_kind_check CHECK (kind IN ('access', 'refresh', 'personal', 'session'));

-- Nextcloud login flow v2: an app asks for a flow, the user approves it in a browser, the app polls and
-- receives a new app password (a personal access token) once. Flows expire after 20 minutes.
CREATE TABLE login_flows (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- What the app polls with, and what the approval page is named by: digests of random values.
  poll_token_hash bytea NOT NULL,
  code_hash bytea NOT NULL,
  app_name text NOT NULL,
  -- Set on approval; the app password is made when the app polls, and the flow is then used up.
  user_id bigint REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  approved_at timestamptz,
  used_at timestamptz,
  CONSTRAINT login_flows_poll_token_hash_key UNIQUE (poll_token_hash),
  CONSTRAINT login_flows_code_hash_key UNIQUE (code_hash)
);

-- Down Migration
DROP TABLE login_flows;
DELETE FROM tokens WHERE kind = 'session';
ALTER TABLE tokens DROP CONSTRAINT tokens_kind_check;
ALTER TABLE tokens ADD CONSTRAINT tokens_kind_check CHECK (kind IN ('access', 'refresh', 'personal'));
DROP TABLE devices;
