import type { Queryable } from '../db/pool';

export type SubscriptionRow = {
  id: number;
  guid: string;
  feed_url: string;
  url_hash: Buffer;
  is_subscribed: boolean;
  subscription_changed: Date;
  guid_changed: Date | null;
  deleted: Date | null;
  changed: Date;
};

const COLUMNS =
  's.id, s.guid, s.feed_url, s.url_hash, s.is_subscribed, s.subscription_changed, s.guid_changed, s.deleted, s.changed';

// Hot statements are named: pg prepares them once per connection, so they are not planned again each time.

/** A record found by a guid or a URL: its id and current guid. */
export type Match = {
  guidSid: number | null;
  guidSidGuid: string | null;
  urlSid: number | null;
  urlSidGuid: string | null;
};

/**
 * For each (guid, url hash) pair, the user's record that has that guid (current or earlier) and the one
 * that has that URL (first or other). Each lookup is a LIMIT 1 subquery, so two or three index probes
 * per item however many records the user has.
 */
export async function findMatches(tx: Queryable, userId: number, guids: string[], hashes: Buffer[]): Promise<Match[]> {
  const r = await tx.query<{
    guid_sid: number | null;
    guid_sid_guid: string | null;
    url_sid: number | null;
    url_sid_guid: string | null;
  }>({
    name: 'find-matches',
    text: `SELECT g.id AS guid_sid, g.guid AS guid_sid_guid, u.id AS url_sid, u.guid AS url_sid_guid
       FROM unnest($2::uuid[], $3::bytea[]) WITH ORDINALITY AS i (guid, url_hash, ord)
       LEFT JOIN LATERAL (
         SELECT s.id, s.guid FROM subscriptions s WHERE s.user_id = $1 AND s.guid = i.guid
         UNION ALL
         SELECT s.id, s.guid FROM subscription_guids x JOIN subscriptions s ON s.user_id = x.user_id AND s.id = x.subscription_id
          WHERE x.user_id = $1 AND x.guid = i.guid
         LIMIT 1) g ON true
       LEFT JOIN LATERAL (
         SELECT s.id, s.guid FROM subscriptions s WHERE s.user_id = $1 AND s.url_hash = i.url_hash
         UNION ALL
         SELECT s.id, s.guid FROM subscription_urls x JOIN subscriptions s ON s.user_id = x.user_id AND s.id = x.subscription_id
          WHERE x.user_id = $1 AND x.url_hash = i.url_hash
         LIMIT 1) u ON true
      ORDER BY i.ord`,
    values: [userId, guids, hashes],
  });
  return r.rows.map((x) => ({
    guidSid: x.guid_sid,
    guidSidGuid: x.guid_sid_guid,
    urlSid: x.url_sid,
    urlSidGuid: x.url_sid_guid,
  }));
}

/** A record named by an id (existing) or by its guid (created by the same statement). */
export type RecordRef = { sid: number | null; slotGuid: string | null };

export type SubscribeWrite = {
  created: { guid: string; feedUrl: string; urlHash: Buffer; guidChanged: boolean }[];
  /** Existing records to subscribe again (a deleted one is reinstated), with their URL and guid. */
  resubscribed: { id: number; guid: string; feedUrl: string; guidChanged: boolean }[];
  /** guids that stop being current, and the records' other URLs. */
  earlierGuids: (RecordRef & { guid: string })[];
  otherUrls: (RecordRef & { hash: Buffer; feedUrl: string })[];
};

/**
 * Everything a POST writes, in one statement: new records, re-subscribed records and their guid and URL
 * history. A new feed costs one row in subscriptions and nothing else.
 */
export async function writeSubscriptions(tx: Queryable, userId: number, stamp: Date, w: SubscribeWrite): Promise<void> {
  await tx.query({
    name: 'write-subscriptions',
    text: `WITH created AS (
         INSERT INTO subscriptions (user_id, guid, feed_url, url_hash, is_subscribed, subscription_changed, guid_changed)
         SELECT $1, t.guid, t.feed_url, t.url_hash, true, $2, CASE WHEN t.guid_changed THEN $2::timestamptz END
           FROM unnest($3::uuid[], $4::text[], $5::bytea[], $6::bool[]) WITH ORDINALITY AS t (guid, feed_url, url_hash, guid_changed, ord)
          ORDER BY t.ord
         RETURNING id, guid),
       resubscribed AS (
         UPDATE subscriptions s
            SET feed_url = t.feed_url, guid = t.guid, is_subscribed = true, deleted = NULL, subscription_changed = $2,
                guid_changed = CASE WHEN t.guid_changed THEN $2 ELSE s.guid_changed END
           FROM unnest($7::bigint[], $8::uuid[], $9::text[], $10::bool[]) AS t (id, guid, feed_url, guid_changed)
          WHERE s.user_id = $1 AND s.id = t.id),
       guids AS (
         INSERT INTO subscription_guids (user_id, guid, subscription_id, replaced_at)
         SELECT $1, a.guid, coalesce(a.sid, c.id), $2
           FROM unnest($11::bigint[], $12::uuid[], $13::uuid[]) WITH ORDINALITY AS a (sid, slot_guid, guid, ord)
           LEFT JOIN created c ON c.guid = a.slot_guid
          ORDER BY a.ord)
     INSERT INTO subscription_urls (user_id, url_hash, subscription_id, feed_url)
     SELECT $1, a.url_hash, coalesce(a.sid, c.id), a.feed_url
       FROM unnest($14::bigint[], $15::uuid[], $16::bytea[], $17::text[]) AS a (sid, slot_guid, url_hash, feed_url)
       LEFT JOIN created c ON c.guid = a.slot_guid`,
    values: [
      userId,
      stamp,
      w.created.map((x) => x.guid),
      w.created.map((x) => x.feedUrl),
      w.created.map((x) => x.urlHash),
      w.created.map((x) => x.guidChanged),
      w.resubscribed.map((x) => x.id),
      w.resubscribed.map((x) => x.guid),
      w.resubscribed.map((x) => x.feedUrl),
      w.resubscribed.map((x) => x.guidChanged),
      w.earlierGuids.map((x) => x.sid),
      w.earlierGuids.map((x) => x.slotGuid),
      w.earlierGuids.map((x) => x.guid),
      w.otherUrls.map((x) => x.sid),
      w.otherUrls.map((x) => x.slotGuid),
      w.otherUrls.map((x) => x.hash),
      w.otherUrls.map((x) => x.feedUrl),
    ],
  });
}

/** What a client sees of a record. */
export type RecordFields = Pick<
  SubscriptionRow,
  'guid' | 'feed_url' | 'is_subscribed' | 'subscription_changed' | 'guid_changed' | 'deleted'
>;
export type ListedRow = RecordFields & { id: number; shown_guid: string };
export type ListResult = { lastChange: Date; total: number; rows: ListedRow[] };

/**
 * One page of the user's records changed after `since` (all records without it), in creation order,
 * with the total and the user's last change stamp, all read in one statement (one snapshot).
 * shown_guid is the guid the record had at `since`: the current one if it had it by then, else the
 * earlier guid that was replaced first after `since` (without `since`, or for a record made after it,
 * that is its first guid).
 */
export async function listPage(
  db: Queryable,
  userId: number,
  since: Date | undefined,
  limit: number,
  offset: number,
): Promise<ListResult> {
  const changedAfter = since ? 'AND s.changed > $2' : '';
  const r = await db.query<Omit<ListedRow, 'id'> & { last_change: Date; total: number; id: number | null }>({
    name: since ? 'list-page-since' : 'list-page',
    text: `SELECT u.last_change, c.total, p.*
       FROM users u
      CROSS JOIN LATERAL (SELECT count(*) AS total FROM subscriptions s WHERE s.user_id = u.id ${changedAfter}) c
       LEFT JOIN LATERAL (
         SELECT s.id, s.guid, s.feed_url, s.is_subscribed, s.subscription_changed, s.guid_changed, s.deleted,
                CASE WHEN s.guid_changed IS NULL OR s.guid_changed <= $2 THEN s.guid ELSE coalesce(
                  (SELECT x.guid FROM subscription_guids x
                    WHERE x.user_id = s.user_id AND x.subscription_id = s.id AND x.replaced_at > coalesce($2, '-infinity')
                    ORDER BY x.replaced_at, x.seq LIMIT 1),
                  s.guid) END AS shown_guid
           FROM subscriptions s
          WHERE s.user_id = u.id ${changedAfter}
          ORDER BY s.id
          LIMIT $3 OFFSET $4) p ON true
      WHERE u.id = $1`,
    values: [userId, since ?? null, limit, offset],
  });
  const first = r.rows[0];
  if (!first) throw new Error(`user ${userId} does not exist`);
  return {
    lastChange: first.last_change,
    total: first.total,
    rows: r.rows.filter((x): x is ListedRow & { last_change: Date; total: number } => x.id !== null),
  };
}

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
export async function findUrlOwner(db: Queryable, userId: number, hash: Buffer): Promise<number | undefined> {
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
  sid: number,
  hash: Buffer,
  feedUrl: string,
): Promise<void> {
  await tx.query(
    'INSERT INTO subscription_urls (user_id, url_hash, subscription_id, feed_url) VALUES ($1, $2, $3, $4)',
    [userId, hash, sid, feedUrl],
  );
}

/** Makes `guid` an earlier guid of the record, replaced at `replacedAt`. */
export async function addEarlierGuid(
  tx: Queryable,
  userId: number,
  sid: number,
  guid: string,
  replacedAt: Date,
): Promise<void> {
  await tx.query(
    'INSERT INTO subscription_guids (user_id, guid, subscription_id, replaced_at) VALUES ($1, $2, $3, $4)',
    [userId, guid, sid, replacedAt],
  );
}

export async function removeEarlierGuid(tx: Queryable, userId: number, guid: string): Promise<void> {
  await tx.query('DELETE FROM subscription_guids WHERE user_id = $1 AND guid = $2', [userId, guid]);
}

export async function updateRecord(
  tx: Queryable,
  userId: number,
  id: number,
  set: {
    feedUrl: string;
    guid: string;
    isSubscribed: boolean;
    subscriptionChanged: Date;
    guidChanged: Date | null;
    deleted: Date | null;
  },
): Promise<void> {
  await tx.query(
    `UPDATE subscriptions SET feed_url = $3, guid = $4, is_subscribed = $5, subscription_changed = $6, guid_changed = $7, deleted = $8
      WHERE user_id = $1 AND id = $2`,
    [userId, id, set.feedUrl, set.guid, set.isSubscribed, set.subscriptionChanged, set.guidChanged, set.deleted],
  );
}

/**
 * A guid merge: record `from` disappears into record `into`. Its guid and first URL join the history of
 * `into` (the guid replaced at `stamp`), its own history and its deletion requests move over.
 */
export async function mergeInto(
  tx: Queryable,
  userId: number,
  from: SubscriptionRow,
  into: number,
  stamp: Date,
): Promise<void> {
  await tx.query(
    `WITH g AS (UPDATE subscription_guids SET subscription_id = $3 WHERE user_id = $1 AND subscription_id = $2),
          u AS (UPDATE subscription_urls SET subscription_id = $3 WHERE user_id = $1 AND subscription_id = $2),
          d AS (UPDATE deletions SET subscription_id = $3 WHERE user_id = $1 AND subscription_id = $2)
     SELECT 1`,
    [userId, from.id, into],
  );
  await tx.query('DELETE FROM subscriptions WHERE user_id = $1 AND id = $2', [userId, from.id]);
  await addEarlierGuid(tx, userId, into, from.guid, stamp);
  await addOtherUrl(tx, userId, into, from.url_hash, from.feed_url);
}
