import { arrayLiteral } from '../db/array-literal';
import type { Queryable } from '../db/pool';
import { COLUMNS, KEEP_SYNC_ID, type SubscriptionRow } from './repo';

// One record at a time: found by guid or URL, changed, merged; and unsubscribing by URL.

/** The record that has this guid, now or earlier; current tells which. */
export async function findByGuid(
  db: Queryable,
  userId: number,
  guid: string,
): Promise<(SubscriptionRow & { current: boolean }) | undefined> {
  const r = await db.query<SubscriptionRow & { current: boolean }>({
    name: 'find-by-guid',
    text: `SELECT ${COLUMNS}, true AS current FROM subscriptions s WHERE s.user_id = $1 AND s.guid = $2
     UNION ALL
     SELECT ${COLUMNS}, false FROM subscription_guids x JOIN subscriptions s ON s.user_id = x.user_id AND s.id = x.subscription_id
      WHERE x.user_id = $1 AND x.guid = $2
     LIMIT 1`,
    values: [userId, guid],
  });
  return r.rows[0];
}

/** The record that has this URL key, as its first URL or another one. */
export async function findUrlOwner(db: Queryable, userId: number, hash: string): Promise<number | undefined> {
  const r = await db.query<{ id: number }>(
    `SELECT id FROM subscriptions WHERE user_id = $1 AND url_hash = $2
     UNION ALL
     SELECT subscription_id FROM subscription_urls WHERE user_id = $1 AND url_hash = $2
     LIMIT 1`,
    [userId, hash],
  );
  return r.rows[0]?.id;
}

export async function addOtherUrl(
  tx: Queryable,
  userId: number,
  id: number,
  hash: string,
  feedUrl: string,
): Promise<void> {
  await tx.query(
    'INSERT INTO subscription_urls (user_id, url_hash, subscription_id, feed_url) VALUES ($1, $2, $3, $4)',
    [userId, hash, id, feedUrl],
  );
}

/** Makes `guid` an earlier guid of the record, replaced at `replacedAt`. */
export async function addEarlierGuid(
  tx: Queryable,
  userId: number,
  id: number,
  guid: string,
  replacedAt: Date,
): Promise<void> {
  await tx.query(
    'INSERT INTO subscription_guids (user_id, guid, subscription_id, replaced_at) VALUES ($1, $2, $3, $4)',
    [userId, guid, id, replacedAt],
  );
}

export async function removeEarlierGuid(tx: Queryable, userId: number, guid: string): Promise<void> {
  await tx.query('DELETE FROM subscription_guids WHERE user_id = $1 AND guid = $2', [userId, guid]);
}

/** A record's fields that a change sets. */
export type RecordState = {
  feedUrl: string;
  guid: string;
  isSubscribed: boolean;
  subscriptionChanged: Date;
  guidChanged: Date | null;
  deleted: Date | null;
};

export async function updateRecord(tx: Queryable, userId: number, id: number, set: RecordState): Promise<void> {
  await tx.query(
    `UPDATE subscriptions SET feed_url = $3, guid = $4, ${KEEP_SYNC_ID('subscriptions', '$4')}, is_subscribed = $5,
            subscription_changed = $6, guid_changed = $7, deleted = $8
      WHERE user_id = $1 AND id = $2`,
    [userId, id, set.feedUrl, set.guid, set.isSubscribed, set.subscriptionChanged, set.guidChanged, set.deleted],
  );
}

/**
 * A guid merge: record `from` disappears into record `into`. Its guid and first URL join the history of
 * `into` (the guid replaced at `stamp`), its own history, its URL moves, its deletion requests, its
 * episode actions and the feed fetcher's changes to it move over.
 */
export async function mergeInto(
  tx: Queryable,
  userId: number,
  from: SubscriptionRow,
  into: number,
  stamp: Date,
): Promise<void> {
  await tx.query(
    `WITH guids AS (UPDATE subscription_guids SET subscription_id = $3 WHERE user_id = $1 AND subscription_id = $2),
          urls AS (UPDATE subscription_urls SET subscription_id = $3 WHERE user_id = $1 AND subscription_id = $2),
          deletion_requests AS (UPDATE deletions SET subscription_id = $3 WHERE user_id = $1 AND subscription_id = $2),
          actions AS (UPDATE episode_actions SET subscription_id = $3 WHERE user_id = $1 AND subscription_id = $2),
          moves AS (UPDATE subscription_moves SET subscription_id = $3 WHERE user_id = $1 AND subscription_id = $2),
          feed_notes AS (UPDATE feed_changes SET subscription_id = $3 WHERE user_id = $1 AND subscription_id = $2)
     SELECT 1`,
    [userId, from.id, into],
  );
  await tx.query(
    `WITH gone AS (DELETE FROM subscriptions WHERE user_id = $1 AND id = $2 RETURNING 1)
     UPDATE users SET record_count = record_count - (SELECT count(*) FROM gone) WHERE id = $1`,
    [userId, from.id],
  );
  await addEarlierGuid(tx, userId, into, from.guid, stamp);
  await addOtherUrl(tx, userId, into, from.url_hash, from.feed_url);
}

/** Whether one of these records has a deletion request that its job has not run yet. */
export async function deletionPending(db: Queryable, userId: number, ids: number[]): Promise<boolean> {
  const r = await db.query(
    `SELECT 1 FROM deletions WHERE user_id = $1 AND subscription_id = ANY ($2::bigint[]) AND status = 'PENDING' LIMIT 1`,
    [userId, arrayLiteral(ids)],
  );
  return r.rows.length > 0;
}

/** The ids of the user's subscribed records that have one of these URL keys (first or other URL). */
export async function subscribedWithUrls(tx: Queryable, userId: number, hashes: string[]): Promise<number[]> {
  const r = await tx.query<{ id: number }>(
    `SELECT s.id FROM subscriptions s
      WHERE s.user_id = $1 AND s.is_subscribed
        AND (s.url_hash = ANY ($2::uuid[])
             OR s.id IN (SELECT x.subscription_id FROM subscription_urls x WHERE x.user_id = $1 AND x.url_hash = ANY ($2::uuid[])))`,
    [userId, arrayLiteral(hashes)],
  );
  return r.rows.map((x) => x.id);
}

/** The current URLs of these records. */
export async function feedUrlsOf(tx: Queryable, userId: number, ids: number[]): Promise<string[]> {
  const r = await tx.query<{ feed_url: string }>(
    'SELECT feed_url FROM subscriptions WHERE user_id = $1 AND id = ANY ($2::bigint[]) ORDER BY id',
    [userId, arrayLiteral(ids)],
  );
  return r.rows.map((x) => x.feed_url);
}

export async function markUnsubscribed(tx: Queryable, userId: number, ids: number[], stamp: Date): Promise<void> {
  await tx.query(
    `UPDATE subscriptions SET is_subscribed = false, subscription_changed = $3 WHERE user_id = $1 AND id = ANY ($2::bigint[])`,
    [userId, arrayLiteral(ids), stamp],
  );
}

/** Keeps the URL a record had before a change of its URL, for clients that sync by URL. */
export async function addMove(tx: Queryable, userId: number, id: number, oldUrl: string, at: Date): Promise<void> {
  await tx.query(
    'INSERT INTO subscription_moves (user_id, subscription_id, moved_at, old_url) VALUES ($1, $2, $3, $4)',
    [userId, id, at, oldUrl],
  );
}

/**
 * Every user's live records that have this URL key, as first or other URL, but for those whose guid is
 * already `adopted` (a feed's declared guid, taken long ago: a feed is fetched every day, and each fetch
 * must not touch its subscribers again). Found by the indexes on the key alone (migration 30): the fetcher
 * asks after every fetch of a feed that declares a guid of its own or moved, and without them PostgreSQL
 * read the whole table (it prefers that to a skip scan of the (user_id, url_hash) keys, a descent per
 * user): 98 ms a fetch at 450,000 records, so a cycle over the feeds cost feeds × records.
 */
export type LiveWithUrlRow = {
  user_id: number;
  guid: string;
  feed_url: string;
  is_subscribed: boolean;
  subscription_changed: Date;
};

export async function liveRecordsWithUrl(
  db: Queryable,
  hash: string,
  adopted: string | null,
): Promise<LiveWithUrlRow[]> {
  const r = await db.query<LiveWithUrlRow>(
    `SELECT s.user_id, s.guid, s.feed_url, s.is_subscribed, s.subscription_changed FROM subscriptions s
      WHERE s.url_hash = $1 AND s.deleted IS NULL AND s.guid IS DISTINCT FROM $2::uuid
     UNION
     SELECT s.user_id, s.guid, s.feed_url, s.is_subscribed, s.subscription_changed
       FROM subscription_urls x JOIN subscriptions s ON s.user_id = x.user_id AND s.id = x.subscription_id
      WHERE x.url_hash = $1 AND s.deleted IS NULL AND s.guid IS DISTINCT FROM $2::uuid`,
    [hash, adopted],
  );
  return r.rows;
}

/** Removes every record of the user, with their guid and URL history and moves (cascade); returns how many. */
export async function deleteAllRecords(tx: Queryable, userId: number): Promise<number> {
  const r = await tx.query<{ n: number }>(
    `WITH gone AS (DELETE FROM subscriptions WHERE user_id = $1 RETURNING 1),
          counted AS (UPDATE users SET record_count = 0 WHERE id = $1)
     SELECT count(*)::int AS n FROM gone`,
    [userId],
  );
  return r.rows[0]?.n ?? 0;
}

export type LiveWithFeedRow = SubscriptionRow & {
  title: string | null;
  podcast_guid: string | null;
  moved_to: string | null;
  /** The hashes of every URL the record has had, its current one included. */
  url_hashes: string[];
  actions: number;
};

/**
 * SQL: the key of the record `s`'s current URL. A record keeps the key of its first URL (so that the URL
 * keeps finding it); a URL it moved to since is among its other URLs, where the fetcher keeps that feed.
 */
export const CURRENT_URL_HASH = (s: string) => `coalesce(
  (SELECT x.url_hash FROM subscription_urls x
    WHERE x.user_id = ${s}.user_id AND x.subscription_id = ${s}.id AND x.feed_url = ${s}.feed_url LIMIT 1),
  ${s}.url_hash)`;

/**
 * The user's records that are not deleted, with what the fetcher learnt of their feeds (the feed at the
 * record's current URL) and their actions' count.
 */
export async function liveWithFeeds(db: Queryable, userId: number): Promise<LiveWithFeedRow[]> {
  const r = await db.query<LiveWithFeedRow>(
    `SELECT s.id, s.guid, s.feed_url, s.url_hash, s.is_subscribed, s.subscription_changed, s.guid_changed, s.deleted,
            s.changed, f.title, f.podcast_guid, f.moved_to, u.url_hashes || s.url_hash AS url_hashes,
            (SELECT count(*)::int FROM episode_actions a WHERE a.user_id = s.user_id AND a.subscription_id = s.id) AS actions
       FROM subscriptions s
       CROSS JOIN LATERAL (SELECT ARRAY(SELECT x.url_hash FROM subscription_urls x
                                         WHERE x.user_id = s.user_id AND x.subscription_id = s.id) AS url_hashes) u
       LEFT JOIN feeds f ON f.url_hash = ${CURRENT_URL_HASH('s')}
      WHERE s.user_id = $1 AND s.deleted IS NULL
      ORDER BY s.id`,
    [userId],
  );
  return r.rows;
}

/** Marks the record deleted: unsubscribed, with `deleted` set; its guids and URLs stay for 410 and reinstatement. */
export async function markDeleted(
  db: Queryable,
  userId: number,
  subscriptionId: number,
  stamp: Date,
): Promise<boolean> {
  const r = await db.query(
    `UPDATE subscriptions SET is_subscribed = false, deleted = $3, subscription_changed = $3
      WHERE user_id = $1 AND id = $2 AND deleted IS NULL`,
    [userId, subscriptionId, stamp],
  );
  return r.rowCount === 1;
}
