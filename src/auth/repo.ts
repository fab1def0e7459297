import type { Queryable } from '../db/pool';
import type { TokenKind } from './secrets';

export type UserRow = { id: number; username: string; password_hash: string };
export type TokenRow = {
  id: number;
  user_id: number;
  kind: TokenKind;
  token_hash: Buffer;
  family: string | null;
  expires_at: Date | null;
  used_at: Date | null;
};

export async function findUserByName(db: Queryable, username: string): Promise<UserRow | undefined> {
  const r = await db.query<UserRow>('SELECT id, username, password_hash FROM users WHERE username = $1', [username]);
  return r.rows[0];
}

export async function insertUser(db: Queryable, username: string, passwordHash: string): Promise<number> {
  const r = await db.query<{ id: number }>('INSERT INTO users (username, password_hash) VALUES ($1, $2) RETURNING id', [
    username,
    passwordHash,
  ]);
  return r.rows[0]!.id;
}

export async function updatePassword(
  db: Queryable,
  username: string,
  passwordHash: string,
): Promise<number | undefined> {
  const r = await db.query<{ id: number }>('UPDATE users SET password_hash = $2 WHERE username = $1 RETURNING id', [
    username,
    passwordHash,
  ]);
  return r.rows[0]?.id;
}

/** Removes the user and everything of theirs (subscriptions have no foreign key to users). */
export async function deleteUser(db: Queryable, username: string): Promise<boolean> {
  const r = await db.query(
    `WITH u AS (DELETE FROM users WHERE username = $1 RETURNING id),
          s AS (DELETE FROM subscriptions WHERE user_id IN (SELECT id FROM u))
     SELECT count(*) AS n FROM u`,
    [username],
  );
  return r.rows[0]?.n === 1;
}

export async function listUsers(
  db: Queryable,
): Promise<{ id: number; username: string; created_at: Date; subscriptions: number }[]> {
  const r = await db.query<{ id: number; username: string; created_at: Date; subscriptions: number }>(
    `SELECT u.id, u.username, u.created_at,
            (SELECT count(*) FROM subscriptions s WHERE s.user_id = u.id AND s.is_subscribed) AS subscriptions
       FROM users u ORDER BY u.username`,
  );
  return r.rows;
}

export async function insertToken(
  db: Queryable,
  t: { userId: number; kind: TokenKind; hash: Buffer; family?: string; label?: string; expiresAt?: Date },
): Promise<number> {
  const r = await db.query<{ id: number }>(
    `INSERT INTO tokens (user_id, kind, token_hash, family, label, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
    [t.userId, t.kind, t.hash, t.family ?? null, t.label ?? null, t.expiresAt ?? null],
  );
  return r.rows[0]!.id;
}

/** A token that has not expired, found by the hash of its value. */
export async function findLiveToken(db: Queryable, hash: Buffer): Promise<TokenRow | undefined> {
  const r = await db.query<TokenRow>(
    `SELECT id, user_id, kind, token_hash, family, expires_at, used_at FROM tokens
      WHERE token_hash = $1 AND (expires_at IS NULL OR expires_at > now())`,
    [hash],
  );
  return r.rows[0];
}

/** Marks a refresh token used; false when another request used it first (the rotation is atomic). */
export async function useRefreshToken(db: Queryable, id: number): Promise<boolean> {
  const r = await db.query(`UPDATE tokens SET used_at = now() WHERE id = $1 AND kind = 'refresh' AND used_at IS NULL`, [
    id,
  ]);
  return r.rowCount === 1;
}

export async function deleteFamily(db: Queryable, userId: number, family: string): Promise<void> {
  await db.query('DELETE FROM tokens WHERE user_id = $1 AND family = $2', [userId, family]);
}

export async function deleteSessions(db: Queryable, userId: number): Promise<void> {
  await db.query(`DELETE FROM tokens WHERE user_id = $1 AND kind IN ('access', 'refresh')`, [userId]);
}

export async function deletePersonalToken(db: Queryable, id: number): Promise<boolean> {
  const r = await db.query(`DELETE FROM tokens WHERE id = $1 AND kind = 'personal'`, [id]);
  return r.rowCount === 1;
}

export async function deleteExpiredTokens(db: Queryable): Promise<number> {
  const r = await db.query(`DELETE FROM tokens WHERE expires_at < now() - interval '1 day'`);
  return r.rowCount ?? 0;
}

/** Tells every castsync process to drop its cached credentials (src/auth/cache.ts). */
export async function announceCredentialChange(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_notify('castsync_auth', '')`);
}
