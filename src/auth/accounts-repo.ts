import type { Queryable } from '../db/pool';

// The queries behind the web page's account pages and its administration.

export type AccountRow = { id: number; username: string; is_admin: boolean; has_password: boolean; web_theme: string };

export async function findAccount(db: Queryable, userId: number): Promise<AccountRow | undefined> {
  const r = await db.query<AccountRow>(
    'SELECT id, username, is_admin, password_hash IS NOT NULL AS has_password, web_theme FROM users WHERE id = $1',
    [userId],
  );
  return r.rows[0];
}

export async function setTheme(db: Queryable, userId: number, theme: string): Promise<void> {
  await db.query('UPDATE users SET web_theme = $2 WHERE id = $1', [userId, theme]);
}

export async function setAdmin(db: Queryable, username: string, admin: boolean): Promise<boolean> {
  const r = await db.query('UPDATE users SET is_admin = $2 WHERE username = $1', [username, admin]);
  return r.rowCount === 1;
}

export type AppPasswordRow = { id: number; label: string | null; created_at: Date };

export async function listAppPasswords(db: Queryable, userId: number): Promise<AppPasswordRow[]> {
  const r = await db.query<AppPasswordRow>(
    `SELECT id, label, created_at FROM tokens WHERE user_id = $1 AND kind = 'personal' ORDER BY created_at DESC, id DESC`,
    [userId],
  );
  return r.rows;
}
