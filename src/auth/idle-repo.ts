import type { Queryable } from '../db/pool';

// The queries of idle accounts (docs/idle-accounts.md): when a user was last active, and the archived
// accounts that stay behind when their users are removed.

/**
 * SQL: when the user of row `u` was last active: the account's creation, its last change (any write of
 * its data: a sync, the web page, an import, a feed the fetcher followed to its new address), the last
 * request one of its credentials signed (noted hourly), and its newest token (every sign-in makes one:
 * the web page's, a /v1 login, a gpodder session, an app password).
 */
const LAST_ACTIVE = (u: string) => `greatest(${u}.created_at, ${u}.last_change,
    (SELECT a.seen_at FROM user_activity a WHERE a.user_id = ${u}.id),
    (SELECT max(t.created_at) FROM tokens t WHERE t.user_id = ${u}.id))`;

/** Notes that the user was seen now, unless that was noted within the hour. */
export async function noteSeen(db: Queryable, userId: number): Promise<void> {
  await db.query(
    `INSERT INTO user_activity (user_id, seen_at) VALUES ($1, now())
     ON CONFLICT (user_id) DO UPDATE SET seen_at = excluded.seen_at
      WHERE user_activity.seen_at < excluded.seen_at - interval '1 hour'`,
    [userId],
  );
}

export type IdleRow = { id: number; username: string; last_change: Date; last_active: Date };

/** The users last active before `before`, by name; not one whose restore is under way (still archived). */
export async function idleUsers(db: Queryable, before: Date): Promise<IdleRow[]> {
  const r = await db.query<IdleRow>(
    `SELECT id, username, last_change, last_active
       FROM (SELECT u.id, u.username, u.last_change, ${LAST_ACTIVE('u')} AS last_active FROM users u) x
      WHERE last_active < $1 AND NOT EXISTS (SELECT 1 FROM archived_accounts a WHERE a.username = x.username)
      ORDER BY username`,
    [before],
  );
  return r.rows;
}

/**
 * Removes the user and everything of theirs, leaving their archived account (with their archive, its
 * file's copy if any, their password, role, app passwords and identity links), if they are still as the
 * archive found them: no change since `lastChange` and no activity since `before`. Locks the user's row
 * first, so a write under way is waited for and then seen. False when the user changed, was active, is
 * gone, or already has an archived account.
 */
export async function archiveUser(
  db: Queryable,
  username: string,
  still: { lastChange: Date; before: Date },
  kept: { archive: Buffer; file: string | null },
): Promise<boolean> {
  const r = await db.query<{ n: number }>(
    `WITH locked AS (SELECT id FROM users WHERE username = $1 AND last_change = $2 FOR UPDATE),
          idle AS (SELECT u.id, u.username, u.password_hash, u.is_admin, u.created_at, ${LAST_ACTIVE('u')} AS last_active
                     FROM users u JOIN locked ON locked.id = u.id),
          kept AS (
            INSERT INTO archived_accounts (username, password_hash, is_admin, created_at, last_active, file, archive, identities)
            SELECT username, password_hash, is_admin, created_at, last_active, $4, $5,
                   coalesce((SELECT jsonb_agg(jsonb_build_object('issuer', i.issuer, 'subject', i.subject))
                               FROM user_identities i WHERE i.user_id = idle.id), '[]')
              FROM idle WHERE last_active < $3
            ON CONFLICT (username) DO NOTHING
            RETURNING username),
          apps AS (
            INSERT INTO archived_app_passwords (token_hash, username, label, created_at)
            SELECT t.token_hash, kept.username, t.label, t.created_at
              FROM kept JOIN idle ON true JOIN tokens t ON t.user_id = idle.id AND t.kind = 'personal'),
          gone AS (DELETE FROM users WHERE id IN (SELECT idle.id FROM idle JOIN kept ON true) RETURNING id),
          s AS (DELETE FROM subscriptions WHERE user_id IN (SELECT id FROM gone))
     SELECT count(*)::int AS n FROM gone`,
    [username, still.lastChange, still.before, kept.file, kept.archive],
  );
  return r.rows[0]?.n === 1;
}

export type ArchivedRow = {
  username: string;
  password_hash: string | null;
  archived_at: Date;
  last_active: Date;
  file: string | null;
  in_database: boolean;
};

const ARCHIVED = 'username, password_hash, archived_at, last_active, file, archive IS NOT NULL AS in_database';

export async function findArchived(db: Queryable, username: string): Promise<ArchivedRow | undefined> {
  const r = await db.query<ArchivedRow>(`SELECT ${ARCHIVED} FROM archived_accounts WHERE username = $1`, [username]);
  return r.rows[0];
}

/** The archived account linked to this person at this identity provider, if any. */
export async function findArchivedIdentity(
  db: Queryable,
  issuer: string,
  subject: string,
): Promise<{ username: string; archived_at: Date } | undefined> {
  const r = await db.query<{ username: string; archived_at: Date }>(
    `SELECT username, archived_at FROM archived_accounts
      WHERE identities @> jsonb_build_array(jsonb_build_object('issuer', $1::text, 'subject', $2::text))`,
    [issuer, subject],
  );
  return r.rows[0];
}

/** The archive an archived account keeps in the database (gzip-compressed), if it keeps one. */
export async function storedArchive(db: Queryable, username: string): Promise<Buffer | undefined> {
  const r = await db.query<{ archive: Buffer | null }>('SELECT archive FROM archived_accounts WHERE username = $1', [
    username,
  ]);
  return r.rows[0]?.archive ?? undefined;
}

/** The archived account an app password (by its digest) belonged to. */
export async function findArchivedAppPassword(
  db: Queryable,
  hash: Buffer,
): Promise<{ username: string; archived_at: Date } | undefined> {
  const r = await db.query<{ username: string; archived_at: Date }>(
    `SELECT a.username, a.archived_at FROM archived_app_passwords p JOIN archived_accounts a USING (username)
      WHERE p.token_hash = $1`,
    [hash],
  );
  return r.rows[0];
}

export async function listArchived(db: Queryable): Promise<ArchivedRow[]> {
  const r = await db.query<ArchivedRow>(`SELECT ${ARCHIVED} FROM archived_accounts ORDER BY username`);
  return r.rows;
}

/**
 * Makes the archived account's user again, as it was (password, role, creation time, app passwords,
 * identity links); the archived account stays until the restore is done. Nothing when there is no such
 * archived account or the user exists already.
 */
export async function reviveUser(
  db: Queryable,
  username: string,
): Promise<{ id: number; has_password: boolean; app_passwords: number } | undefined> {
  const r = await db.query<{ id: number; has_password: boolean; app_passwords: number }>(
    `WITH t AS (SELECT username, password_hash, is_admin, created_at, identities FROM archived_accounts WHERE username = $1),
          made AS (INSERT INTO users (username, password_hash, is_admin, created_at)
                   SELECT username, password_hash, is_admin, created_at FROM t
                   ON CONFLICT (username) DO NOTHING RETURNING id),
          apps AS (INSERT INTO tokens (user_id, kind, token_hash, label, created_at)
                   SELECT made.id, 'personal', p.token_hash, p.label, p.created_at
                     FROM made CROSS JOIN archived_app_passwords p WHERE p.username = $1
                   ON CONFLICT DO NOTHING RETURNING 1),
          links AS (INSERT INTO user_identities (issuer, subject, user_id)
                    SELECT x ->> 'issuer', x ->> 'subject', made.id
                      FROM made CROSS JOIN t CROSS JOIN jsonb_array_elements(t.identities) x
                    ON CONFLICT DO NOTHING)
     SELECT made.id, t.password_hash IS NOT NULL AS has_password, (SELECT count(*) FROM apps)::int AS app_passwords
       FROM made CROSS JOIN t`,
    [username],
  );
  return r.rows[0];
}

/** Forgets an archived account (its app passwords with it); false when there is none. */
export async function deleteArchived(db: Queryable, username: string): Promise<boolean> {
  const r = await db.query('DELETE FROM archived_accounts WHERE username = $1', [username]);
  return r.rowCount === 1;
}
