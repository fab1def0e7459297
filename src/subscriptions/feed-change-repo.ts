import type { Queryable } from '../db/pool';

// The feed fetcher's changes to records (table feed_changes): what it changed, from what a feed said.

export type FeedChangeKind = 'moved' | 'guid';

export type FeedChangeRow = {
  id: number;
  subscription_id: number;
  at: Date;
  kind: FeedChangeKind;
  source: string;
  old_value: string;
  new_value: string;
  undone_at: Date | null;
  guid: string;
  feed_url: string;
  deleted: Date | null;
};

export async function addFeedChange(
  tx: Queryable,
  userId: number,
  c: { subscriptionId: number; at: Date; kind: FeedChangeKind; source: string; oldValue: string; newValue: string },
): Promise<void> {
  await tx.query(
    `INSERT INTO feed_changes (user_id, subscription_id, at, kind, source, old_value, new_value)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [userId, c.subscriptionId, c.at, c.kind, c.source, c.oldValue, c.newValue],
  );
}

const COLUMNS = `c.id, c.subscription_id, c.at, c.kind, c.source, c.old_value, c.new_value, c.undone_at, s.guid, s.feed_url, s.deleted`;

/** The user's newest feed changes, with the record's current URL. */
export async function recentFeedChanges(db: Queryable, userId: number, limit: number): Promise<FeedChangeRow[]> {
  const r = await db.query<FeedChangeRow>(
    `SELECT ${COLUMNS} FROM feed_changes c JOIN subscriptions s ON s.user_id = c.user_id AND s.id = c.subscription_id
      WHERE c.user_id = $1 ORDER BY c.at DESC, c.id DESC LIMIT $2`,
    [userId, limit],
  );
  return r.rows;
}

export async function feedChange(db: Queryable, userId: number, id: number): Promise<FeedChangeRow | undefined> {
  const r = await db.query<FeedChangeRow>(
    `SELECT ${COLUMNS} FROM feed_changes c JOIN subscriptions s ON s.user_id = c.user_id AND s.id = c.subscription_id
      WHERE c.user_id = $1 AND c.id = $2`,
    [userId, id],
  );
  return r.rows[0];
}

/** True when the person undid this very move of this record: the fetcher never follows it again. */
export async function moveWasUndone(
  db: Queryable,
  userId: number,
  subscriptionId: number,
  from: string,
  to: string,
): Promise<boolean> {
  const r = await db.query(
    `SELECT 1 FROM feed_changes
      WHERE user_id = $1 AND subscription_id = $2 AND kind = 'moved' AND old_value = $3 AND new_value = $4
        AND undone_at IS NOT NULL LIMIT 1`,
    [userId, subscriptionId, from, to],
  );
  return (r.rowCount ?? 0) > 0;
}

export async function markUndone(tx: Queryable, userId: number, id: number, at: Date): Promise<void> {
  await tx.query('UPDATE feed_changes SET undone_at = $3 WHERE user_id = $1 AND id = $2', [userId, id, at]);
}
