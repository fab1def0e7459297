import { arrayLiteral } from '../db/array-literal';
import { NEXT_STAMP } from '../db/change-stamp';
import type { Queryable } from '../db/pool';
import { CURRENT_URL_HASH } from '../subscriptions/service';
import { RECORD_OF_PODCAST } from './repo';

// The favourites' SQL (table episode_favourites: this file is its one writer).

export type FavouriteWrite = {
  episodeHash: string;
  podcastUrl: string;
  podcastHash: string;
  enclosureUrl: string;
  episodeGuid: string | null;
  favourite: boolean;
  at: Date;
};

/**
 * Stores favourites set or cleared, one statement stamped like every change of the user: an episode's row
 * takes a write only when the write's time is later than the row's (the later time wins, whatever order
 * they arrive in). One write per episode.
 */
export async function upsert(db: Queryable, userId: number, rows: FavouriteWrite[]): Promise<void> {
  if (rows.length === 0) return;
  const col = (k: 'episodeHash' | 'podcastUrl' | 'podcastHash' | 'enclosureUrl' | 'episodeGuid') =>
    arrayLiteral(rows.map((r) => r[k]));
  await db.query(
    `WITH stamp AS (UPDATE users SET last_change = ${NEXT_STAMP} WHERE id = $1 RETURNING last_change)
     INSERT INTO episode_favourites AS f
            (user_id, episode_hash, podcast_url, podcast_hash, enclosure_url, episode_guid, favourite, at, changed)
     SELECT $1, x.*, stamp.last_change
       FROM unnest($2::uuid[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::bool[], $8::timestamptz[]) x, stamp
     ON CONFLICT (user_id, episode_hash) DO UPDATE
        SET podcast_url = EXCLUDED.podcast_url, podcast_hash = EXCLUDED.podcast_hash,
            enclosure_url = EXCLUDED.enclosure_url, episode_guid = coalesce(EXCLUDED.episode_guid, f.episode_guid),
            favourite = EXCLUDED.favourite, at = EXCLUDED.at, changed = EXCLUDED.changed
      WHERE f.at < EXCLUDED.at`,
    [
      userId,
      col('episodeHash'),
      col('podcastUrl'),
      col('podcastHash'),
      col('enclosureUrl'),
      col('episodeGuid'),
      arrayLiteral(rows.map((r) => String(r.favourite))),
      arrayLiteral(rows.map((r) => r.at.toISOString())),
    ],
  );
}

/** Of these episodes, the ones the user has as favourites now. */
export async function setOf(db: Queryable, userId: number, hashes: string[]): Promise<Set<string>> {
  const r = await db.query<{ h: string }>(
    `SELECT episode_hash::text AS h FROM episode_favourites
      WHERE user_id = $1 AND episode_hash = ANY($2::uuid[]) AND favourite`,
    [userId, arrayLiteral(hashes)],
  );
  return new Set(r.rows.map((x) => x.h));
}

/** The app's time of the episode's favourite (set or cleared), if it has one. */
export async function timeOf(db: Queryable, userId: number, hash: string): Promise<Date | undefined> {
  const r = await db.query<{ at: Date }>('SELECT at FROM episode_favourites WHERE user_id = $1 AND episode_hash = $2', [
    userId,
    hash,
  ]);
  return r.rows[0]?.at;
}

/** How many favourites the user has. */
export async function count(db: Queryable, userId: number): Promise<number> {
  const r = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM episode_favourites WHERE user_id = $1 AND favourite',
    [userId],
  );
  return r.rows[0]?.n ?? 0;
}

/** A favourite with what the feeds say of its episode (if a feed lists it). */
export type FavouriteRow = {
  episode_hash: string;
  podcast_url: string;
  enclosure_url: string;
  episode_guid: string | null;
  at: Date;
  item_id: string | null;
  title: string | null;
  link: string | null;
  published_at: Date | null;
  podcast_title: string | null;
  artwork_url: string | null;
};

/**
 * The user's favourites, newest set first, each with its item as a feed lists it (by enclosure, else guid),
 * and its podcast under the URL the user's record of it has now (a feed that moved since: the URL moved to).
 */
export async function list(db: Queryable, userId: number, limit: number): Promise<FavouriteRow[]> {
  const r = await db.query<FavouriteRow>(
    `SELECT f.episode_hash::text AS episode_hash, COALESCE(rec.feed_url, f.podcast_url) AS podcast_url,
            f.enclosure_url, f.episode_guid, f.at,
            item.id::text AS item_id, item.title, item.link, item.published_at,
            feed.title AS podcast_title, COALESCE(item.artwork_url, feed.artwork_url) AS artwork_url
       FROM episode_favourites f
       LEFT JOIN subscriptions rec ON rec.user_id = $1 AND rec.id = ${RECORD_OF_PODCAST('f.podcast_hash')}
       LEFT JOIN LATERAL (
         SELECT i.id, i.title, i.link, i.published_at, i.artwork_url FROM feed_items i
          WHERE i.enclosure_hash = f.episode_hash
             OR (i.feed_hash = COALESCE(${CURRENT_URL_HASH('rec')}, f.podcast_hash) AND i.item_key = f.episode_guid)
          ORDER BY i.enclosure_hash = f.episode_hash DESC LIMIT 1) item ON true
       LEFT JOIN feeds feed ON feed.url_hash = COALESCE(${CURRENT_URL_HASH('rec')}, f.podcast_hash)
      WHERE f.user_id = $1 AND f.favourite
      ORDER BY f.at DESC, f.episode_hash LIMIT $2`,
    [userId, limit],
  );
  return r.rows;
}

/** Every favourite row of the user, cleared ones included (the archive). */
export async function all(db: Queryable, userId: number): Promise<(FavouriteWrite & { changed: Date })[]> {
  const r = await db.query<FavouriteWrite & { changed: Date }>(
    `SELECT episode_hash::text AS "episodeHash", podcast_url AS "podcastUrl", podcast_hash::text AS "podcastHash",
            enclosure_url AS "enclosureUrl", episode_guid AS "episodeGuid", favourite, at, changed
       FROM episode_favourites WHERE user_id = $1 ORDER BY at, episode_hash`,
    [userId],
  );
  return r.rows;
}
