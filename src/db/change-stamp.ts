import { missingUser } from '../errors';
import type { Queryable } from './pool';

/**
 * The rule for a user's next change stamp, as SQL in an UPDATE of the users row: the current time in whole
 * milliseconds, or 1 ms after the user's previous stamp if the clock has not moved on. It is only ever
 * assigned while the row is locked by the UPDATE that sets it, so writers of one user queue on the row
 * lock, their stamps follow commit order, and a reader that saw last_change = T can never later find a
 * new change stamped at or before T (docs/decisions/sync-stamps.md).
 *
 * The clock is read above a sub-select that locks the row first. An UPDATE computes its new row before it
 * waits for a row lock, and when the holder was a reader (FOR SHARE, which changes nothing) it writes that
 * row as computed: a clock read before the wait would stamp the change earlier than a read that committed
 * while it waited, and a client syncing from that read would miss it. (A locking sub-select computes its
 * own columns before it locks too, hence the second level.)
 *
 * The sub-select locks FOR UPDATE, the strongest lock, which also holds off the foreign-key checks of rows
 * inserted for the user elsewhere (FOR KEY SHARE: a device, a token, the fetcher's note of a user's first
 * look). With FOR NO KEY UPDATE they take the row beside the writer, and a writer that updates the row it
 * locked while one of them holds it could deadlock with the next writer queued for the row (PostgreSQL
 * ends one of them: a 500); test/integration/stamp-deadlock.test.ts.
 */
export const NEXT_STAMP = `(SELECT greatest(date_trunc('milliseconds', clock_timestamp()), locked.last_change + interval '1 millisecond')
     FROM (SELECT last_change FROM users x WHERE x.id = users.id FOR UPDATE) locked)`;

/** Locks the user's row for the rest of the transaction and returns the stamp for its changes. */
export async function takeChangeStamp(tx: Queryable, userId: number): Promise<Date> {
  const r = await tx.query<{ last_change: Date }>(
    `UPDATE users SET last_change = ${NEXT_STAMP} WHERE id = $1 RETURNING last_change`,
    [userId],
  );
  const stamp = r.rows[0]?.last_change;
  if (!stamp) throw missingUser(userId);
  return stamp;
}

/** Serialises with the user's writers without taking a stamp (nothing visible changes yet). */
export async function lockUser(tx: Queryable, userId: number): Promise<void> {
  await tx.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [userId]);
}
