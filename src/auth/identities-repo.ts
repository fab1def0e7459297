import type { Queryable } from '../db/pool';

// The links between users and the people OpenID providers know (by the provider's subject).

export async function findLinkedUser(db: Queryable, issuer: string, subject: string): Promise<number | undefined> {
  const r = await db.query<{ user_id: number }>(
    'SELECT user_id FROM user_identities WHERE issuer = $1 AND subject = $2',
    [issuer, subject],
  );
  return r.rows[0]?.user_id;
}

/** The subject the user is linked to at this provider, if any. */
export async function linkedSubject(db: Queryable, userId: number, issuer: string): Promise<string | undefined> {
  const r = await db.query<{ subject: string }>(
    'SELECT subject FROM user_identities WHERE user_id = $1 AND issuer = $2',
    [userId, issuer],
  );
  return r.rows[0]?.subject;
}

/**
 * Links the user to the person; false when a sign-in at the same moment linked the user to another person,
 * or the person to another user (a second sign-in of the same person, linking the same way, is true).
 */
export async function link(db: Queryable, userId: number, issuer: string, subject: string): Promise<boolean> {
  const made = await db.query(
    'INSERT INTO user_identities (issuer, subject, user_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    [issuer, subject, userId],
  );
  if (made.rowCount === 1) return true;
  // The conflicting link, committed by the other sign-in, is seen by this new statement.
  return (await findLinkedUser(db, issuer, subject)) === userId;
}

/** The user of this name, created without a password if there is none: its id. */
export async function ensureUser(db: Queryable, username: string): Promise<number> {
  const r = await db.query<{ id: number }>(
    `WITH made AS (INSERT INTO users (username, password_hash) VALUES ($1, NULL)
                   ON CONFLICT (username) DO NOTHING RETURNING id)
     SELECT id FROM made UNION ALL SELECT id FROM users WHERE username = $1`,
    [username],
  );
  return r.rows[0]!.id;
}

export async function setAdmin(db: Queryable, userId: number, admin: boolean): Promise<void> {
  await db.query('UPDATE users SET is_admin = $2 WHERE id = $1 AND is_admin <> $2', [userId, admin]);
}
