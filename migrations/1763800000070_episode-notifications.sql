-- Up Migration
-- New-episode notifications (docs/notifications.md). Each person's choices: all notifications on or off,
-- and a URL (an ntfy topic or a webhook) that receives them besides their browsers.
CREATE TABLE notification_settings (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  enabled boolean NOT NULL DEFAULT true,
  hook_url text,
  hook_kind text NOT NULL DEFAULT 'webhook' CONSTRAINT notification_settings_hook_kind_check
    CHECK (hook_kind IN ('webhook', 'ntfy'))
);

-- The feeds a person turned notifications off for, by the feed's key (feeds.url_hash).
CREATE TABLE notification_mutes (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  feed_hash uuid NOT NULL,
  PRIMARY KEY (user_id, feed_hash)
);

-- A browser's Web Push subscription (RFC 8030): where its push service takes messages, and the keys the
-- message is encrypted with (RFC 8291). One person, several browsers.
CREATE TABLE push_subscriptions (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  id bigint GENERATED ALWAYS AS IDENTITY,
  endpoint text NOT NULL,
  p256dh text NOT NULL,
  auth text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, id),
  CONSTRAINT push_subscriptions_user_endpoint_key UNIQUE (user_id, endpoint)
);

-- The server's VAPID key pair (RFC 8292), made once: a browser's subscription is bound to its public key,
-- so it lives with the data and moves with a backup.
CREATE TABLE vapid_keys (
  id boolean PRIMARY KEY DEFAULT true CONSTRAINT vapid_keys_id_check CHECK (id),
  public_key text NOT NULL,
  private_key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- One row per person and new item a fetch found, written in the fetch's transaction; `batch` names the
-- fetch, so that one message tells of all the items it found for the person.
CREATE TABLE notification_events (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  id bigint GENERATED ALWAYS AS IDENTITY,
  batch uuid NOT NULL,
  feed_hash uuid NOT NULL,
  item_key text NOT NULL,
  item_id bigint NOT NULL,
  title text,
  enclosure_url text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, id),
  CONSTRAINT notification_events_user_item_key UNIQUE (user_id, feed_hash, item_key)
);
CREATE INDEX notification_events_batch_idx ON notification_events (user_id, batch);

-- One message to deliver: a batch to one of the person's channels ('hook', or 'push:' and the push
-- subscription's id). A delivery is sent in a transaction that holds its row locked, and marked sent in
-- that same transaction: a worker that dies mid-delivery releases the lock with its connection, and the
-- delivery is tried again with the same idempotency key (docs/notifications.md).
CREATE TABLE notification_deliveries (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  batch uuid NOT NULL,
  channel text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CONSTRAINT notification_deliveries_status_check
    CHECK (status IN ('pending', 'sent', 'failed', 'dropped', 'gone')),
  attempts integer NOT NULL DEFAULT 0,
  next_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, batch, channel)
);
CREATE INDEX notification_deliveries_pending_idx ON notification_deliveries (next_at) WHERE status = 'pending';
CREATE INDEX notification_deliveries_sent_idx ON notification_deliveries (user_id, sent_at) WHERE status = 'sent';

-- Down Migration
DROP TABLE notification_deliveries;
DROP TABLE notification_events;
DROP TABLE vapid_keys;
DROP TABLE push_subscriptions;
DROP TABLE notification_mutes;
DROP TABLE notification_settings;
