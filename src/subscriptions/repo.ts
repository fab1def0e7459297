import { arrayLiteral, type ArrayElement } from '../db/array-literal';
import type { Queryable } from '../db/pool';

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

// Hot statements are named: pg prepares them once per connection, so they are not planned again each time.

/** A record found by a guid or a URL: its id and current guid. */
export type Match = {
  guidSid: number | null;
  guidSidGuid: string | null;
  urlSid: number | null;
  urlSidGuid: string | null;
};

/**
 * For each (guid, url hash) pair of $2 and $3, the user's record that has that guid (current or earlier)
 * and the one that has that URL (first or other). Each lookup is a LIMIT 1 subquery, so a few index
 * probes per item however many records the user has; most users have no earlier guids or other URLs,
 * and then the history tables are not probed per item at all.
 */
/** Whether user $1 has any earlier guid or other URL (most have none). */
const HAS_HISTORY = `(EXISTS (SELECT 1 FROM subscription_guids WHERE user_id = $1)
                   OR EXISTS (SELECT 1 FROM subscription_urls WHERE user_id = $1))`;

/** The arrays that unnest() takes: one per key, each with that field of every row, in order. */
function columns<T extends Record<K, ArrayElement>, K extends keyof T>(rows: T[], ...keys: K[]): string[] {
  return keys.map((k) => arrayLiteral(rows.map((r) => r[k])));
}

const MATCHES = `
  h AS (SELECT ${HAS_HISTORY} AS has_history),
  m AS (
    SELECT i.ord, g.id AS guid_sid, g.guid AS guid_sid_guid, u.id AS url_sid, u.guid AS url_sid_guid
      FROM unnest($2::uuid[], $3::uuid[]) WITH ORDINALITY AS i (guid, url_hash, ord)
      LEFT JOIN LATERAL (
        SELECT s.id, s.guid FROM subscriptions s WHERE s.user_id = $1 AND s.guid = i.guid
        UNION ALL
        SELECT s.id, s.guid FROM subscription_guids x JOIN subscriptions s ON s.user_id = x.user_id AND s.id = x.subscription_id
         WHERE x.user_id = $1 AND x.guid = i.guid AND (SELECT has_history FROM h)
        LIMIT 1) g ON true
      LEFT JOIN LATERAL (
        SELECT s.id, s.guid FROM subscriptions s WHERE s.user_id = $1 AND s.url_hash = i.url_hash
        UNION ALL
        SELECT s.id, s.guid FROM subscription_urls x JOIN subscriptions s ON s.user_id = x.user_id AND s.id = x.subscription_id
         WHERE x.user_id = $1 AND x.url_hash = i.url_hash AND (SELECT has_history FROM h)
        LIMIT 1) u ON true)`;

type MatchRow = {
  version: Date;
  guid_sid: number | null;
  guid_sid_guid: string | null;
  url_sid: number | null;
  url_sid_guid: string | null;
};

/** What the matches were read against: the user's last change stamp at that moment. */
export type Matches = { version: Date; matches: Match[] };

function toMatches(rows: MatchRow[], userId: number): Matches {
  const version = rows[0]?.version;
  if (!version) throw new Error(`user ${userId} does not exist`);
  const matches = rows.map((x) => ({
    guidSid: x.guid_sid,
    guidSidGuid: x.guid_sid_guid,
    urlSid: x.url_sid,
    urlSidGuid: x.url_sid_guid,
  }));
  return { version, matches };
}

export async function findMatches(db: Queryable, userId: number, guids: string[], hashes: string[]): Promise<Matches> {
  const r = await db.query<MatchRow>({
    name: 'find-matches',
    text: `WITH ${MATCHES}
     SELECT (SELECT last_change FROM users WHERE id = $1) AS version, m.* FROM m ORDER BY m.ord`,
    values: [userId, arrayLiteral(guids), arrayLiteral(hashes)],
  });
  return toMatches(r.rows, userId);
}

/** The change stamp for a write, taken under the user's row lock only if nothing changed since `version`. */
const STAMP_IF_UNCHANGED = `UPDATE users
     SET last_change = greatest(date_trunc('milliseconds', clock_timestamp()), last_change + interval '1 millisecond')
   WHERE id = $1 AND last_change = (SELECT last_change FROM v)`;

const INSERT_CREATED = (
  p: number,
) => `INSERT INTO subscriptions (user_id, guid, feed_url, url_hash, is_subscribed, subscription_changed, guid_changed)
    SELECT $1, t.guid, t.feed_url, t.url_hash, true, stamp.at, CASE WHEN t.guid_changed THEN stamp.at END
      FROM stamp CROSS JOIN unnest($${p}::uuid[], $${p + 1}::text[], $${p + 2}::uuid[], $${p + 3}::bool[]) WITH ORDINALITY
           AS t (guid, feed_url, url_hash, guid_changed, ord)
     ORDER BY t.ord`;

/** A record named by an id (existing) or by its guid (created by the same statement). */
export type RecordRef = { sid: number | null; slotGuid: string | null };

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
    text: `WITH v AS (SELECT last_change FROM users WHERE id = $1),
       known AS (
         SELECT CASE WHEN ${HAS_HISTORY}
                THEN EXISTS (SELECT 1 FROM subscription_guids WHERE user_id = $1 AND guid = ANY ($2::uuid[]))
                  OR EXISTS (SELECT 1 FROM subscription_urls WHERE user_id = $1 AND url_hash = ANY ($4::uuid[]))
                ELSE false END AS hit),
       stamp AS (${STAMP_IF_UNCHANGED} RETURNING last_change AS at),
       created AS (${INSERT_CREATED(2)})
     SELECT at, castsync_conflict_if((SELECT hit FROM known)) FROM stamp`,
    values: [userId, ...columns(created, 'guid', 'feedUrl', 'urlHash', 'guidChanged')],
  });
  return r.rows[0]?.at ?? undefined;
}

/**
 * Everything a POST writes, in one statement (so one transaction): the user's change stamp, new records,
 * re-subscribed records and their guid and URL history. It is a compare-and-set: the stamp is taken,
 * under the user's row lock, only if the user's last change is still `version` (what the matches were
 * read against); otherwise nothing is written and undefined is returned, and the caller plans again.
 * A new feed costs one row in subscriptions and nothing else.
 */
export async function writeSubscriptions(
  tx: Queryable,
  userId: number,
  version: Date,
  w: SubscribeWrite,
): Promise<Date | undefined> {
  const r = await tx.query<{ at: Date }>({
    name: 'write-subscriptions',
    text: `WITH v AS (SELECT $2::timestamptz AS last_change),
       stamp AS (${STAMP_IF_UNCHANGED} RETURNING last_change AS at),
       created AS (${INSERT_CREATED(3)} RETURNING id, guid),
       resubscribed AS (
         UPDATE subscriptions s
            SET feed_url = t.feed_url, guid = t.guid, is_subscribed = true, deleted = NULL, subscription_changed = stamp.at,
                guid_changed = CASE WHEN t.guid_changed THEN stamp.at ELSE s.guid_changed END
           FROM stamp CROSS JOIN unnest($7::bigint[], $8::uuid[], $9::text[], $10::bool[]) AS t (id, guid, feed_url, guid_changed)
          WHERE s.user_id = $1 AND s.id = t.id),
       guids AS (
         INSERT INTO subscription_guids (user_id, guid, subscription_id, replaced_at)
         SELECT $1, a.guid, coalesce(a.sid, c.id), stamp.at
           FROM stamp CROSS JOIN unnest($11::bigint[], $12::uuid[], $13::uuid[]) WITH ORDINALITY AS a (sid, slot_guid, guid, ord)
           LEFT JOIN created c ON c.guid = a.slot_guid
          ORDER BY a.ord),
       urls AS (
         INSERT INTO subscription_urls (user_id, url_hash, subscription_id, feed_url)
         SELECT $1, a.url_hash, coalesce(a.sid, c.id), a.feed_url
           FROM stamp CROSS JOIN unnest($14::bigint[], $15::uuid[], $16::uuid[], $17::text[]) AS a (sid, slot_guid, url_hash, feed_url)
           LEFT JOIN created c ON c.guid = a.slot_guid)
     SELECT at FROM stamp`,
    values: [
      userId,
      version,
      ...columns(w.created, 'guid', 'feedUrl', 'urlHash', 'guidChanged'),
      ...columns(w.resubscribed, 'id', 'guid', 'feedUrl', 'guidChanged'),
      ...columns(w.earlierGuids, 'sid', 'slotGuid', 'guid'),
      ...columns(w.otherUrls, 'sid', 'slotGuid', 'hash', 'feedUrl'),
    ],
  });
  return r.rows[0]?.at;
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
 *
 * Without `since`, the page's first id is found past `offset` entries of the primary key by an
 * index-only scan, and only the page's own rows are read from the table. With OFFSET on the rows
 * themselves, every skipped record was a table read: for a user whose records were added over time and
 * lie spread across the table, the 20th page of 50 cost a thousand page reads instead of fifty.
 * A since-sync usually finds a few changes through (user_id, changed), and keeps its OFFSET.
 */
export async function listPage(
  db: Queryable,
  userId: number,
  since: Date | undefined,
  limit: number,
  offset: number,
): Promise<ListResult> {
  const changedAfter = since ? 'AND s.changed > $2' : '';
  // Which rows of the user are on the page, and how the ones before it are skipped.
  const [onPage, skip] = since
    ? [changedAfter, 'OFFSET $4']
    : ['AND s.id >= (SELECT k.id FROM subscriptions k WHERE k.user_id = u.id ORDER BY k.id LIMIT 1 OFFSET $4)', ''];
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
          WHERE s.user_id = u.id ${onPage}
          ORDER BY s.id
          LIMIT $3 ${skip}) p ON true
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
  sid: number,
  hash: string,
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
