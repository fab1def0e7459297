import { arrayLiteral, type ArrayElement } from '../db/array-literal';
import { NEXT_STAMP } from '../db/change-stamp';
import type { Queryable } from '../db/pool';
import { missingUser } from '../errors';
import type { Match } from './plan';

// Hot statements are named: pg prepares them once per connection, so they are not planned again each time.

export type SubscriptionRow = {
  id: number;
  guid: string;
  feed_url: string;
  url_hash: string;
  is_subscribed: boolean;
  subscription_changed: Date;
  guid_changed: Date | null;
  deleted: Date | null;
  changed: Date;
};

const COLUMNS =
  's.id, s.guid, s.feed_url, s.url_hash, s.is_subscribed, s.subscription_changed, s.guid_changed, s.deleted, s.changed';

/** SQL: whether user $1 has any earlier guid or other URL. Most have none, and then no history is probed. */
const HAS_HISTORY = `(EXISTS (SELECT 1 FROM subscription_guids WHERE user_id = $1)
                   OR EXISTS (SELECT 1 FROM subscription_urls WHERE user_id = $1))`;

/** The arrays that unnest() takes: one per key, each with that field of every row, in order. */
function columns<T extends Record<K, ArrayElement>, K extends keyof T>(rows: T[], ...keys: K[]): string[] {
  return keys.map((k) => arrayLiteral(rows.map((r) => r[k])));
}

type MatchRow = {
  last_change: Date;
  by_guid_id: number | null;
  by_guid_guid: string | null;
  by_url_id: number | null;
  by_url_guid: string | null;
};

/** The matches of a POST's items, and the user's last change stamp they were read at. */
export type Matches = { lastChange: Date; matches: Match[] };

/**
 * For each (guid, url hash) pair of $2 and $3, the user's record that has that guid (current or earlier)
 * and the one that has that URL (first or other). Each lookup is a LIMIT 1 subquery, so a few index
 * probes per item however many records the user has.
 */
export async function findMatches(db: Queryable, userId: number, guids: string[], hashes: string[]): Promise<Matches> {
  const r = await db.query<MatchRow>({
    name: 'find-matches',
    text: `WITH history AS (SELECT ${HAS_HISTORY} AS exists)
     SELECT (SELECT last_change FROM users WHERE id = $1) AS last_change,
            by_guid.id AS by_guid_id, by_guid.guid AS by_guid_guid, by_url.id AS by_url_id, by_url.guid AS by_url_guid
       FROM unnest($2::uuid[], $3::uuid[]) WITH ORDINALITY AS item (guid, url_hash, ord)
       LEFT JOIN LATERAL (
         SELECT s.id, s.guid FROM subscriptions s WHERE s.user_id = $1 AND s.guid = item.guid
         UNION ALL
         SELECT s.id, s.guid FROM subscription_guids x JOIN subscriptions s ON s.user_id = x.user_id AND s.id = x.subscription_id
          WHERE x.user_id = $1 AND x.guid = item.guid AND (SELECT exists FROM history)
         LIMIT 1) by_guid ON true
       LEFT JOIN LATERAL (
         SELECT s.id, s.guid FROM subscriptions s WHERE s.user_id = $1 AND s.url_hash = item.url_hash
         UNION ALL
         SELECT s.id, s.guid FROM subscription_urls x JOIN subscriptions s ON s.user_id = x.user_id AND s.id = x.subscription_id
          WHERE x.user_id = $1 AND x.url_hash = item.url_hash AND (SELECT exists FROM history)
         LIMIT 1) by_url ON true
      ORDER BY item.ord`,
    values: [userId, arrayLiteral(guids), arrayLiteral(hashes)],
  });
  const lastChange = r.rows[0]?.last_change;
  if (!lastChange) throw missingUser(userId);
  const matches = r.rows.map((x) => ({
    byGuid: x.by_guid_id === null ? null : { id: x.by_guid_id, guid: x.by_guid_guid! },
    byUrl: x.by_url_id === null ? null : { id: x.by_url_id, guid: x.by_url_guid! },
  }));
  return { lastChange, matches };
}

/**
 * SQL (CTE `stamp`): the change stamp for a write, taken only if the user's last change is still `seen`'s,
 * and the user's record count raised by the records created (the array at parameter $created).
 */
const STAMP_IF_UNCHANGED = (created: number) => `UPDATE users
     SET last_change = ${NEXT_STAMP}, record_count = record_count + cardinality($${created}::uuid[])
   WHERE id = $1 AND last_change = (SELECT last_change FROM seen)
   RETURNING last_change AS at`;

/** SQL (CTE `created`): new records from four arrays starting at parameter $p, stamped with `stamp`. */
const INSERT_CREATED = (
  p: number,
) => `INSERT INTO subscriptions (user_id, guid, feed_url, url_hash, is_subscribed, subscription_changed, guid_changed)
    SELECT $1, new.guid, new.feed_url, new.url_hash, true, stamp.at, CASE WHEN new.guid_changed THEN stamp.at END
      FROM stamp CROSS JOIN unnest($${p}::uuid[], $${p + 1}::text[], $${p + 2}::uuid[], $${p + 3}::bool[]) WITH ORDINALITY
           AS new (guid, feed_url, url_hash, guid_changed, ord)
     ORDER BY new.ord`;

/** A record named by its id, or, for one the same statement creates, by its guid. */
export type RecordRef = { id: number | null; newGuid: string | null };

export type SubscribeWrite = {
  created: { guid: string; feedUrl: string; urlHash: string; guidChanged: boolean }[];
  /** Existing records to subscribe again (a deleted one is reinstated), with their URL and guid. */
  resubscribed: { id: number; guid: string; feedUrl: string; guidChanged: boolean }[];
  /** guids that stop being current, and the records' other URLs. */
  earlierGuids: (RecordRef & { guid: string })[];
  otherUrls: (RecordRef & { hash: string; feedUrl: string })[];
};

const CONFLICT_SQLSTATE = 'CS409';
const UNIQUE_VIOLATION = '23505';

/** The error insertIfAllNew fails with when a feed exists. */
export const isExistingFeed = (err: unknown): boolean => {
  const code = (err as { code?: unknown }).code;
  return code === CONFLICT_SQLSTATE || code === UNIQUE_VIOLATION;
};

/**
 * The common POST in one round trip: insert feeds that are all new to the user. The unique indexes on
 * guid and URL do the matching: a feed the user has makes the whole statement fail (unique violation, or
 * CONFLICT_SQLSTATE for an earlier guid or other URL), writing nothing, and the caller matches instead.
 * Probing first would cost two index lookups per feed on every POST. The stamp is taken only if nothing
 * changed since the statement's snapshot, so that the history lookup still holds.
 * Returns the stamp, or undefined when another write of the user came in between.
 */
export async function insertIfAllNew(
  db: Queryable,
  userId: number,
  created: SubscribeWrite['created'],
): Promise<Date | undefined> {
  const r = await db.query<{ at: Date | null }>({
    name: 'insert-if-all-new',
    text: `WITH seen AS (SELECT last_change FROM users WHERE id = $1),
       known AS (
         SELECT CASE WHEN ${HAS_HISTORY}
                THEN EXISTS (SELECT 1 FROM subscription_guids WHERE user_id = $1 AND guid = ANY ($2::uuid[]))
                  OR EXISTS (SELECT 1 FROM subscription_urls WHERE user_id = $1 AND url_hash = ANY ($4::uuid[]))
                ELSE false END AS hit),
       stamp AS (${STAMP_IF_UNCHANGED(2)}),
       created AS (${INSERT_CREATED(2)})
     SELECT at, castsync_conflict_if((SELECT hit FROM known)) FROM stamp`,
    values: [userId, ...columns(created, 'guid', 'feedUrl', 'urlHash', 'guidChanged')],
  });
  return r.rows[0]?.at ?? undefined;
}

/**
 * Everything a POST writes, in one statement (so one transaction): the user's change stamp, new records,
 * re-subscribed records and their guid and URL history. It is a compare-and-set: the stamp is taken,
 * under the user's row lock, only if the user's last change is still `lastChange` (what the matches were
 * read at); otherwise nothing is written and undefined is returned, and the caller plans again.
 * A new feed costs one row in subscriptions and nothing else.
 */
export async function writeSubscriptions(
  tx: Queryable,
  userId: number,
  lastChange: Date,
  w: SubscribeWrite,
): Promise<Date | undefined> {
  const r = await tx.query<{ at: Date }>({
    name: 'write-subscriptions',
    text: `WITH seen AS (SELECT $2::timestamptz AS last_change),
       stamp AS (${STAMP_IF_UNCHANGED(3)}),
       created AS (${INSERT_CREATED(3)} RETURNING id, guid),
       resubscribed AS (
         UPDATE subscriptions s
            SET feed_url = again.feed_url, guid = again.guid, is_subscribed = true, deleted = NULL,
                subscription_changed = stamp.at,
                guid_changed = CASE WHEN again.guid_changed THEN stamp.at ELSE s.guid_changed END
           FROM stamp CROSS JOIN unnest($7::bigint[], $8::uuid[], $9::text[], $10::bool[]) AS again (id, guid, feed_url, guid_changed)
          WHERE s.user_id = $1 AND s.id = again.id),
       earlier_guids AS (
         INSERT INTO subscription_guids (user_id, guid, subscription_id, replaced_at)
         SELECT $1, earlier.guid, coalesce(earlier.id, c.id), stamp.at
           FROM stamp CROSS JOIN unnest($11::bigint[], $12::uuid[], $13::uuid[]) WITH ORDINALITY AS earlier (id, new_guid, guid, ord)
           LEFT JOIN created c ON c.guid = earlier.new_guid
          ORDER BY earlier.ord),
       other_urls AS (
         INSERT INTO subscription_urls (user_id, url_hash, subscription_id, feed_url)
         SELECT $1, other.url_hash, coalesce(other.id, c.id), other.feed_url
           FROM stamp CROSS JOIN unnest($14::bigint[], $15::uuid[], $16::uuid[], $17::text[]) AS other (id, new_guid, url_hash, feed_url)
           LEFT JOIN created c ON c.guid = other.new_guid)
     SELECT at FROM stamp`,
    values: [
      userId,
      lastChange,
      ...columns(w.created, 'guid', 'feedUrl', 'urlHash', 'guidChanged'),
      ...columns(w.resubscribed, 'id', 'guid', 'feedUrl', 'guidChanged'),
      ...columns(w.earlierGuids, 'id', 'newGuid', 'guid'),
      ...columns(w.otherUrls, 'id', 'newGuid', 'hash', 'feedUrl'),
    ],
  });
  return r.rows[0]?.at;
}

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
    `UPDATE subscriptions SET feed_url = $3, guid = $4, is_subscribed = $5, subscription_changed = $6, guid_changed = $7, deleted = $8
      WHERE user_id = $1 AND id = $2`,
    [userId, id, set.feedUrl, set.guid, set.isSubscribed, set.subscriptionChanged, set.guidChanged, set.deleted],
  );
}

/**
 * A guid merge: record `from` disappears into record `into`. Its guid and first URL join the history of
 * `into` (the guid replaced at `stamp`), its own history, its deletion requests and its episode actions
 * move over.
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
          actions AS (UPDATE episode_actions SET subscription_id = $3 WHERE user_id = $1 AND subscription_id = $2)
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

/** The feed URL and state of every record changed at or after `since` (all without it), in creation order. */
export async function changesSince(
  db: Queryable,
  userId: number,
  since: Date | undefined,
): Promise<{ lastChange: Date; rows: { feed_url: string; is_subscribed: boolean }[] }> {
  const r = await db.query<{ last_change: Date; feed_url: string | null; is_subscribed: boolean | null }>({
    name: 'changes-since',
    text: `SELECT u.last_change, c.feed_url, c.is_subscribed
       FROM users u
       LEFT JOIN LATERAL (
         SELECT s.feed_url, s.is_subscribed FROM subscriptions s
          WHERE s.user_id = u.id AND s.changed >= coalesce($2::timestamptz, '-infinity')
          ORDER BY s.id) c ON true
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

export async function markUnsubscribed(tx: Queryable, userId: number, ids: number[], stamp: Date): Promise<void> {
  await tx.query(
    `UPDATE subscriptions SET is_subscribed = false, subscription_changed = $3 WHERE user_id = $1 AND id = ANY ($2::bigint[])`,
    [userId, arrayLiteral(ids), stamp],
  );
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
