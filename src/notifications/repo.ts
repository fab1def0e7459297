import { arrayLiteral } from '../db/array-literal';
import type { Queryable } from '../db/pool';
import { KEYS_OF_PODCAST } from '../episodes/service';

// The notifications room's tables (migrations/1763800000070_episode-notifications.sql): each person's
// settings and muted feeds, the new-episode events a fetch noted, and their deliveries. It reads the feeds'
// items and titles (the feeds room, below) in statements of its own.

export type SettingsRow = { enabled: boolean; hook_url: string | null; hook_kind: 'webhook' | 'ntfy' };

export async function settings(db: Queryable, userId: number): Promise<SettingsRow> {
  const r = await db.query<SettingsRow>(
    'SELECT enabled, hook_url, hook_kind FROM notification_settings WHERE user_id = $1',
    [userId],
  );
  return r.rows[0] ?? { enabled: true, hook_url: null, hook_kind: 'webhook' };
}

export async function saveSettings(db: Queryable, userId: number, s: SettingsRow): Promise<void> {
  await db.query(
    `INSERT INTO notification_settings (user_id, enabled, hook_url, hook_kind) VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_id) DO UPDATE SET enabled = excluded.enabled, hook_url = excluded.hook_url,
                                         hook_kind = excluded.hook_kind`,
    [userId, s.enabled, s.hook_url, s.hook_kind],
  );
}

/**
 * SQL: whether the person (`user`) turned notifications off for the feed with key `feed`: under that key,
 * or under any URL of their record of it, so that a feed turned off stays off when it moves.
 */
const MUTED = (user: string, feed: string) => `EXISTS (
  SELECT 1 FROM notification_mutes m
   WHERE m.user_id = ${user} AND m.feed_hash IN ${KEYS_OF_PODCAST(feed, user)})`;

/**
 * The keys of the feeds the person turned notifications off for: each as turned off, and every URL of their
 * record of it (where the feed is now, when it moved).
 */
export async function mutedFeeds(db: Queryable, userId: number): Promise<string[]> {
  const r = await db.query<{ feed_hash: string }>(
    `SELECT DISTINCT replace(h.url_hash::text, '-', '') AS feed_hash
       FROM notification_mutes m
       CROSS JOIN LATERAL ${KEYS_OF_PODCAST('m.feed_hash')} h
      WHERE m.user_id = $1`,
    [userId],
  );
  return r.rows.map((row) => row.feed_hash);
}

export async function mute(db: Queryable, userId: number, feedHash: string): Promise<void> {
  await db.query('INSERT INTO notification_mutes (user_id, feed_hash) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
    userId,
    feedHash,
  ]);
}

/** Turns the feed on again: under its key, and under every URL of the person's record of it. */
export async function unmute(db: Queryable, userId: number, feedHash: string): Promise<void> {
  await db.query(
    `DELETE FROM notification_mutes
      WHERE user_id = $1 AND feed_hash IN ${KEYS_OF_PODCAST('$2::uuid')}`,
    [userId, feedHash],
  );
}

/** A fetch's new items, as columns. */
type NewItems = {
  ids: string[];
  keys: string[];
  titles: (string | null)[];
  enclosures: (string | null)[];
  published: (Date | null)[];
};

/**
 * Notes one event per subscriber and new item (keys and subscription times pairwise; items as columns) and
 * a delivery per subscriber and channel, in one statement, the fetch's batch named by one new uuid. Not for
 * a person who turned notifications off, or this feed, or has no channel, nor for an item published before
 * their subscription (to the second: a feed's dates have no fraction), nor for one dated more than
 * `newWithinDays` days ago (the event of such an item may have been removed: retention.ts). An item noted
 * for a person before is not noted again. The event keeps the item's date. Returns the deliveries queued.
 */
export async function noteEvents(
  db: Queryable,
  feedHash: string,
  subscribers: { userIds: number[]; since: Date[] },
  items: NewItems,
  newWithinDays: number,
): Promise<number> {
  const r = await db.query<{ n: number }>(
    `WITH subscribers AS (SELECT * FROM unnest($2::bigint[], $3::timestamptz[]) AS s (user_id, since)),
     items AS (SELECT * FROM unnest($4::bigint[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
                 AS i (item_id, item_key, title, enclosure_url, published_at)),
     batch AS (SELECT gen_random_uuid() AS id),
     wanted AS (
       SELECT s.user_id, i.* FROM subscribers s CROSS JOIN items i
         LEFT JOIN notification_settings n ON n.user_id = s.user_id
        WHERE coalesce(n.enabled, true) AND coalesce(i.published_at, now()) >= date_trunc('second', s.since)
          AND coalesce(i.published_at, now()) >= now() - make_interval(days => $9)
          AND NOT ${MUTED('s.user_id', '$1')}
          AND (n.hook_url IS NOT NULL OR EXISTS (SELECT 1 FROM push_subscriptions p WHERE p.user_id = s.user_id))),
     noted AS (
       INSERT INTO notification_events (user_id, batch, feed_hash, item_key, item_id, title, enclosure_url, published_at)
       SELECT w.user_id, b.id, $1, w.item_key, w.item_id, w.title, w.enclosure_url, w.published_at FROM wanted w, batch b
        ORDER BY w.user_id, w.item_key
       ON CONFLICT (user_id, feed_hash, item_key) DO NOTHING
       RETURNING user_id, batch),
     people AS (SELECT DISTINCT user_id, batch FROM noted),
     channels AS (
       SELECT p.user_id, p.batch, 'hook' AS channel
         FROM people p JOIN notification_settings n ON n.user_id = p.user_id WHERE n.hook_url IS NOT NULL
       UNION ALL
       SELECT p.user_id, p.batch, 'push:' || s.id FROM people p JOIN push_subscriptions s ON s.user_id = p.user_id),
     queued AS (INSERT INTO notification_deliveries (user_id, batch, channel) SELECT * FROM channels RETURNING 1)
     SELECT count(*)::int AS n FROM queued`,
    [
      feedHash,
      arrayLiteral(subscribers.userIds),
      arrayLiteral(subscribers.since.map((d) => d.toISOString())),
      arrayLiteral(items.ids),
      arrayLiteral(items.keys),
      arrayLiteral(items.titles),
      arrayLiteral(items.enclosures),
      arrayLiteral(items.published.map((d) => d?.toISOString() ?? null)),
      newWithinDays,
    ],
  );
  return r.rows[0]?.n ?? 0;
}

export type DeliveryKey = { user_id: number; batch: string; channel: string };
export type DeliveryRow = DeliveryKey & { attempts: number };

/**
 * Takes the pending delivery that is due first, locked for the caller's transaction (SKIP LOCKED: one
 * another worker is sending is not waited for). The lock is the claim: it ends with the transaction, or
 * with the connection of a worker that died.
 */
export async function claimDue(tx: Queryable): Promise<DeliveryRow | undefined> {
  const r = await tx.query<DeliveryRow>(
    `SELECT user_id, batch, channel, attempts FROM notification_deliveries
      WHERE status = 'pending' AND next_at <= now() ORDER BY next_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
  );
  return r.rows[0];
}

/** The advisory-lock class of a person's deliveries (the bytes of "csnt"); the object is the user's id. */
const LOCK_CLASS = 0x63736e74;

/**
 * Holds the person's deliveries to one worker until the transaction ends (the daily limit is counted);
 * false, at once, when another worker holds them.
 */
export async function tryLockPerson(tx: Queryable, userId: number): Promise<boolean> {
  const r = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1, $2::int) AS locked', [
    LOCK_CLASS,
    userId,
  ]);
  return r.rows[0]?.locked ?? false;
}

/** The delivery due again in `seconds`, as it was otherwise (not counted as an attempt). */
export async function postpone(tx: Queryable, d: DeliveryKey, seconds: number): Promise<void> {
  await tx.query(
    `UPDATE notification_deliveries SET next_at = now() + make_interval(secs => $4)
      WHERE user_id = $1 AND batch = $2 AND channel = $3`,
    [d.user_id, d.batch, d.channel, seconds],
  );
}

/** The batches sent to the person in the last day other than this one, and whether this one was. */
export async function sentToday(
  tx: Queryable,
  userId: number,
  batch: string,
): Promise<{ others: number; this_batch: boolean }> {
  const r = await tx.query<{ others: number; this_batch: boolean }>(
    `SELECT count(DISTINCT batch) FILTER (WHERE batch <> $2)::int AS others, coalesce(bool_or(batch = $2), false) AS this_batch
       FROM notification_deliveries WHERE user_id = $1 AND status = 'sent' AND sent_at > now() - interval '1 day'`,
    [userId, batch],
  );
  return r.rows[0] ?? { others: 0, this_batch: false };
}

export type EventRow = {
  item_id: string;
  title: string | null;
  enclosure_url: string | null;
  podcast_title: string | null;
  feed_url: string;
  artwork_url: string | null;
  episode_artwork_url: string | null;
};

/**
 * A batch's episodes, with their podcast as the fetcher knows it, newest first; none of a feed the person
 * has turned off since they were noted (a retry waits up to 8.5 hours).
 */
export async function batchEvents(db: Queryable, userId: number, batch: string): Promise<EventRow[]> {
  const r = await db.query<EventRow>(
    `SELECT e.item_id::text AS item_id, e.title, e.enclosure_url, f.title AS podcast_title, f.feed_url, f.artwork_url,
            i.artwork_url AS episode_artwork_url
       FROM notification_events e JOIN feeds f ON f.url_hash = e.feed_hash
       LEFT JOIN feed_items i ON i.id = e.item_id
      WHERE e.user_id = $1 AND e.batch = $2
        AND NOT ${MUTED('e.user_id', 'e.feed_hash')}
      ORDER BY i.published_at DESC NULLS LAST, e.id`,
    [userId, batch],
  );
  return r.rows;
}

/** The delivery's outcome: sent (now), gone, failed, or pending again at `nextSeconds` from now. */
export async function settle(
  tx: Queryable,
  d: DeliveryKey,
  outcome: { status: 'sent' | 'failed' | 'gone' | 'pending'; error?: string | undefined; nextSeconds?: number },
): Promise<void> {
  await tx.query(
    `UPDATE notification_deliveries SET status = $4, attempts = attempts + 1, last_error = $5,
            sent_at = CASE WHEN $4 = 'sent' THEN now() END, next_at = now() + make_interval(secs => $6)
      WHERE user_id = $1 AND batch = $2 AND channel = $3`,
    [d.user_id, d.batch, d.channel, outcome.status, outcome.error?.slice(0, 500) ?? null, outcome.nextSeconds ?? 0],
  );
}

/** A batch none of whose deliveries is sent (over the person's daily limit, or nothing left to tell), and why. */
export async function dropBatch(tx: Queryable, userId: number, batch: string, why: string): Promise<void> {
  await tx.query(
    `UPDATE notification_deliveries SET status = 'dropped', last_error = $3
      WHERE user_id = $1 AND batch = $2 AND status = 'pending'`,
    [userId, batch, why],
  );
}

/** Whether a delivery is pending and due now (the job goes on while one is). */
export async function anyDue(db: Queryable): Promise<boolean> {
  const r = await db.query<{ due: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM notification_deliveries WHERE status = 'pending' AND next_at <= now()) AS due`,
  );
  return r.rows[0]?.due ?? false;
}

/**
 * Removes up to `limit` settled deliveries (sent, failed, dropped, gone) whose times (made, due, sent) are
 * all more than `days` days ago; never a pending one. The daily limit reads the sent ones of the last day
 * (sentToday). Rows another transaction holds (a run of the clean-up beside this one) are skipped, not
 * waited for. Returns how many went.
 */
export async function deleteSettledDeliveries(db: Queryable, days: number, limit: number): Promise<number> {
  const r = await db.query(
    `DELETE FROM notification_deliveries
      WHERE (user_id, batch, channel) IN (
        SELECT user_id, batch, channel FROM notification_deliveries
         WHERE status <> 'pending' AND greatest(created_at, next_at, sent_at) < now() - make_interval(days => $1)
         LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [days, limit],
  );
  return r.rowCount ?? 0;
}

/**
 * Removes up to `limit` events noted more than `days` days ago whose item was dated more than `days` days
 * ago, and none of whose batch's deliveries is pending (its message is made of them, batchEvents). Such an
 * item is not noted again (noteEvents), whenever a feed lists it again. An event without a date (its item
 * had none, or was no longer listed when events began to keep dates) is kept: nothing else tells its item
 * from a new one. Rows another transaction holds are skipped. Returns how many went.
 */
export async function deleteOldEvents(db: Queryable, days: number, limit: number): Promise<number> {
  const r = await db.query(
    `DELETE FROM notification_events
      WHERE (user_id, id) IN (
        SELECT e.user_id, e.id FROM notification_events e
         WHERE e.created_at < now() - make_interval(days => $1) AND e.published_at < now() - make_interval(days => $1)
           AND NOT EXISTS (SELECT 1 FROM notification_deliveries d
                            WHERE d.user_id = e.user_id AND d.batch = e.batch AND d.status = 'pending')
         LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [days, limit],
  );
  return r.rowCount ?? 0;
}
