import { arrayLiteral } from '../db/array-literal';
import type { Queryable } from '../db/pool';
import { ITEM_OF_EPISODE_SQL } from './played';
import { RECORD_OF_PODCAST } from './repo';
import { CURRENT_URL_HASH } from '../subscriptions/service';

// Episode state's SQL: the one read of what the user's actions and favourite say of episodes (stateRows),
// which episodes changed (changedPage), the feeds' items the web page lists with the keys of the user's
// episodes each one is, and the episodes a request names (findEpisodes).

export const STATE_ACTIONS = ['play', 'new', 'download', 'delete', 'favourite'] as const;
export type StateAction = (typeof STATE_ACTIONS)[number];

/** One stored fact of an episode: its latest action of one type (or its favourite), with what names it. */
export type StateRow = {
  episode_hash: string;
  action: StateAction;
  at: Date;
  changed: Date;
  device: string | null;
  position: number | null;
  total: number | null;
  /** On the favourite's row: set or cleared. */
  favourite: boolean | null;
  podcast_url: string;
  episode_url: string;
  episode_guid: string | null;
  podcast_guid: string | null;
  item_guid: string | null;
  title: string | null;
  published_at: Date | null;
  link: string | null;
  duration: number | null;
};

/** A feed's item, and the keys (sync ids) of the user's episodes it is: its enclosure's, and any of the
 * user's actions that name it by guid within its podcast (an enclosure that moved is still the episode). */
export type ItemRow = {
  id: string;
  feed_hash: string;
  guid: string | null;
  title: string | null;
  enclosure_url: string | null;
  enclosure_type: string | null;
  published_at: Date | null;
  duration: number | null;
  link: string | null;
  artwork_url: string | null;
  season: number | null;
  episode: number | null;
  podcast_title: string | null;
  podcast_artwork_url: string | null;
  feed_url: string;
  hashes: string[];
  /** The show notes: read for one item only, when asked for (item()); absent otherwise. */
  notes?: string | null;
};

const ITEM_COLUMNS = `i.id::text AS id, i.feed_hash::text AS feed_hash, i.guid, i.title, i.enclosure_url, i.enclosure_type,
  i.published_at, i.duration, i.link, i.artwork_url, i.season, i.episode, f.title AS podcast_title,
  f.artwork_url AS podcast_artwork_url, f.feed_url,
  ARRAY(SELECT i.enclosure_hash::text WHERE i.enclosure_hash IS NOT NULL
        UNION
        SELECT x.episode_hash::text FROM episode_actions x
         WHERE x.user_id = $1 AND x.episode_guid = i.guid AND x.podcast_hash = i.feed_hash) AS hashes`;

/**
 * Whether the item's feed is the feed of one of the user's records, at the URL the record has now (a
 * feed's episodes are shown to its subscribers only; a record keeps the key of its first URL when it moves).
 */
export const SUBSCRIBER = `i.feed_hash IN (SELECT ${CURRENT_URL_HASH('sub')} FROM subscriptions sub
                                             WHERE sub.user_id = $1 AND sub.deleted IS NULL)`;

/** `%text%` for LIKE, its wildcards taken literally. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, '\\$&')}%`;

/** A page of a feed's items, newest first, whose titles contain `search`; and how many there are. */
export async function feedItems(
  db: Queryable,
  userId: number,
  feedHash: string,
  { search, limit, offset }: { search: string; limit: number; offset: number },
): Promise<{ rows: ItemRow[]; total: number }> {
  const where = `i.feed_hash = $2 AND ($3 = '' OR i.title ILIKE $4) AND ${SUBSCRIBER}`;
  const args = [userId, feedHash, search, containing(search)];
  const [rows, total] = await Promise.all([
    db.query<ItemRow>(
      `SELECT ${ITEM_COLUMNS} FROM feed_items i JOIN feeds f ON f.url_hash = i.feed_hash
        WHERE ${where}
        ORDER BY i.published_at DESC NULLS LAST, i.ord LIMIT $5 OFFSET $6`,
      [...args, limit, offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM feed_items i WHERE ${where}`, args),
  ]);
  return { rows: rows.rows, total: total.rows[0]?.n ?? 0 };
}

/** An episode the user dismissed from New episodes: by its enclosure's key, else its guid within its podcast. */
const DISMISSED = `EXISTS (SELECT 1 FROM episode_dismissals d
                            WHERE d.user_id = $1 AND (d.episode_hash = i.enclosure_hash
                               OR (d.podcast_hash = i.feed_hash AND d.episode_guid = i.guid)))`;

/**
 * A page of the items with an enclosure of every feed the user has a record of, published since `since`,
 * newest first, less those the user dismissed; and how many there are.
 */
export async function newItems(
  db: Queryable,
  userId: number,
  { since, limit, offset }: { since: Date; limit: number; offset: number },
): Promise<{ rows: ItemRow[]; total: number }> {
  const where = `i.published_at >= $2 AND i.enclosure_hash IS NOT NULL AND ${SUBSCRIBER} AND NOT ${DISMISSED}`;
  const [rows, total] = await Promise.all([
    db.query<ItemRow>(
      `SELECT ${ITEM_COLUMNS} FROM feed_items i JOIN feeds f ON f.url_hash = i.feed_hash
        WHERE ${where}
        ORDER BY i.published_at DESC NULLS LAST, i.id DESC LIMIT $3 OFFSET $4`,
      [userId, since, limit, offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM feed_items i WHERE ${where}`, [userId, since]),
  ]);
  return { rows: rows.rows, total: total.rows[0]?.n ?? 0 };
}

/** One item of a feed the user has a record of; its show notes too when asked for (up to 64 Ki characters). */
export async function item(db: Queryable, userId: number, id: string, withNotes = false): Promise<ItemRow | undefined> {
  const r = await db.query<ItemRow>(
    `SELECT ${ITEM_COLUMNS}${withNotes ? ', i.notes' : ''} FROM feed_items i JOIN feeds f ON f.url_hash = i.feed_hash
      WHERE i.id = $2 AND ${SUBSCRIBER}`,
    [userId, id],
  );
  return r.rows[0];
}

/** The items with these ids of feeds the user has a record of (others are left out), in no order. */
export async function itemsWithIds(db: Queryable, userId: number, ids: string[]): Promise<ItemRow[]> {
  const r = await db.query<ItemRow>(
    `SELECT ${ITEM_COLUMNS} FROM feed_items i JOIN feeds f ON f.url_hash = i.feed_hash
      WHERE i.id = ANY($2::bigint[]) AND ${SUBSCRIBER}`,
    [userId, arrayLiteral(ids)],
  );
  return r.rows;
}

/**
 * The items of the user's latest plays (the newest `limit` episodes played), newest play first, each
 * found among the feeds' items by enclosure key, else by guid within its podcast; plays of episodes no
 * feed lists are left out.
 */
export async function recentlyPlayedItems(db: Queryable, userId: number, limit: number): Promise<ItemRow[]> {
  const r = await db.query<ItemRow>(
    `WITH plays AS (
       SELECT a.episode_hash, a.episode_guid, a.podcast_hash, l.at
         FROM episode_latest l JOIN episode_actions a ON a.user_id = l.user_id AND a.id = l.action_id
        WHERE l.user_id = $1 AND l.action = 'play'
        ORDER BY l.at DESC LIMIT $2),
     found AS (
       SELECT DISTINCT ON (item.id) item.id, p.at
         FROM plays p
         CROSS JOIN LATERAL (
           SELECT coalesce(
             (SELECT i.id FROM feed_items i WHERE i.enclosure_hash = p.episode_hash LIMIT 1),
             (SELECT i.id FROM feed_items i
               WHERE i.feed_hash = p.podcast_hash AND i.item_key = p.episode_guid LIMIT 1)
           ) AS id) item
        WHERE item.id IS NOT NULL
        ORDER BY item.id, p.at DESC)
     SELECT ${ITEM_COLUMNS}
       FROM found JOIN feed_items i ON i.id = found.id JOIN feeds f ON f.url_hash = i.feed_hash
      ORDER BY found.at DESC`,
    [userId, limit],
  );
  return r.rows;
}

/** The item a feed lists for the episode `e` (an action, or a favourite): by the enclosure URL's key, else by guid within the podcast. */
const ITEM_OF_EPISODE = `LEFT JOIN LATERAL (${ITEM_OF_EPISODE_SQL(
  { hash: 'e.episode_hash', podcastHash: 'e.podcast_hash', guid: 'e.episode_guid' },
  'i.guid, i.title, i.published_at, i.link, i.duration',
)}) item ON true`;

/**
 * The one read of episode state: of these episodes (sync ids), each latest action of each type and the
 * favourite, with what names the episode and the item its feed lists for it. `stateOf` (state.ts) makes
 * an episode's state of them; nothing else reads episode_latest for state.
 */
export async function stateRows(db: Queryable, userId: number, hashes: string[]): Promise<StateRow[]> {
  if (hashes.length === 0) return [];
  const r = await db.query<StateRow>({
    name: 'episode-state-rows',
    text: `SELECT e.episode_hash::text AS episode_hash, e.action, e.at, e.changed, e.device, e.position, e.total,
                  e.favourite, e.podcast_url, e.episode_url, e.episode_guid, e.podcast_guid,
                  item.guid AS item_guid, item.title, item.published_at, item.link, item.duration
             FROM (SELECT l.episode_hash, l.action, a.at, l.changed, a.device_id AS device, a.position, a.total,
                          NULL::boolean AS favourite, a.podcast_url, a.podcast_hash, a.episode_url, a.episode_guid,
                          s.guid::text AS podcast_guid
                     FROM episode_latest l JOIN episode_actions a ON a.user_id = l.user_id AND a.id = l.action_id
                     LEFT JOIN subscriptions s ON s.user_id = a.user_id AND s.id = a.subscription_id
                    WHERE l.user_id = $1 AND l.episode_hash = ANY($2::uuid[])
                   UNION ALL
                   SELECT f.episode_hash, 'favourite', f.at, f.changed, NULL, NULL, NULL, f.favourite, f.podcast_url,
                          f.podcast_hash, f.enclosure_url, f.episode_guid, s.guid::text
                     FROM episode_favourites f
                     LEFT JOIN subscriptions s ON s.user_id = f.user_id AND s.id = ${RECORD_OF_PODCAST('f.podcast_hash')}
                           AND s.deleted IS NULL
                    WHERE f.user_id = $1 AND f.episode_hash = ANY($2::uuid[])) e
             ${ITEM_OF_EPISODE}`,
    values: [userId, hashes],
  });
  return r.rows;
}

/**
 * The episodes (sync ids) with an action or a favourite stored after `since`, a page of them in the order
 * of the sync id (stable: an episode that changes while a client pages does not move); how many there
 * are; and the read time.
 */
export async function changedPage(
  db: Queryable,
  userId: number,
  q: { since: Date | undefined; limit: number; offset: number },
): Promise<{ readAt: Date; total: number; hashes: string[] }> {
  const r = await db.query<{ read_at: Date; total: number; hashes: string[] }>({
    name: 'episode-changed-page',
    text: `WITH changed AS (
             SELECT episode_hash FROM episode_latest
              WHERE user_id = $1 AND changed > coalesce($2::timestamptz, '-infinity')
             UNION
             SELECT episode_hash FROM episode_favourites
              WHERE user_id = $1 AND changed > coalesce($2::timestamptz, '-infinity'))
           SELECT clock_timestamp() AS read_at, (SELECT count(*)::int FROM changed) AS total,
                  ARRAY(SELECT episode_hash::text FROM changed ORDER BY episode_hash LIMIT $3 OFFSET $4) AS hashes`,
    values: [userId, q.since ?? null, q.limit, q.offset],
  });
  const row = r.rows[0]!;
  return { readAt: row.read_at, total: row.total, hashes: row.hashes };
}

/** What an app names an episode by, to find it among the user's episodes and the feeds' items. */
export type EpisodeKey = {
  /** The sync id an app sent (the key of the enclosure URL the server named the episode by). */
  syncId: string | null;
  enclosureHash: string | null;
  podcastHash: string | null;
  guid: string | null;
};

/** Per key: the user's latest action of that episode (its podcast and enclosure URL) and the feed's item. */
export type FoundEpisode = {
  podcast_url: string | null;
  episode_url: string | null;
  episode_guid: string | null;
  enclosure_url: string | null;
  item_guid: string | null;
  duration: number | null;
};

/**
 * For each key, in order: the episode as the user's actions know it (by its sync id, else its enclosure
 * URL's key, else, when no enclosure URL is given, its guid within the podcast, under any URL its record
 * has had: an episode no feed lists, or one whose enclosure the feed has moved, is the user's by the URL
 * their apps named it by), and its item as a feed lists it.
 */
export async function findEpisodes(db: Queryable, userId: number, keys: EpisodeKey[]): Promise<FoundEpisode[]> {
  if (keys.length === 0) return [];
  const r = await db.query<FoundEpisode & { n: number }>(
    `SELECT k.n::int AS n, known.podcast_url, known.episode_url, known.episode_guid, item.enclosure_url, item.guid AS item_guid,
            item.duration
       FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::text[])
            WITH ORDINALITY AS k(sync_id, enclosure_hash, podcast_hash, guid, n)
       LEFT JOIN LATERAL (
         SELECT x.podcast_url, x.episode_url, x.episode_guid FROM (
           SELECT CASE WHEN l.episode_hash = k.sync_id THEN 0 ELSE 1 END AS rank, l.at,
                  a.podcast_url, a.episode_url, a.episode_guid FROM episode_latest l
             JOIN episode_actions a ON a.user_id = l.user_id AND a.id = l.action_id
            WHERE l.user_id = $1 AND l.episode_hash IN (k.sync_id, k.enclosure_hash)
           UNION ALL
           SELECT 2, a.at, a.podcast_url, a.episode_url, a.episode_guid FROM episode_actions a
            WHERE k.enclosure_hash IS NULL AND a.user_id = $1 AND a.episode_guid = k.guid
              AND (a.podcast_hash = k.podcast_hash OR a.subscription_id = ${RECORD_OF_PODCAST('k.podcast_hash')})) x
          ORDER BY x.rank, x.at DESC LIMIT 1) known ON true
       LEFT JOIN LATERAL (
         SELECT i.enclosure_url, i.guid, i.duration FROM feed_items i
          WHERE i.enclosure_hash IN (k.sync_id, k.enclosure_hash)
             OR (i.feed_hash = k.podcast_hash AND i.item_key = k.guid)
          ORDER BY i.enclosure_hash IN (k.sync_id, k.enclosure_hash) DESC LIMIT 1) item ON true
      ORDER BY k.n`,
    [
      userId,
      arrayLiteral(keys.map((k) => k.syncId)),
      arrayLiteral(keys.map((k) => k.enclosureHash)),
      arrayLiteral(keys.map((k) => k.podcastHash)),
      arrayLiteral(keys.map((k) => k.guid)),
    ],
  );
  return r.rows;
}
