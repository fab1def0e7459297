import { arrayLiteral } from '../db/array-literal';
import type { Queryable } from '../db/pool';

// The episode view's SQL: a feed's items joined with the user's latest episode actions, matched by the
// enclosure URL's key, and by guid within the same podcast (an enclosure that moved is still the episode).

export type EpisodeRow = {
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
  feed_url: string;
  position: number | null;
  total: number | null;
  played_at: Date | null;
  device: string | null;
  downloaded_at: Date | null;
  deleted_at: Date | null;
};

const ITEM_COLUMNS = `i.id::text AS id, i.feed_hash::text AS feed_hash, i.guid, i.title, i.enclosure_url, i.enclosure_type,
  i.published_at, i.duration, i.link, i.artwork_url, i.season, i.episode, f.title AS podcast_title, f.feed_url`;

/** The user's latest play, download and delete of item `i` ($1: the user). */
const STATE = `LEFT JOIN LATERAL (
    SELECT (array_agg(a.position ORDER BY a.at DESC, a.id DESC) FILTER (WHERE l.action = 'play'))[1] AS position,
           (array_agg(a.total ORDER BY a.at DESC, a.id DESC) FILTER (WHERE l.action = 'play'))[1] AS total,
           (array_agg(a.device_id ORDER BY a.at DESC, a.id DESC) FILTER (WHERE l.action = 'play'))[1] AS device,
           max(a.at) FILTER (WHERE l.action = 'play') AS played_at,
           max(a.at) FILTER (WHERE l.action = 'download') AS downloaded_at,
           max(a.at) FILTER (WHERE l.action = 'delete') AS deleted_at
      FROM episode_latest l JOIN episode_actions a ON a.user_id = l.user_id AND a.id = l.action_id
     WHERE l.user_id = $1
       AND l.episode_hash IN (SELECT i.enclosure_hash
                              UNION
                              SELECT x.episode_hash FROM episode_actions x
                               WHERE x.user_id = $1 AND x.episode_guid = i.guid AND x.podcast_hash = i.feed_hash)
  ) s ON true`;

const STATE_COLUMNS = 's.position, s.total, s.device, s.played_at, s.downloaded_at, s.deleted_at';

/** Whether the user has a record of the feed (a feed's episodes are shown to its subscribers only). */
const SUBSCRIBER = `EXISTS (SELECT 1 FROM subscriptions sub
                             WHERE sub.user_id = $1 AND sub.url_hash = i.feed_hash AND sub.deleted IS NULL)`;

/** `%text%` for LIKE, its wildcards taken literally. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, '\\$&')}%`;

/** A page of a feed's episodes, newest first, whose titles contain `search`; and how many there are. */
export async function feedEpisodes(
  db: Queryable,
  userId: number,
  feedHash: string,
  { search, limit, offset }: { search: string; limit: number; offset: number },
): Promise<{ rows: EpisodeRow[]; total: number }> {
  const where = `i.feed_hash = $2 AND ($3 = '' OR i.title ILIKE $4) AND ${SUBSCRIBER}`;
  const args = [userId, feedHash, search, containing(search)];
  const [rows, total] = await Promise.all([
    db.query<EpisodeRow>(
      `SELECT ${ITEM_COLUMNS}, ${STATE_COLUMNS}
         FROM feed_items i JOIN feeds f ON f.url_hash = i.feed_hash ${STATE}
        WHERE ${where}
        ORDER BY i.published_at DESC NULLS LAST, i.ord LIMIT $5 OFFSET $6`,
      [...args, limit, offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM feed_items i WHERE ${where}`, args),
  ]);
  return { rows: rows.rows, total: total.rows[0]?.n ?? 0 };
}

/** One episode of a feed the user has a record of. */
export async function episode(db: Queryable, userId: number, id: string): Promise<EpisodeRow | undefined> {
  const r = await db.query<EpisodeRow>(
    `SELECT ${ITEM_COLUMNS}, ${STATE_COLUMNS}
       FROM feed_items i JOIN feeds f ON f.url_hash = i.feed_hash ${STATE}
      WHERE i.id = $2 AND ${SUBSCRIBER}`,
    [userId, id],
  );
  return r.rows[0];
}

/**
 * The episodes of the user's latest plays (the newest `limit` episodes played), newest first, each found
 * among the feeds' items by enclosure key, else by guid within its podcast; plays of episodes no feed
 * lists are left out.
 */
export async function recentlyPlayed(db: Queryable, userId: number, limit: number): Promise<EpisodeRow[]> {
  const r = await db.query<EpisodeRow>(
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
     SELECT ${ITEM_COLUMNS}, ${STATE_COLUMNS}
       FROM found JOIN feed_items i ON i.id = found.id JOIN feeds f ON f.url_hash = i.feed_hash ${STATE}
      ORDER BY found.at DESC`,
    [userId, limit],
  );
  return r.rows;
}

export type ActionName = 'download' | 'play' | 'delete' | 'new';

/**
 * One episode's latest action of one type, with the item its feed lists for it, if any, and the user's
 * favourite of it; for an episode with a favourite and no action, one row without an action, named as
 * the favourite names it.
 */
export type LatestRow = {
  episode_hash: string;
  action: ActionName | null;
  podcast_url: string;
  episode_url: string;
  episode_guid: string | null;
  at: Date;
  position: number | null;
  total: number | null;
  podcast_guid: string | null;
  item_guid: string | null;
  title: string | null;
  published_at: Date | null;
  link: string | null;
  duration: number | null;
  favourite: boolean | null;
  favourite_at: Date | null;
};

/** The item a feed lists for the episode `e` (an action, or a favourite): by the enclosure URL's key, else by guid within the podcast. */
const ITEM_OF_EPISODE = `LEFT JOIN LATERAL (
    SELECT i.guid, i.title, i.published_at, i.link, i.duration FROM feed_items i
     WHERE i.enclosure_hash = e.episode_hash
        OR (i.feed_hash = e.podcast_hash AND i.item_key = e.episode_guid)
     ORDER BY i.enclosure_hash = e.episode_hash DESC LIMIT 1) item ON true`;

/**
 * The episodes (by the key of the enclosure URL the apps sent) with an action or a favourite stored after
 * `since`, a page of them in the order of that key (stable: an episode that changes while a client pages
 * does not move), each as its latest action of each type; how many such episodes there are; and the read
 * time.
 */
export async function latestActions(
  db: Queryable,
  userId: number,
  since: Date | undefined,
  limit: number,
  offset: number,
): Promise<{ readAt: Date; total: number; rows: LatestRow[] }> {
  const r = await db.query<LatestRow & { read_at: Date; episodes: number }>(
    `WITH changed AS (
       SELECT episode_hash FROM episode_latest
        WHERE user_id = $1 AND changed > coalesce($2::timestamptz, '-infinity')
       UNION
       SELECT episode_hash FROM episode_favourites
        WHERE user_id = $1 AND changed > coalesce($2::timestamptz, '-infinity')),
     page AS (SELECT episode_hash FROM changed ORDER BY episode_hash LIMIT $3 OFFSET $4)
     SELECT clock_timestamp() AS read_at, (SELECT count(*)::int FROM changed) AS episodes, x.*
       FROM (VALUES (1)) one
       LEFT JOIN LATERAL (
         SELECT p.episode_hash::text AS episode_hash, l.action, e.podcast_url, e.episode_url, e.episode_guid,
                coalesce(a.at, f.at) AS at, a.position, a.total, coalesce(s.guid, fs.guid)::text AS podcast_guid,
                item.guid AS item_guid, item.title, item.published_at, item.link, item.duration,
                f.favourite, f.at AS favourite_at
           FROM page p
           LEFT JOIN episode_latest l ON l.user_id = $1 AND l.episode_hash = p.episode_hash
           LEFT JOIN episode_actions a ON a.user_id = l.user_id AND a.id = l.action_id
           LEFT JOIN episode_favourites f ON f.user_id = $1 AND f.episode_hash = p.episode_hash
           CROSS JOIN LATERAL (
             SELECT coalesce(a.podcast_url, f.podcast_url) AS podcast_url,
                    coalesce(a.podcast_hash, f.podcast_hash) AS podcast_hash,
                    coalesce(a.episode_url, f.enclosure_url) AS episode_url,
                    coalesce(a.episode_guid, f.episode_guid) AS episode_guid, p.episode_hash) e
           LEFT JOIN subscriptions s ON s.user_id = a.user_id AND s.id = a.subscription_id
           LEFT JOIN subscriptions fs ON a.id IS NULL AND fs.user_id = $1 AND fs.url_hash = f.podcast_hash
                 AND fs.deleted IS NULL
           ${ITEM_OF_EPISODE}
          ORDER BY p.episode_hash) x ON true`,
    [userId, since ?? null, limit, offset],
  );
  const first = r.rows[0];
  return {
    readAt: first?.read_at ?? new Date(),
    total: first?.episodes ?? 0,
    rows: r.rows.filter((x) => x.episode_hash !== null),
  };
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

/** For each key, in order: the episode as the user's actions know it, and its item as a feed lists it. */
export async function findEpisodes(db: Queryable, userId: number, keys: EpisodeKey[]): Promise<FoundEpisode[]> {
  if (keys.length === 0) return [];
  const r = await db.query<FoundEpisode & { n: number }>(
    `SELECT k.n::int AS n, known.podcast_url, known.episode_url, known.episode_guid, item.enclosure_url, item.guid AS item_guid,
            item.duration
       FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::text[])
            WITH ORDINALITY AS k(sync_id, enclosure_hash, podcast_hash, guid, n)
       LEFT JOIN LATERAL (
         SELECT a.podcast_url, a.episode_url, a.episode_guid FROM episode_latest l
           JOIN episode_actions a ON a.user_id = l.user_id AND a.id = l.action_id
          WHERE l.user_id = $1 AND l.episode_hash IN (k.sync_id, k.enclosure_hash)
          ORDER BY l.episode_hash = k.sync_id DESC, l.at DESC LIMIT 1) known ON true
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
