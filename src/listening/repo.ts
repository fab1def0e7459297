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
