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

/** A record's columns, for statements that read whole records (alias s). */
export const COLUMNS =
  's.id, s.guid, s.feed_url, s.url_hash, s.is_subscribed, s.subscription_changed, s.guid_changed, s.deleted, s.changed';

/**
 * SQL: the SET item that keeps a record's sync_id when a statement sets its guid (to `newGuid`). A record
 * whose sync_id is NULL is named by its guid (migration 1763800000095), so the guid it had is stored as
 * its sync_id before the guid changes. In an UPDATE, `table`'s columns are the row as it was.
 */
export const KEEP_SYNC_ID = (table: string, newGuid: string) =>
  `sync_id = CASE WHEN ${table}.sync_id IS NULL AND ${table}.guid <> ${newGuid} THEN ${table}.guid ELSE ${table}.sync_id END`;

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
  by_guid_url: string | null;
  by_guid_live: boolean | null;
  by_url_id: number | null;
  by_url_guid: string | null;
  by_url_url: string | null;
  by_url_live: boolean | null;
};

/** The matches of a POST's items, and the user's last change stamp they were read at. */
export type Matches = { lastChange: Date; matches: Match[] };

/**
 * SQL: the record whose current `column` is the item's, else the one whose history (`history`) has it
 * (looked up only when the user has any history: the CTE `history`); aliased `alias`.
 */
const matchedBy = (column: 'guid' | 'url_hash', history: string, alias: string) => `LEFT JOIN LATERAL (
         SELECT s.id, s.guid, s.feed_url, s.is_subscribed AND s.deleted IS NULL AS live
           FROM subscriptions s WHERE s.user_id = $1 AND s.${column} = item.${column}
         UNION ALL
         SELECT s.id, s.guid, s.feed_url, s.is_subscribed AND s.deleted IS NULL
           FROM ${history} x JOIN subscriptions s ON s.user_id = x.user_id AND s.id = x.subscription_id
          WHERE x.user_id = $1 AND x.${column} = item.${column} AND (SELECT exists FROM history)
         LIMIT 1) ${alias} ON true`;

/** The matches of the rows of a matches read, in their order. */
function matchesOfRows(userId: number, rows: MatchRow[]): Matches {
  const lastChange = rows[0]?.last_change;
  if (!lastChange) throw missingUser(userId);
  const matches = rows.map((x) => ({
    byGuid:
      x.by_guid_id === null
        ? null
        : { id: x.by_guid_id, guid: x.by_guid_guid!, feedUrl: x.by_guid_url!, live: x.by_guid_live! },
    byUrl:
      x.by_url_id === null
        ? null
        : { id: x.by_url_id, guid: x.by_url_guid!, feedUrl: x.by_url_url!, live: x.by_url_live! },
  }));
  return { lastChange, matches };
}

/**
 * SQL: for each (guid, url hash) pair of $2 and $3, the user's record that has that guid (current or
 * earlier) and the one that has that URL (first or other), with `more` joined after them. Each lookup is a
 * LIMIT 1 subquery, so a few index probes per item however many records the user has.
 */
const matchesSql = (more = '', columns = '') => `WITH history AS (SELECT ${HAS_HISTORY} AS exists)
     SELECT (SELECT last_change FROM users WHERE id = $1) AS last_change,
            by_guid.id AS by_guid_id, by_guid.guid AS by_guid_guid, by_guid.feed_url AS by_guid_url, by_guid.live AS by_guid_live,
            by_url.id AS by_url_id, by_url.guid AS by_url_guid, by_url.feed_url AS by_url_url, by_url.live AS by_url_live
            ${columns}
       FROM unnest($2::uuid[], $3::uuid[]) WITH ORDINALITY AS item (guid, url_hash, ord)
       ${matchedBy('guid', 'subscription_guids', 'by_guid')}
       ${matchedBy('url_hash', 'subscription_urls', 'by_url')}
       ${more}
      ORDER BY item.ord`;

/** The records each pair of guid and URL key names, by guid and by URL; and the user's last change stamp. */
export async function findMatches(db: Queryable, userId: number, guids: string[], hashes: string[]): Promise<Matches> {
  const r = await db.query<MatchRow>({
    name: 'find-matches',
    text: matchesSql(),
    values: [userId, arrayLiteral(guids), arrayLiteral(hashes)],
  });
  return matchesOfRows(userId, r.rows);
}

/** How a read of matches reads the record each item names, aliased s: its columns and what it joins. */
export type NamedRecordRead = { name: string; columns: string; from: string };

/**
 * findMatches, and for each pair the record it names: a live one of its two matches first, else the one by
 * guid, then by URL (undefined if none); read as `read` says, by its key, in the same statement. The record
 * is read in a LIMIT 1 subquery, which PostgreSQL runs for each pair: as a join, it could plan a read of
 * all the user's records for each pair when its statistics are older than the user's records.
 */
export async function findMatchesAndRecords<T>(
  db: Queryable,
  userId: number,
  guids: string[],
  hashes: string[],
  read: NamedRecordRead,
): Promise<Matches & { records: (T | undefined)[] }> {
  const named = `LEFT JOIN LATERAL (
         SELECT true AS named, ${read.columns} FROM ${read.from}
          WHERE s.user_id = $1
            AND s.id = CASE WHEN by_guid.live THEN by_guid.id WHEN by_url.live THEN by_url.id
                            ELSE coalesce(by_guid.id, by_url.id) END
          LIMIT 1) named ON true`;
  const r = await db.query<MatchRow & { named: boolean | null }>({
    name: read.name,
    text: matchesSql(named, ', named.*'),
    values: [userId, arrayLiteral(guids), arrayLiteral(hashes)],
  });
  return { ...matchesOfRows(userId, r.rows), records: r.rows.map((x) => (x.named ? (x as T) : undefined)) };
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

/** What a POST's write did: its change stamp, and how many of its feeds castsync did not know before. */
export type Written = { at: Date };
type WrittenRow = { at: Date | null };
const writtenOf = (row: WrittenRow | undefined): Written | undefined => (row?.at ? { at: row.at } : undefined);

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
 * What a caller writes of the records an insert of new feeds creates, in the same statement: its CTEs,
 * which may read `stamp` (the change stamp, `at`) and `created` (the records' rows) and take parameters
 * from $6 (`values`); and the columns it reads of each created record (alias c), one row each. A row of
 * the caller's that breaks a unique key fails the statement, as a feed the user has does.
 */
export type AlsoWritten = { name: string; ctes: string; values: unknown[]; columns: string };

/** SQL: insertIfAllNew's statement, with what the caller writes in it (`also`) or not. */
const insertIfAllNewSql = (also?: AlsoWritten) => `WITH seen AS (SELECT last_change FROM users WHERE id = $1),
       known AS (
         SELECT CASE WHEN ${HAS_HISTORY}
                THEN EXISTS (SELECT 1 FROM subscription_guids WHERE user_id = $1 AND guid = ANY ($2::uuid[]))
                  OR EXISTS (SELECT 1 FROM subscription_urls WHERE user_id = $1 AND url_hash = ANY ($4::uuid[]))
                ELSE false END AS hit),
       stamp AS (${STAMP_IF_UNCHANGED(2)}),
       created AS (${INSERT_CREATED(2)}${also ? ' RETURNING *' : ''})
       ${also ? `, ${also.ctes}` : ''}
     SELECT stamp.at, castsync_conflict_if((SELECT hit FROM known))
            ${also ? `, ${also.columns} FROM stamp CROSS JOIN created c` : 'FROM stamp'}`;

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
): Promise<Written | undefined> {
  const r = await db.query<WrittenRow>({
    name: 'insert-if-all-new',
    text: insertIfAllNewSql(),
    values: [userId, ...columns(created, 'guid', 'feedUrl', 'urlHash', 'guidChanged')],
  });
  return writtenOf(r.rows[0]);
}

/** insertIfAllNew with what the caller writes of the records created (`also`), and the rows it reads of them. */
export async function insertIfAllNewWith<T>(
  db: Queryable,
  userId: number,
  created: SubscribeWrite['created'],
  also: AlsoWritten,
): Promise<(Written & { rows: T[] }) | undefined> {
  const r = await db.query<WrittenRow & T>({
    name: also.name,
    text: insertIfAllNewSql(also),
    values: [userId, ...columns(created, 'guid', 'feedUrl', 'urlHash', 'guidChanged'), ...also.values],
  });
  const written = writtenOf(r.rows[0]);
  return written && { ...written, rows: r.rows };
}

/**
 * Everything a POST writes, in one statement (so one transaction): the user's change stamp, new records,
 * re-subscribed records and their guid and URL history. It is a compare-and-set: the stamp is taken,
 * under the user's row lock, only if the user's last change is still `lastChange` (what the matches were
 * read at); otherwise nothing is written and undefined is returned, and the caller plans again.
 * A new feed costs one row in subscriptions; the feed fetcher finds it there (src/feeds/discover.ts).
 */
export async function writeSubscriptions(
  tx: Queryable,
  userId: number,
  lastChange: Date,
  w: SubscribeWrite,
): Promise<Written | undefined> {
  const r = await tx.query<WrittenRow>({
    name: 'write-subscriptions',
    text: `WITH seen AS (SELECT $2::timestamptz AS last_change),
       stamp AS (${STAMP_IF_UNCHANGED(3)}),
       created AS (${INSERT_CREATED(3)} RETURNING id, guid),
       resubscribed AS (
         UPDATE subscriptions s
            SET feed_url = again.feed_url, guid = again.guid, ${KEEP_SYNC_ID('s', 'again.guid')},
                is_subscribed = true, deleted = NULL,
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
  return writtenOf(r.rows[0]);
}
