import type { Queryable } from '../db/pool';

// The statements of the history retention (EPISODE_HISTORY_RETENTION_DAYS, docs/idle-accounts.md).

/** Up to `limit` user ids after `after`, in order: the retention goes through every user a batch at a time. */
export async function userIdsAfter(db: Queryable, after: number, limit: number): Promise<number[]> {
  const r = await db.query<{ id: number }>('SELECT id FROM users WHERE id > $1 ORDER BY id LIMIT $2', [after, limit]);
  return r.rows.map((x) => x.id);
}

/**
 * Removes up to `limit` of the user's superseded actions stored before `before`: those that are not their
 * episode's latest of that action type (episode_latest, by the action's own time). Each episode's latest
 * play, download, delete and new stay, whatever their age. Returns how many went.
 */
export async function deleteSuperseded(db: Queryable, userId: number, before: Date, limit: number): Promise<number> {
  const r = await db.query(
    `DELETE FROM episode_actions a
      WHERE a.user_id = $1
        AND a.id IN (SELECT x.id FROM episode_actions x
                      WHERE x.user_id = $1 AND x.changed < $2
                        AND NOT EXISTS (SELECT 1 FROM episode_latest l
                                         WHERE l.user_id = x.user_id AND l.episode_hash = x.episode_hash
                                           AND l.action = x.action AND l.action_id = x.id)
                      ORDER BY x.changed, x.id LIMIT $3)`,
    [userId, before, limit],
  );
  return r.rowCount ?? 0;
}
