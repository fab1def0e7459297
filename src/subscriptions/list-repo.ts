import { arrayLiteral } from '../db/array-literal';
import type { Queryable } from '../db/pool';
import { missingUser } from '../errors';
import type { SubscriptionRow } from './repo';

// Reading the user's records: pages for /v1, changes for the gpodder API, the list of feeds.

/** A record as listed: its fields and the guid it had at `since` (shown_guid). */
export type ListedRow = Omit<SubscriptionRow, 'url_hash' | 'changed'> & { shown_guid: string };
export type ListResult = { lastChange: Date; total: number; rows: ListedRow[] };
type ListRow = Omit<ListedRow, 'id'> & { id: number | null; last_change: Date; total: number };

function listResult(userId: number, rows: ListRow[]): ListResult {
  const first = rows[0];
  if (!first) throw missingUser(userId);
  return {
    lastChange: first.last_change,
    total: first.total,
    rows: rows.filter((x): x is ListRow & ListedRow => x.id !== null),
  };
}

/** The statement of listPage (exported for the plan test). */
export const LIST_PAGE = `SELECT u.last_change, u.record_count AS total, p.*
       FROM users u
       LEFT JOIN LATERAL (
         SELECT s.id, s.guid, s.feed_url, s.is_subscribed, s.subscription_changed, s.guid_changed, s.deleted,
                CASE WHEN s.guid_changed IS NULL THEN s.guid ELSE coalesce(
                  (SELECT x.guid FROM subscription_guids x
                    WHERE x.user_id = s.user_id AND x.subscription_id = s.id
                    ORDER BY x.replaced_at, x.seq LIMIT 1),
                  s.guid) END AS shown_guid
           FROM subscriptions s
          WHERE s.user_id = u.id
            AND s.id >= (SELECT k.id FROM subscriptions k WHERE k.user_id = u.id ORDER BY k.id LIMIT 1 OFFSET $3)
          ORDER BY s.id
          LIMIT $2) p ON true
      WHERE u.id = $1`;

/**
 * One page of all the user's records, in creation order, with their number (kept on the user's row) and
 * the user's last change stamp, read in one statement (one snapshot). The page's first id is found past `offset` entries of the
 * primary key by an index-only scan, and only the page's own rows are read from the table: with OFFSET
 * on the rows themselves, every skipped record was a table read, and for a user whose records lie spread
 * across the table the 20th page of 50 cost a thousand page reads instead of fifty. The LEFT JOIN keeps
 * the user's row when the page is empty. Without `since`, every record shows its first guid.
 */
export async function listPage(db: Queryable, userId: number, limit: number, offset: number): Promise<ListResult> {
  const r = await db.query<ListRow>({
    name: 'list-page',
    text: LIST_PAGE,
    values: [userId, limit, offset],
  });
  return listResult(userId, r.rows);
}

/**
 * One page of the user's records changed after `since`, like listPage. The ids of the changed records
 * are read from the (user_id, changed) index alone (an index-only scan, materialised so that no plan can
 * walk the primary key and read every record of the user instead: the generic plan of the prepared
 * statement could, 4-5 times slower for a user whose records lie spread over the table); they are
 * counted and the page's ids picked from them, and only the page's rows are read, each by a probe of the
 * primary key (a lateral lookup, which no plan can turn into a scan of the user's records). So a since-sync costs what its
 * changes cost, whatever the user's size. shown_guid is the guid the record had at `since`: the current
 * one if it had it by then, else the earlier guid that was replaced first after `since`.
 */
export async function listPageSince(
  db: Queryable,
  userId: number,
  since: Date,
  limit: number,
  offset: number,
): Promise<ListResult> {
  const r = await db.query<ListRow>({
    name: 'list-page-since',
    text: LIST_PAGE_SINCE,
    values: [userId, since, limit, offset],
  });
  return listResult(userId, r.rows);
}

/** The statement of listPageSince (exported for the plan test). */
export const LIST_PAGE_SINCE = `WITH changed AS MATERIALIZED (
         SELECT c.id FROM subscriptions c WHERE c.user_id = $1 AND c.changed > $2),
       page AS (SELECT id FROM changed ORDER BY id LIMIT $3 OFFSET $4)
     SELECT u.last_change, (SELECT count(*) FROM changed) AS total, p.*
       FROM users u
       LEFT JOIN LATERAL (
         SELECT s.id, s.guid, s.feed_url, s.is_subscribed, s.subscription_changed, s.guid_changed, s.deleted,
                CASE WHEN s.guid_changed IS NULL OR s.guid_changed <= $2 THEN s.guid ELSE coalesce(
                  (SELECT x.guid FROM subscription_guids x
                    WHERE x.user_id = s.user_id AND x.subscription_id = s.id AND x.replaced_at > $2
                    ORDER BY x.replaced_at, x.seq LIMIT 1),
                  s.guid) END AS shown_guid
           FROM page CROSS JOIN LATERAL (SELECT * FROM subscriptions r WHERE r.user_id = $1 AND r.id = page.id LIMIT 1) s
          ORDER BY s.id) p ON true
      WHERE u.id = $1`;

/** The feed URL and state of every record changed at or after `since` (all without it), in creation order. */
export async function changesSince(
  db: Queryable,
  userId: number,
  since: Date | undefined,
): Promise<{ lastChange: Date; rows: { feed_url: string; is_subscribed: boolean }[] }> {
  // The records changed since then, in creation order, then the URLs records left since then (as not
  // subscribed: the client drops the old URL). A first sync (no since) only needs the records.
  const r = await db.query<{ last_change: Date; feed_url: string | null; is_subscribed: boolean | null }>({
    name: 'changes-since',
    text: `SELECT u.last_change, c.feed_url, c.is_subscribed
       FROM users u
       LEFT JOIN LATERAL (
         (SELECT s.feed_url, s.is_subscribed FROM subscriptions s
           WHERE s.user_id = u.id AND s.changed >= coalesce($2::timestamptz, '-infinity')
           ORDER BY s.id)
         UNION ALL
         (SELECT m.old_url, false FROM subscription_moves m
           WHERE $2::timestamptz IS NOT NULL AND m.user_id = u.id AND m.moved_at >= $2::timestamptz
           ORDER BY m.moved_at)) c ON true
      WHERE u.id = $1`,
    values: [userId, since ?? null],
  });
  const first = r.rows[0];
  if (!first) throw missingUser(userId);
  return {
    lastChange: first.last_change,
    rows: r.rows.flatMap((x) =>
      x.feed_url === null ? [] : [{ feed_url: x.feed_url, is_subscribed: !!x.is_subscribed }],
    ),
  };
}

export async function lastChange(db: Queryable, userId: number): Promise<Date> {
  const r = await db.query<{ last_change: Date }>('SELECT last_change FROM users WHERE id = $1', [userId]);
  const at = r.rows[0]?.last_change;
  if (!at) throw missingUser(userId);
  return at;
}

/** The user's subscribed feeds, in creation order. */
export async function subscribedFeeds(db: Queryable, userId: number): Promise<string[]> {
  const r = await db.query<{ feed_url: string }>(
    'SELECT feed_url FROM subscriptions WHERE user_id = $1 AND is_subscribed ORDER BY id',
    [userId],
  );
  return r.rows.map((x) => x.feed_url);
}

/** When each of the user's records with these URL keys (their current URL) last changed its subscription. */
export async function subscriptionsChangedAt(
  db: Queryable,
  userId: number,
  hashes: string[],
): Promise<{ url_hash: string; subscription_changed: Date }[]> {
  const r = await db.query<{ url_hash: string; subscription_changed: Date }>(
    `SELECT replace(url_hash::text, '-', '') AS url_hash, subscription_changed FROM subscriptions
      WHERE user_id = $1 AND url_hash = ANY ($2::uuid[])`,
    [userId, arrayLiteral(hashes)],
  );
  return r.rows;
}

/**
 * Up to `limit` of the user's live records changed after the position (`after`, `afterId`) and at or before
 * `until`, in (changed, id) order: their current URL and position, and when a subscribed one last changed
 * its subscription (null for one unsubscribed).
 */
export async function urlsChangedBetween(
  db: Queryable,
  userId: number,
  after: { changed: Date | null; id: string },
  until: Date,
  limit: number,
): Promise<{ feed_url: string; changed: Date; id: number; subscribed_since: Date | null }[]> {
  const r = await db.query<{ feed_url: string; changed: Date; id: number; subscribed_since: Date | null }>(
    `SELECT feed_url, changed, id, CASE WHEN is_subscribed THEN subscription_changed END AS subscribed_since
       FROM subscriptions
      WHERE user_id = $1 AND changed >= coalesce($2::timestamptz, '-infinity') AND changed <= $4
        AND (changed, id) > (coalesce($2::timestamptz, '-infinity'), $3::bigint) AND deleted IS NULL
      ORDER BY changed, id
      LIMIT $5`,
    [userId, after.changed, after.id, until, limit],
  );
  return r.rows;
}
