import type { Queryable } from '../db/pool';
import { SUBSCRIBER } from './state-repo';

// New episodes' dismissals (docs/web.md): the web page's alone, no protocol carries them.

/**
 * Keeps that the user dismissed the item `id` (of a feed they have a record of, with an enclosure): by its
 * enclosure's key, its podcast and guid. Whether there was such an item.
 */
export async function dismiss(db: Queryable, userId: number, id: string): Promise<boolean> {
  const r = await db.query(
    `INSERT INTO episode_dismissals (user_id, episode_hash, podcast_hash, episode_guid, dismissed_at)
     SELECT $1, i.enclosure_hash, i.feed_hash, i.guid, now() FROM feed_items i
      WHERE i.id = $2 AND i.enclosure_hash IS NOT NULL AND ${SUBSCRIBER}
     ON CONFLICT (user_id, episode_hash) DO UPDATE SET dismissed_at = EXCLUDED.dismissed_at,
       podcast_hash = EXCLUDED.podcast_hash, episode_guid = EXCLUDED.episode_guid`,
    [userId, id],
  );
  return (r.rowCount ?? 0) > 0;
}
