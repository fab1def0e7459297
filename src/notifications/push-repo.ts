import type { Queryable } from '../db/pool';

// Browsers' Web Push subscriptions and the server's VAPID key pair.

export type PushRow = { id: string; endpoint: string; p256dh: string; auth: string; created_at: Date };

/**
 * Adds a browser's subscription with the web session it came in (the same endpoint again: its keys and
 * session replaced) and forgets the person's
 * oldest others beyond `most` in all; returns its id.
 */
export async function addSubscription(
  db: Queryable,
  userId: number,
  s: { endpoint: string; p256dh: string; auth: string; session: number | null },
  most: number,
): Promise<string> {
  const r = await db.query<{ id: string }>(
    `WITH added AS (
       INSERT INTO push_subscriptions (user_id, endpoint, p256dh, auth, session_id) VALUES ($1, $2, $3, $4, $6)
       ON CONFLICT (user_id, endpoint)
         DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth, session_id = excluded.session_id
       RETURNING id),
     dropped AS (
       DELETE FROM push_subscriptions WHERE user_id = $1 AND endpoint <> $2 AND id NOT IN (
         SELECT id FROM push_subscriptions WHERE user_id = $1 AND endpoint <> $2 ORDER BY id DESC LIMIT $5 - 1))
     SELECT id::text FROM added`,
    [userId, s.endpoint, s.p256dh, s.auth, most, s.session],
  );
  return r.rows[0]!.id;
}

export async function subscriptions(db: Queryable, userId: number): Promise<PushRow[]> {
  const r = await db.query<PushRow>(
    `SELECT id::text, endpoint, p256dh, auth, created_at FROM push_subscriptions WHERE user_id = $1 ORDER BY id`,
    [userId],
  );
  return r.rows;
}

export async function subscription(db: Queryable, userId: number, id: string): Promise<PushRow | undefined> {
  const r = await db.query<PushRow>(
    'SELECT id::text, endpoint, p256dh, auth, created_at FROM push_subscriptions WHERE user_id = $1 AND id = $2',
    [userId, id],
  );
  return r.rows[0];
}

/** Removes a subscription by its id or its endpoint; returns whether there was one. */
export async function removeSubscription(
  db: Queryable,
  userId: number,
  by: { id?: string; endpoint?: string },
): Promise<boolean> {
  const r = await db.query('DELETE FROM push_subscriptions WHERE user_id = $1 AND (id = $2::bigint OR endpoint = $3)', [
    userId,
    by.id ?? null,
    by.endpoint ?? null,
  ]);
  return (r.rowCount ?? 0) > 0;
}

export type KeyRow = { public_key: string; private_key: string };

/** Stores a key pair unless there is one; returns the one there is (whichever process made it first). */
export async function keepKeys(db: Queryable, made: KeyRow): Promise<KeyRow> {
  const r = await db.query<KeyRow>(
    `WITH added AS (INSERT INTO vapid_keys (public_key, private_key) VALUES ($1, $2) ON CONFLICT DO NOTHING
                    RETURNING public_key, private_key)
     SELECT public_key, private_key FROM added UNION ALL SELECT public_key, private_key FROM vapid_keys`,
    [made.public_key, made.private_key],
  );
  return r.rows[0]!;
}

export async function keys(db: Queryable): Promise<KeyRow | undefined> {
  const r = await db.query<KeyRow>('SELECT public_key, private_key FROM vapid_keys');
  return r.rows[0];
}

/** Forgets the person's browsers that were added in this web session; how many. */
export async function removeSessionSubscriptions(db: Queryable, userId: number, session: number): Promise<number> {
  const r = await db.query('DELETE FROM push_subscriptions WHERE user_id = $1 AND session_id = $2', [userId, session]);
  return r.rowCount ?? 0;
}
