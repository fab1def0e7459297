import type { Queryable } from '../db/pool';

// The sync endpoint's reads of the user's episodes (their episode actions, written by the episode room, and
// their favourites, all written by the episodes room) and its note of which app install made an episode's latest change.

/** SQL: the change stamps of user $1's episodes (each latest action, each favourite) that pass `filter`. */
const STAMPS = (filter: string) => `SELECT episode_hash, changed FROM episode_latest WHERE user_id = $1 AND ${filter}
   UNION ALL SELECT episode_hash, changed FROM episode_favourites WHERE user_id = $1 AND ${filter}`;

/** SQL: each episode of user $1 changed after $2 (all without it), with its newest change stamp; alias e. */
const CHANGED = `SELECT l.episode_hash, max(l.changed) AS changed
   FROM (${STAMPS('($2::timestamptz IS NULL OR changed > $2)')}) l GROUP BY l.episode_hash`;
/** SQL: not an episode whose newest change was a sync action of client $3 (none: $3 null). */
const NOT_OWN = `($3::uuid IS NULL OR c.client_id IS DISTINCT FROM $3 OR c.stamp <> e.changed)`;
const NOTE = `sync_episode_changes c ON c.user_id = $1 AND c.episode_hash = e.episode_hash`;

export type EpisodeChange = { sync_id: string; changed: Date };

/** Up to `limit` episodes changed after `since`, by their newest change stamp, but `ownClient`'s. */
export async function episodesChangedAfter(
  db: Queryable,
  userId: number,
  q: { since: Date | undefined; ownClient: string | undefined; limit: number },
): Promise<EpisodeChange[]> {
  const r = await db.query<EpisodeChange>({
    name: 'sync-episodes-changed-after',
    text: `SELECT e.episode_hash::text AS sync_id, e.changed FROM (${CHANGED}) e LEFT JOIN ${NOTE}
      WHERE ${NOT_OWN} ORDER BY e.changed, e.episode_hash LIMIT $4`,
    values: [userId, q.since ?? null, q.ownClient ?? null, q.limit],
  });
  return r.rows;
}

/** Every episode whose newest change is at this stamp, but `ownClient`'s. */
export async function episodesChangedAt(
  db: Queryable,
  userId: number,
  q: { at: Date; ownClient: string | undefined },
): Promise<EpisodeChange[]> {
  const r = await db.query<EpisodeChange>(
    `SELECT e.episode_hash::text AS sync_id, e.changed
       FROM (${CHANGED}) e LEFT JOIN ${NOTE}
      WHERE e.changed = $4 AND ${NOT_OWN} ORDER BY e.episode_hash`,
    [userId, new Date(q.at.getTime() - 1), q.ownClient ?? null, q.at],
  );
  return r.rows;
}

/** Notes the app install whose action made the episode's newest change (its stamp as it is now). */
export async function noteEpisode(tx: Queryable, userId: number, syncId: string, clientId: string | null) {
  await tx.query(
    `INSERT INTO sync_episode_changes AS c (user_id, episode_hash, stamp, client_id)
     SELECT $1, $2::uuid, max(changed), $3 FROM (${STAMPS('episode_hash = $2::uuid')}) l
     HAVING max(changed) IS NOT NULL
     ON CONFLICT (user_id, episode_hash) DO UPDATE SET stamp = EXCLUDED.stamp, client_id = EXCLUDED.client_id`,
    [userId, syncId, clientId],
  );
}

/** The newest change stamps of the episodes changed at or before `until` (up to `limit`), newest first. */
export async function episodeStampsUntil(
  db: Queryable,
  userId: number,
  q: { until: Date; ownClient: string | undefined; limit: number },
): Promise<Date[]> {
  const r = await db.query<{ changed: Date }>(
    `SELECT e.changed FROM (SELECT l.episode_hash, max(l.changed) AS changed FROM (${STAMPS('true')}) l
                             GROUP BY l.episode_hash) e
       LEFT JOIN ${NOTE}
      WHERE e.changed <= $2 AND ${NOT_OWN} ORDER BY e.changed DESC LIMIT $4`,
    [userId, q.until, q.ownClient ?? null, q.limit],
  );
  return r.rows.map((x) => x.changed);
}
