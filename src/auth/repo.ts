import type { Queryable } from '../db/pool';
import { CREDENTIALS_CHANNEL } from './cache';
import type { TokenKind } from './secrets';

/** A user; `password_hash` is null for a user who signs in only with single sign-on. */
export type UserRow = { id: number; username: string; password_hash: string | null };
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

export async function insertUser(
  db: Queryable,
  username: string,
  passwordHash: string | null,
  admin = false,
): Promise<number> {
  const r = await db.query<{ id: number }>(
    'INSERT INTO users (username, password_hash, is_admin) VALUES ($1, $2, $3) RETURNING id',
    [username, passwordHash, admin],
  );
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

/** Removes the user and everything of theirs (subscriptions have no foreign key to users; the rest cascade). */
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
): Promise<{ id: number; username: string; is_admin: boolean; created_at: Date; subscriptions: number }[]> {
  const r = await db.query<{
    id: number;
    username: string;
    is_admin: boolean;
    created_at: Date;
    subscriptions: number;
  }>(
    `SELECT u.id, u.username, u.is_admin, u.created_at,
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

/**
 * Inserts a gpodder session that names the user's app password with the digest `appPasswordHash`, and is
 * deleted with it; false (nothing inserted) when the user has no such app password.
 */
export async function insertSessionOfAppPassword(
  db: Queryable,
  t: { userId: number; hash: Buffer; label?: string; expiresAt: Date },
  appPasswordHash: Buffer,
): Promise<boolean> {
  const r = await db.query(
    `INSERT INTO tokens (user_id, kind, token_hash, label, expires_at, app_password_id)
     SELECT user_id, 'session', $2, $3, $4, id FROM tokens
      WHERE token_hash = $5 AND kind = 'personal' AND user_id = $1`,
    [t.userId, t.hash, t.label ?? null, t.expiresAt, appPasswordHash],
  );
  return r.rowCount === 1;
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

/** Deletes the user's tokens of these kinds, except the one with the digest `keepHash` (if given). */
export async function deleteTokensOfKinds(
  db: Queryable,
  userId: number,
  kinds: TokenKind[],
  keepHash?: Buffer,
): Promise<void> {
  await db.query(
    'DELETE FROM tokens WHERE user_id = $1 AND kind = ANY ($2::text[]) AND token_hash IS DISTINCT FROM $3',
    [userId, kinds, keepHash ?? null],
  );
}

/** Forgets the user's login flows: an approved one no app has collected would become an app password. */
export async function deleteLoginFlowsOf(db: Queryable, userId: number): Promise<void> {
  await db.query('DELETE FROM login_flows WHERE user_id = $1', [userId]);
}

export async function deleteAppPassword(db: Queryable, id: number): Promise<boolean> {
  const r = await db.query(`DELETE FROM tokens WHERE id = $1 AND kind = 'personal'`, [id]);
  return r.rowCount === 1;
}

export async function deleteExpiredTokens(db: Queryable): Promise<number> {
  const r = await db.query(`DELETE FROM tokens WHERE expires_at < now() - interval '1 day'`);
  return r.rowCount ?? 0;
}

/** Tells every castsync process to drop its cached credentials (src/auth/cache.ts). */
export async function announceCredentialChange(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_notify($1, '')`, [CREDENTIALS_CHANNEL]);
}

export async function findUsername(db: Queryable, userId: number): Promise<string | undefined> {
  const r = await db.query<{ username: string }>('SELECT username FROM users WHERE id = $1', [userId]);
  return r.rows[0]?.username;
}

export async function deleteToken(db: Queryable, userId: number, id: number, kinds: TokenKind[]): Promise<boolean> {
  const r = await db.query('DELETE FROM tokens WHERE user_id = $1 AND id = $2 AND kind = ANY ($3::text[])', [
    userId,
    id,
    kinds,
  ]);
  return r.rowCount === 1;
}

export async function deleteTokenByHash(db: Queryable, hash: Buffer, kind: TokenKind): Promise<void> {
  await db.query('DELETE FROM tokens WHERE token_hash = $1 AND kind = $2', [hash, kind]);
}

export type SessionRow = {
  id: number;
  kind: TokenKind;
  label: string | null;
  created_at: Date;
  expires_at: Date | null;
};

/** The user's live sessions: gpodder sessions, and one entry per login (its unused refresh token). */
export async function listSessions(db: Queryable, userId: number): Promise<SessionRow[]> {
  const r = await db.query<SessionRow>(
    `SELECT id, kind, label, created_at, expires_at FROM tokens
      WHERE user_id = $1 AND (kind IN ('session', 'web') OR (kind = 'refresh' AND used_at IS NULL))
        AND (expires_at IS NULL OR expires_at > now())
      ORDER BY created_at DESC, id DESC`,
    [userId],
  );
  return r.rows;
}

export async function findToken(db: Queryable, userId: number, id: number): Promise<TokenRow | undefined> {
  const r = await db.query<TokenRow>(
    'SELECT id, user_id, kind, token_hash, family, expires_at, used_at FROM tokens WHERE user_id = $1 AND id = $2',
    [userId, id],
  );
  return r.rows[0];
}

/** Keeps each user's newest `keep` gpodder sessions (clients that keep no cookie make one per sync). */
export async function trimSessions(db: Queryable, keep: number): Promise<number> {
  const r = await db.query(
    `DELETE FROM tokens t USING (
       SELECT id, row_number() OVER (PARTITION BY user_id ORDER BY created_at DESC, id DESC) AS n
         FROM tokens WHERE kind = 'session') old
      WHERE t.id = old.id AND old.n > $1`,
    [keep],
  );
  return r.rowCount ?? 0;
}

export async function insertLoginFlow(
  db: Queryable,
  pollHash: Buffer,
  codeHash: Buffer,
  appName: string,
): Promise<void> {
  await db.query('INSERT INTO login_flows (poll_token_hash, code_hash, app_name) VALUES ($1, $2, $3)', [
    pollHash,
    codeHash,
    appName,
  ]);
}

/** Approves a live, unapproved flow for the user; false when there is no such flow. */
export async function approveLoginFlow(
  db: Queryable,
  codeHash: Buffer,
  userId: number,
  ttlSeconds: number,
): Promise<boolean> {
  const r = await db.query(
    `UPDATE login_flows SET user_id = $2, approved_at = now()
      WHERE code_hash = $1 AND approved_at IS NULL AND created_at > now() - make_interval(secs => $3)`,
    [codeHash, userId, ttlSeconds],
  );
  return r.rowCount === 1;
}

/** The app name of a live, unapproved flow. */
export async function findPendingLoginFlow(
  db: Queryable,
  codeHash: Buffer,
  ttlSeconds: number,
): Promise<string | undefined> {
  const r = await db.query<{ app_name: string }>(
    `SELECT app_name FROM login_flows
      WHERE code_hash = $1 AND approved_at IS NULL AND created_at > now() - make_interval(secs => $2)`,
    [codeHash, ttlSeconds],
  );
  return r.rows[0]?.app_name;
}

/** Uses up an approved, live flow: its user and app name, once. */
export async function useLoginFlow(
  db: Queryable,
  pollHash: Buffer,
  ttlSeconds: number,
): Promise<{ user_id: number; app_name: string; username: string } | undefined> {
  const r = await db.query<{ user_id: number; app_name: string; username: string }>(
    `UPDATE login_flows f SET used_at = now() FROM users u
      WHERE f.poll_token_hash = $1 AND f.approved_at IS NOT NULL AND f.used_at IS NULL AND u.id = f.user_id
        AND f.created_at > now() - make_interval(secs => $2)
      RETURNING f.user_id, f.app_name, u.username`,
    [pollHash, ttlSeconds],
  );
  return r.rows[0];
}

export async function deleteOldLoginFlows(db: Queryable, ttlSeconds: number): Promise<number> {
  const r = await db.query(`DELETE FROM login_flows WHERE created_at < now() - make_interval(secs => $1)`, [
    ttlSeconds,
  ]);
  return r.rowCount ?? 0;
}
