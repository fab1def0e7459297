import { arrayLiteral } from '../db/array-literal';
import type { Queryable } from '../db/pool';
import { ITEM_OF_EPISODE_SQL, PLAYED_SQL, RECORD_OF_PODCAST } from '../episodes/service';
import { CURRENT_URL_HASH } from '../subscriptions/service';

// Up next's SQL (tables queue_items and queue_versions: this file is their one writer). Positions are
// 0..n-1 in order; every change runs in a transaction that holds the user's lock (src/queue/service.ts).

export type ItemWrite = {
  episodeHash: string;
  podcastUrl: string;
  podcastHash: string;
  enclosureUrl: string;
  episodeGuid: string | null;
};

export type ItemRow = {
  id: string;
  position: number;
  sync_id: string;
  podcast_url: string;
  enclosure_url: string;
  episode_guid: string | null;
  added: Date;
  podcast_guid: string | null;
  item_id: string | null;
  title: string | null;
  podcast_title: string | null;
  artwork_url: string | null;
};

/**
 * The list in order, each item with its subscription's guid (by any URL the record has had) and what its
 * feed lists for it: the feed at the record's URL now, once the feed moved.
 */
export async function items(db: Queryable, userId: number): Promise<ItemRow[]> {
  const r = await db.query<ItemRow>(
    `SELECT q.id::text AS id, q.position, q.episode_hash::text AS sync_id, q.podcast_url, q.enclosure_url,
            q.episode_guid, q.added, s.guid::text AS podcast_guid, item.id::text AS item_id, item.title,
            feed.title AS podcast_title, COALESCE(item.artwork_url, feed.artwork_url) AS artwork_url
       FROM queue_items q
       LEFT JOIN subscriptions s ON s.user_id = q.user_id AND s.id = ${RECORD_OF_PODCAST('q.podcast_hash')}
             AND s.deleted IS NULL
       LEFT JOIN LATERAL (
         SELECT i.id, i.title, i.artwork_url FROM feed_items i
          WHERE i.enclosure_hash = q.episode_hash
             OR (i.feed_hash = COALESCE(${CURRENT_URL_HASH('s')}, q.podcast_hash) AND i.item_key = q.episode_guid)
          ORDER BY i.enclosure_hash = q.episode_hash DESC LIMIT 1) item ON true
       LEFT JOIN feeds feed ON feed.url_hash = COALESCE(${CURRENT_URL_HASH('s')}, q.podcast_hash)
      WHERE q.user_id = $1
      ORDER BY q.position, q.id`,
    [userId],
  );
  return r.rows;
}

/** The list's version (0 before its first change). */
export async function version(db: Queryable, userId: number): Promise<number> {
  const r = await db.query<{ version: string }>('SELECT version FROM queue_versions WHERE user_id = $1', [userId]);
  return Number(r.rows[0]?.version ?? 0);
}

/** Counts a change of the list. */
export async function bump(tx: Queryable, userId: number): Promise<void> {
  await tx.query(
    `INSERT INTO queue_versions AS v (user_id, version) VALUES ($1, 1)
     ON CONFLICT (user_id) DO UPDATE SET version = v.version + 1`,
    [userId],
  );
}

/**
 * The items whose episode is played by the one played rule (PLAYED_SQL) since the item was added: its
 * latest play reached the end, no later "new" undid it, and that play was stored after the item.
 */
export async function playedItems(db: Queryable, userId: number): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT q.id::text AS id FROM queue_items q
       JOIN episode_latest l ON l.user_id = q.user_id AND l.episode_hash = q.episode_hash AND l.action = 'play'
       JOIN episode_actions a ON a.user_id = l.user_id AND a.id = l.action_id
       LEFT JOIN episode_latest n ON n.user_id = q.user_id AND n.episode_hash = q.episode_hash AND n.action = 'new'
       LEFT JOIN LATERAL (${ITEM_OF_EPISODE_SQL(
         { hash: 'q.episode_hash', podcastHash: 'a.podcast_hash', guid: 'a.episode_guid' },
         'i.duration',
       )}) item ON true
      WHERE q.user_id = $1 AND l.changed > q.added
        AND ${PLAYED_SQL({ position: 'a.position', total: 'a.total', duration: 'item.duration', playAt: 'l.at', newAt: 'n.at' })}`,
    [userId],
  );
  return r.rows.map((x) => x.id);
}

/** Numbers the items 0..n-1 in their order. */
async function renumber(tx: Queryable, userId: number): Promise<void> {
  await tx.query(
    `UPDATE queue_items q SET position = r.n
       FROM (SELECT id, row_number() OVER (ORDER BY position, id)::int - 1 AS n FROM queue_items WHERE user_id = $1) r
      WHERE q.id = r.id AND q.position <> r.n`,
    [userId],
  );
}

/** Removes items by id; how many were there. */
export async function remove(tx: Queryable, userId: number, ids: string[]): Promise<number> {
  const r = await tx.query('DELETE FROM queue_items WHERE user_id = $1 AND id = ANY($2::bigint[])', [
    userId,
    arrayLiteral(ids),
  ]);
  if ((r.rowCount ?? 0) > 0) await renumber(tx, userId);
  return r.rowCount ?? 0;
}

/** How many items the list has. */
export async function count(db: Queryable, userId: number): Promise<number> {
  const r = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM queue_items WHERE user_id = $1', [userId]);
  return r.rows[0]?.n ?? 0;
}

/** The id and position of the episode's item, if the list has it. */
export async function itemOf(
  db: Queryable,
  userId: number,
  episodeHash: string,
): Promise<{ id: string; position: number } | undefined> {
  const r = await db.query<{ id: string; position: number }>(
    'SELECT id::text AS id, position FROM queue_items WHERE user_id = $1 AND episode_hash = $2',
    [userId, episodeHash],
  );
  return r.rows[0];
}

/** The rows of the list's items for these episodes (by sync id), as they were written. */
export async function writesOf(
  db: Queryable,
  userId: number,
  episodeHashes: string[],
): Promise<Map<string, ItemWrite>> {
  if (episodeHashes.length === 0) return new Map();
  const r = await db.query<{ h: string; u: string; ph: string; e: string; g: string | null }>(
    `SELECT episode_hash::text AS h, podcast_url AS u, podcast_hash::text AS ph, enclosure_url AS e, episode_guid AS g
       FROM queue_items WHERE user_id = $1 AND episode_hash = ANY($2::uuid[])`,
    [userId, arrayLiteral(episodeHashes)],
  );
  return new Map(
    r.rows.map((x) => [
      x.h,
      { episodeHash: x.h, podcastUrl: x.u, podcastHash: x.ph, enclosureUrl: x.e, episodeGuid: x.g },
    ]),
  );
}

/** Moves an item to a position (0..n-1), the others making way; false when there is no such item. */
export async function move(tx: Queryable, userId: number, id: string, to: number): Promise<boolean> {
  const r = await tx.query<{ position: number }>('SELECT position FROM queue_items WHERE user_id = $1 AND id = $2', [
    userId,
    id,
  ]);
  const from = r.rows[0]?.position;
  if (from === undefined) return false;
  if (from === to) return true;
  await tx.query(
    `UPDATE queue_items SET position = CASE WHEN id = $2::bigint THEN $4::int
                                            WHEN $3::int < $4::int THEN position - 1 ELSE position + 1 END
      WHERE user_id = $1 AND position BETWEEN least($3::int, $4::int) AND greatest($3::int, $4::int)`,
    [userId, id, from, to],
  );
  return true;
}

/** Inserts an episode at a position (0..n), the others making way; its id. */
export async function insert(tx: Queryable, userId: number, e: ItemWrite, at: number, added: Date): Promise<string> {
  await tx.query('UPDATE queue_items SET position = position + 1 WHERE user_id = $1 AND position >= $2', [userId, at]);
  const r = await tx.query<{ id: string }>(
    `INSERT INTO queue_items (user_id, position, episode_hash, podcast_url, podcast_hash, enclosure_url, episode_guid, added)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id::text AS id`,
    [userId, at, e.episodeHash, e.podcastUrl, e.podcastHash, e.enclosureUrl, e.episodeGuid, added],
  );
  return r.rows[0]!.id;
}

/**
 * Makes the list these episodes in this order: an episode the list had keeps its item (its id and when
 * it was added), the others are added now, and the rest leave.
 */
export async function replace(tx: Queryable, userId: number, episodes: ItemWrite[], added: Date): Promise<void> {
  const col = (k: keyof ItemWrite) => arrayLiteral(episodes.map((e) => e[k]));
  await tx.query('DELETE FROM queue_items WHERE user_id = $1 AND NOT (episode_hash = ANY($2::uuid[]))', [
    userId,
    col('episodeHash'),
  ]);
  await tx.query(
    `INSERT INTO queue_items AS q (user_id, position, episode_hash, podcast_url, podcast_hash, enclosure_url, episode_guid, added)
     SELECT $1, (x.n - 1)::int, x.h, x.u, x.ph, x.e, x.g, $7
       FROM unnest($2::uuid[], $3::text[], $4::uuid[], $5::text[], $6::text[]) WITH ORDINALITY AS x(h, u, ph, e, g, n)
     ON CONFLICT (user_id, episode_hash) DO UPDATE SET position = EXCLUDED.position`,
    [userId, col('episodeHash'), col('podcastUrl'), col('podcastHash'), col('enclosureUrl'), col('episodeGuid'), added],
  );
}

/** The episodes of a podcast (by its URL hashes) that the list has. */
export async function itemsOfPodcast(db: Queryable, userId: number, podcastHashes: string[]): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    'SELECT id::text AS id FROM queue_items WHERE user_id = $1 AND podcast_hash = ANY($2::uuid[]) ORDER BY position',
    [userId, arrayLiteral(podcastHashes)],
  );
  return r.rows.map((x) => x.id);
}

/** Empties the list (its version goes on counting: an ETag read before never matches again). */
export async function deleteAll(tx: Queryable, userId: number): Promise<void> {
  await tx.query('DELETE FROM queue_items WHERE user_id = $1', [userId]);
  await bump(tx, userId);
}
