-- Up Migration
-- What each app last sent, and what castsync skipped from it and why, for the web page's Devices (so a
-- person can see why an app looks out of date without reading the server's logs). Diagnostics, not sync
-- data: the newest 20 of each device (or, for apps that name no device, of each client) are kept.
CREATE TABLE sync_reports (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  id bigint GENERATED ALWAYS AS IDENTITY,
  -- The gpodder device id; null for apps in Nextcloud mode, which name none (then `client` tells them apart).
  device_id text,
  -- The app's User-Agent, cut to 200 characters.
  client text NOT NULL DEFAULT '',
  at timestamptz NOT NULL DEFAULT now(),
  kind text NOT NULL CONSTRAINT sync_reports_kind_check CHECK (kind IN ('subscriptions', 'episode actions')),
  -- Counts of what was sent: {"add": n, "remove": n} or {"actions": n}.
  sent jsonb NOT NULL,
  -- What was skipped or kept and why: [{"item": "...", "reason": "..."}], at most 20.
  skipped jsonb NOT NULL DEFAULT '[]',
  PRIMARY KEY (user_id, id)
);
CREATE INDEX sync_reports_source_idx ON sync_reports (user_id, device_id, client, id);

-- Down Migration
DROP TABLE sync_reports;
