import type { Queryable } from '../db/pool';

export type DeletionStatus = 'PENDING' | 'SUCCESS' | 'FAILURE';
export type DeletionRow = {
  id: number;
  user_id: number;
  subscription_id: number;
  status: DeletionStatus;
  message: string;
};

const COLUMNS = 'id, user_id, subscription_id, status, message';

export async function findPending(
  db: Queryable,
  userId: number,
  subscriptionId: number,
): Promise<DeletionRow | undefined> {
  const r = await db.query<DeletionRow>(
    `SELECT ${COLUMNS} FROM deletions WHERE user_id = $1 AND subscription_id = $2 AND status = 'PENDING' ORDER BY id LIMIT 1`,
    [userId, subscriptionId],
  );
  return r.rows[0];
}

export async function insertDeletion(
  db: Queryable,
  userId: number,
  subscriptionId: number,
  message: string,
): Promise<DeletionRow> {
  const r = await db.query<DeletionRow>(
    `INSERT INTO deletions (user_id, subscription_id, message) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
    [userId, subscriptionId, message],
  );
  return r.rows[0]!;
}

export async function countPending(db: Queryable): Promise<number> {
  const r = await db.query<{ n: number }>(`SELECT count(*) AS n FROM deletions WHERE status = 'PENDING'`);
  return r.rows[0]?.n ?? 0;
}

export async function findDeletion(db: Queryable, userId: number, id: number): Promise<DeletionRow | undefined> {
  const r = await db.query<DeletionRow>(`SELECT ${COLUMNS} FROM deletions WHERE user_id = $1 AND id = $2`, [
    userId,
    id,
  ]);
  return r.rows[0];
}

export async function lockDeletion(db: Queryable, id: number): Promise<DeletionRow | undefined> {
  const r = await db.query<DeletionRow>(`SELECT ${COLUMNS} FROM deletions WHERE id = $1 FOR UPDATE`, [id]);
  return r.rows[0];
}

export async function finishDeletion(
  db: Queryable,
  id: number,
  status: 'SUCCESS' | 'FAILURE',
  message: string,
): Promise<void> {
  await db.query(
    `UPDATE deletions SET status = $2, message = $3, finished_at = now() WHERE id = $1 AND status = 'PENDING'`,
    [id, status, message],
  );
}

/** Removes every deletion request of the user (their records are gone). */
export async function deleteAllRequests(tx: Queryable, userId: number): Promise<void> {
  await tx.query('DELETE FROM deletions WHERE user_id = $1', [userId]);
}
