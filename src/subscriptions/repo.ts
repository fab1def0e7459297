import type { Queryable } from '../db/pool';

export type SubscriptionRow = {
  id: number;
  guid: string;
  feed_url: string;
  is_subscribed: boolean;
  subscription_changed: Date;
  guid_changed: Date | null;
  deleted: Date | null;
  changed: Date;
};

const COLUMNS =
  's.id, s.guid, s.feed_url, s.is_subscribed, s.subscription_changed, s.guid_changed, s.deleted, s.changed';

export type Match = {
  guidSid: number | null;
  guidSidGuid: string | null;
  urlSid: number | null;
  urlSidGuid: string | null;
};

/** For each (guid, url hash) pair, the user's record that has that guid, and the one that has that URL. */
export async function findMatches(tx: Queryable, userId: number, guids: string[], hashes: Buffer[]): Promise<Match[]> {
  const r = await tx.query<{
    guid_sid: number | null;
    guid_sid_guid: string | null;
    url_sid: number | null;
    url_sid_guid: string | null;
  }>(
    `SELECT g.subscription_id AS guid_sid, gs.guid AS guid_sid_guid, u.subscription_id AS url_sid, us.guid AS url_sid_guid
       FROM unnest($2::uuid[], $3::bytea[]) WITH ORDINALITY AS i (guid, url_hash, ord)
       LEFT JOIN subscription_guids g ON g.user_id = $1 AND g.guid = i.guid
       LEFT JOIN subscriptions gs ON gs.id = g.subscription_id
       LEFT JOIN subscription_urls u ON u.user_id = $1 AND u.url_hash = i.url_hash
       LEFT JOIN subscriptions us ON us.id = u.subscription_id
      ORDER BY i.ord`,
    [userId, guids, hashes],
  );
  return r.rows.map((x) => ({
    guidSid: x.guid_sid,
    guidSidGuid: x.guid_sid_guid,
    urlSid: x.url_sid,
    urlSidGuid: x.url_sid_guid,
  }));
}

/** New records; returns their ids by guid. */
export async function insertSubscriptions(
  tx: Queryable,
  userId: number,
  rows: { guid: string; feedUrl: string; guidChanged: boolean }[],
  stamp: Date,
): Promise<Map<string, number>> {
  if (rows.length === 0) return new Map();
  const r = await tx.query<{ id: number; guid: string }>(
    `INSERT INTO subscriptions (user_id, guid, feed_url, is_subscribed, subscription_changed, guid_changed)
     SELECT $1, t.guid, t.feed_url, true, $5, CASE WHEN t.guid_changed THEN $5::timestamptz END
       FROM unnest($2::uuid[], $3::text[], $4::bool[]) WITH ORDINALITY AS t (guid, feed_url, guid_changed, ord)
      ORDER BY t.ord
     RETURNING id, guid`,
    [userId, rows.map((x) => x.guid), rows.map((x) => x.feedUrl), rows.map((x) => x.guidChanged), stamp],
  );
  return new Map(r.rows.map((x) => [x.guid, x.id]));
}

/** Re-subscribes existing records (reinstating deleted ones), with their new URL and guid. */
export async function resubscribe(
  tx: Queryable,
  userId: number,
  rows: { id: number; guid: string; feedUrl: string; guidChanged: boolean }[],
  stamp: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `UPDATE subscriptions s
        SET feed_url = t.feed_url, guid = t.guid, is_subscribed = true, deleted = NULL, subscription_changed = $6,
            guid_changed = CASE WHEN t.guid_changed THEN $6 ELSE s.guid_changed END
       FROM unnest($2::bigint[], $3::uuid[], $4::text[], $5::bool[]) AS t (id, guid, feed_url, guid_changed)
      WHERE s.id = t.id AND s.user_id = $1`,
    [
      userId,
      rows.map((x) => x.id),
      rows.map((x) => x.guid),
      rows.map((x) => x.feedUrl),
      rows.map((x) => x.guidChanged),
      stamp,
    ],
  );
}

/** Adds guids to records' chains; a guid the user already has elsewhere stays where it is. */
export async function addGuids(
  tx: Queryable,
  userId: number,
  rows: { sid: number; guid: string }[],
  validFrom: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO subscription_guids (user_id, guid, subscription_id, valid_from)
     SELECT $1, t.guid, t.sid, $4 FROM unnest($2::bigint[], $3::uuid[]) WITH ORDINALITY AS t (sid, guid, ord) ORDER BY t.ord
     ON CONFLICT (user_id, guid) DO NOTHING`,
    [userId, rows.map((x) => x.sid), rows.map((x) => x.guid), validFrom],
  );
}

/** Adds URLs to records' histories; a URL the user already has on another record stays there. */
export async function addUrls(
  tx: Queryable,
  userId: number,
  rows: { sid: number; hash: Buffer; feedUrl: string }[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO subscription_urls (user_id, url_hash, subscription_id, feed_url)
     SELECT $1, t.url_hash, t.sid, t.feed_url FROM unnest($2::bigint[], $3::bytea[], $4::text[]) AS t (sid, url_hash, feed_url)
     ON CONFLICT (user_id, url_hash) DO NOTHING`,
    [userId, rows.map((x) => x.sid), rows.map((x) => x.hash), rows.map((x) => x.feedUrl)],
  );
}

export type ListedRow = SubscriptionRow & { shown_guid: string };
export type ListResult = { lastChange: Date; total: number; rows: ListedRow[] };

/**
 * One page of the user's records changed after `since` (all records without it), in creation order,
 * with the total and the user's last change stamp, all read in one statement (one snapshot).
 * shown_guid is the guid the record had at `since` (its first guid without `since`).
 */
export async function listPage(
  db: Queryable,
  userId: number,
  since: Date | undefined,
  limit: number,
  offset: number,
): Promise<ListResult> {
  const changedAfter = since ? 'AND s.changed > $2' : '';
  const r = await db.query<ListedRow & { last_change: Date; total: number; id: number | null }>(
    `SELECT u.last_change, c.total, p.*
       FROM users u
      CROSS JOIN LATERAL (SELECT count(*) AS total FROM subscriptions s WHERE s.user_id = u.id ${changedAfter}) c
       LEFT JOIN LATERAL (
         SELECT ${COLUMNS},
                CASE WHEN s.guid_changed IS NULL THEN s.guid ELSE coalesce(
                  (SELECT g.guid FROM subscription_guids g WHERE g.subscription_id = s.id AND g.valid_from <= $2
                    ORDER BY g.valid_from DESC, g.seq DESC LIMIT 1),
                  (SELECT g.guid FROM subscription_guids g WHERE g.subscription_id = s.id
                    ORDER BY g.valid_from, g.seq LIMIT 1),
                  s.guid) END AS shown_guid
           FROM subscriptions s
          WHERE s.user_id = u.id ${changedAfter}
          ORDER BY s.id
          LIMIT $3 OFFSET $4) p ON true
      WHERE u.id = $1`,
    [userId, since ?? null, limit, offset],
  );
  const first = r.rows[0];
  if (!first) throw new Error(`user ${userId} does not exist`);
  return {
    lastChange: first.last_change,
    total: first.total,
    rows: r.rows.filter((x) => x.id !== null),
  };
}

/** The record that has (or had) this guid. */
export async function findByGuid(
  db: Queryable,
  userId: number,
  guid: string,
  forUpdate = false,
): Promise<SubscriptionRow | undefined> {
  const r = await db.query<SubscriptionRow>(
    `SELECT ${COLUMNS} FROM subscription_guids g JOIN subscriptions s ON s.id = g.subscription_id
      WHERE g.user_id = $1 AND g.guid = $2 ${forUpdate ? 'FOR UPDATE OF s' : ''}`,
    [userId, guid],
  );
  return r.rows[0];
}

export async function findUrlOwner(db: Queryable, userId: number, hash: Buffer): Promise<number | undefined> {
  const r = await db.query<{ subscription_id: number }>(
    'SELECT subscription_id FROM subscription_urls WHERE user_id = $1 AND url_hash = $2',
    [userId, hash],
  );
  return r.rows[0]?.subscription_id;
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

/** Makes an earlier guid of the record its current one again. */
export async function reviveGuid(tx: Queryable, userId: number, guid: string, validFrom: Date): Promise<void> {
  await tx.query('UPDATE subscription_guids SET valid_from = $3 WHERE user_id = $1 AND guid = $2', [
    userId,
    guid,
    validFrom,
  ]);
}

/** Moves everything that names record `from` to record `into`, then removes `from` (a guid merge). */
export async function mergeInto(tx: Queryable, userId: number, from: number, into: number): Promise<void> {
  await tx.query(
    `WITH g AS (UPDATE subscription_guids SET subscription_id = $3 WHERE user_id = $1 AND subscription_id = $2),
          u AS (UPDATE subscription_urls SET subscription_id = $3 WHERE user_id = $1 AND subscription_id = $2),
          d AS (UPDATE deletions SET subscription_id = $3 WHERE user_id = $1 AND subscription_id = $2)
     SELECT 1`,
    [userId, from, into],
  );
  await tx.query('DELETE FROM subscriptions WHERE user_id = $1 AND id = $2', [userId, from]);
}
