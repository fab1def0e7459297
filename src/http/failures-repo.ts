import type { Queryable } from '../db/pool';

// The failure counters of src/http/limits.ts, shared by every instance. Times are the processes' clocks
// (kept within a second of each other by NTP), passed in, so that one limiter's arithmetic is one clock's.

export type Window = { refused: number; ends_at: Date };

/** Counts one refusal: a new window of one when there is none (or it ended), else one more in it. */
export async function countRefusal(
  db: Queryable,
  scope: string,
  keyHash: Buffer,
  now: Date,
  newEnd: Date,
): Promise<Window> {
  const r = await db.query<Window>(
    `INSERT INTO auth_failures AS f (scope, key_hash, refused, ends_at) VALUES ($1, $2, 1, $4)
     ON CONFLICT (scope, key_hash) DO UPDATE
        SET refused = CASE WHEN f.ends_at > $3 THEN f.refused + 1 ELSE 1 END,
            ends_at = CASE WHEN f.ends_at > $3 THEN f.ends_at ELSE $4 END
     RETURNING refused, ends_at`,
    [scope, keyHash, now, newEnd],
  );
  return r.rows[0]!;
}

/** The key's window, while it lasts. */
export async function findWindow(
  db: Queryable,
  scope: string,
  keyHash: Buffer,
  now: Date,
): Promise<Window | undefined> {
  const r = await db.query<Window>(
    'SELECT refused, ends_at FROM auth_failures WHERE scope = $1 AND key_hash = $2 AND ends_at > $3',
    [scope, keyHash, now],
  );
  return r.rows[0];
}

/** The keys of the scope with at least `limit` refusals in a window that lasts. */
export async function blockedKeys(
  db: Queryable,
  scope: string,
  limit: number,
  now: Date,
): Promise<{ key_hash: Buffer; ends_at: Date }[]> {
  const r = await db.query<{ key_hash: Buffer; ends_at: Date }>(
    'SELECT key_hash, ends_at FROM auth_failures WHERE scope = $1 AND refused >= $2 AND ends_at > $3',
    [scope, limit, now],
  );
  return r.rows;
}

export async function deleteEndedWindows(db: Queryable): Promise<number> {
  const r = await db.query('DELETE FROM auth_failures WHERE ends_at < now()');
  return r.rowCount ?? 0;
}
