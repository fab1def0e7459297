import type { Queryable } from '../db/pool';

export type ImportState = 'queued' | 'running' | 'done' | 'failed';

export type ImportRow = {
  id: number;
  user_id: number;
  source: 'gpodder' | 'nextcloud' | 'archive' | 'gpodder-archive';
  server_url: string | null;
  remote_user: string | null;
  dry_run: boolean;
  secret: string | null;
  state: ImportState;
  progress: string;
  runs: number;
  summary: unknown;
  error: string | null;
  created_at: Date;
  updated_at: Date;
};

export async function insertImport(
  tx: Queryable,
  userId: number,
  row: {
    source: ImportRow['source'];
    serverUrl: string | null;
    remoteUser: string | null;
    dryRun: boolean;
    secret: string;
  },
): Promise<number> {
  const r = await tx.query<{ id: number }>(
    `INSERT INTO imports (user_id, source, server_url, remote_user, dry_run, secret)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
    [userId, row.source, row.serverUrl, row.remoteUser, row.dryRun, row.secret],
  );
  return r.rows[0]!.id;
}

/** Marks an import as begun by a job (one more run) and returns it; undefined if it ended already or is gone. */
export async function begin(db: Queryable, id: number): Promise<ImportRow | undefined> {
  const r = await db.query<ImportRow>(
    `UPDATE imports SET state = 'running', runs = runs + 1, updated_at = now()
      WHERE id = $1 AND state IN ('queued', 'running') RETURNING *`,
    [id],
  );
  return r.rows[0];
}

export async function setProgress(db: Queryable, id: number, progress: string): Promise<void> {
  await db.query(`UPDATE imports SET progress = $2, updated_at = now() WHERE id = $1 AND state = 'running'`, [
    id,
    progress,
  ]);
}

/** Ends an import, done or failed; the secret goes, and the uploaded file. */
export async function finish(
  db: Queryable,
  id: number,
  end: { state: 'done'; summary: unknown } | { state: 'failed'; error: string },
): Promise<void> {
  await db.query(
    `WITH upload AS (
       DELETE FROM import_uploads WHERE (user_id, import_id) IN (SELECT user_id, id FROM imports WHERE id = $1)
     )
     UPDATE imports SET state = $2, summary = $3, error = $4, secret = NULL, progress = '', updated_at = now()
      WHERE id = $1`,
    [
      id,
      end.state,
      end.state === 'done' ? JSON.stringify(end.summary) : null,
      end.state === 'failed' ? end.error : null,
    ],
  );
}

/** The user's newest imports, without their secrets. */
export async function listImports(db: Queryable, userId: number, limit: number): Promise<Omit<ImportRow, 'secret'>[]> {
  const r = await db.query<Omit<ImportRow, 'secret'>>(
    `SELECT id, user_id, source, server_url, remote_user, dry_run, state, progress, runs, summary, error, created_at, updated_at
       FROM imports WHERE user_id = $1 ORDER BY id DESC LIMIT $2`,
    [userId, limit],
  );
  return r.rows;
}

/** One piece of an import's uploaded file. */
export async function insertUploadPiece(
  tx: Queryable,
  userId: number,
  importId: number,
  seq: number,
  bytes: Uint8Array,
): Promise<void> {
  await tx.query(`INSERT INTO import_uploads (user_id, import_id, seq, bytes) VALUES ($1, $2, $3, $4)`, [
    userId,
    importId,
    seq,
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  ]);
}

/** The piece `seq` of an import's uploaded file; undefined past its end. */
export async function uploadPiece(
  db: Queryable,
  userId: number,
  importId: number,
  seq: number,
): Promise<Buffer | undefined> {
  const r = await db.query<{ bytes: Buffer }>(
    `SELECT bytes FROM import_uploads WHERE user_id = $1 AND import_id = $2 AND seq = $3`,
    [userId, importId, seq],
  );
  return r.rows[0]?.bytes;
}

/** The advisory-lock class of a user's imports (the bytes of "csim"); the object is the user's id. */
const IMPORT_LOCK = 0x6373696d;

/**
 * Takes the lock of the user's imports without waiting: for the session (an import the command line runs,
 * until unlockImports) or for the transaction (an import being queued). False when another holds it.
 */
export async function tryLockImports(q: Queryable, userId: number, hold: 'session' | 'transaction'): Promise<boolean> {
  const lock = hold === 'session' ? 'pg_try_advisory_lock' : 'pg_try_advisory_xact_lock';
  const r = await q.query<{ got: boolean }>(`SELECT ${lock}($1, $2::int) AS got`, [IMPORT_LOCK, userId]);
  return r.rows[0]?.got === true;
}

export async function unlockImports(q: Queryable, userId: number): Promise<void> {
  await q.query('SELECT pg_advisory_unlock($1, $2::int)', [IMPORT_LOCK, userId]);
}

/** Whether the user has an import queued or running. */
export async function hasImportUnderWay(q: Queryable, userId: number): Promise<boolean> {
  const r = await q.query(`SELECT 1 FROM imports WHERE user_id = $1 AND state IN ('queued', 'running') LIMIT 1`, [
    userId,
  ]);
  return r.rowCount === 1;
}

/**
 * A user for an import's preview to store actions under, in a transaction that is rolled back (so never
 * seen): its name is random, so that no one else's new user waits on it.
 */
export async function insertStandIn(tx: Queryable): Promise<number> {
  const r = await tx.query<{ id: number }>(
    `INSERT INTO users (username) VALUES ('preview.' || gen_random_uuid()) RETURNING id`,
  );
  return r.rows[0]!.id;
}

/**
 * How many of `from`'s actions `userId` does not have, by the key under which an action is stored once
 * (the index episode_actions_same_key).
 */
export async function actionsLacking(tx: Queryable, from: number, userId: number): Promise<number> {
  const r = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM episode_actions p
      WHERE p.user_id = $1
        AND NOT EXISTS (
          SELECT 1 FROM episode_actions a
           WHERE a.user_id = $2 AND a.podcast_hash = p.podcast_hash AND a.episode_hash = p.episode_hash
             AND a.action = p.action AND a.at = p.at AND coalesce(a.device_id, '') = coalesce(p.device_id, '')
             AND coalesce(a.position, -1) = coalesce(p.position, -1))`,
    [from, userId],
  );
  return r.rows[0]!.n;
}
