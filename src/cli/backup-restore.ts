import pg from 'pg';
import { loadConfig } from '../config';
import { openDatabase } from '../db/database';
import { checkBackup, loadBackup, writeBackup } from '../db/backup';
import { migrationNames } from '../db/migrate';
import { LISTENER_APPLICATION } from '../db/notifications';
import { migrateDatabase } from '../jobs/migrate';
import type { Logger } from '../logger';
import { cliLogger } from './database';
import { VERSION } from '../version';

// `castsync backup FILE` and `castsync restore FILE` (docs/backups.md): the whole database, with the
// embedded PostgreSQL or DATABASE_URL alike.

export const backup = (databaseUrl: string, file: string) => writeBackup(databaseUrl, file, VERSION);

async function withClient<T>(databaseUrl: string, fn: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: databaseUrl, application_name: 'castsync-restore' });
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

/**
 * castsync's schemas (its tables, and its job queue's), and the names `restore --replace` gives them while
 * it restores: they are set aside, not dropped, until the backup is in, and put back if it fails.
 */
const SCHEMAS = [
  { name: 'public', aside: 'castsync_replaced' },
  { name: 'graphile_worker', aside: 'castsync_replaced_queue' },
];
const INTERRUPTED = SCHEMAS[0]!.aside;

const schemaExists = async (db: pg.Client, name: string): Promise<boolean> =>
  (await db.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [name])).rowCount === 1;

/**
 * Whether the database already holds castsync's data (then a restore would mix two histories), or what a
 * `restore --replace` that was interrupted set aside.
 */
const hasData = (databaseUrl: string): Promise<boolean> =>
  withClient(
    databaseUrl,
    async (db) =>
      (await db.query("SELECT to_regclass('public.pgmigrations') IS NOT NULL AS has")).rows[0].has ||
      (await schemaExists(db, INTERRUPTED)),
  );

/**
 * Sets castsync's schemas aside and leaves an empty public schema. After a `restore --replace` that was
 * interrupted (its process killed), what it set aside is the database as it was before it: that stays
 * aside, and the half-restored schemas are dropped.
 */
const setAside = (databaseUrl: string): Promise<void> =>
  withClient(databaseUrl, async (db) => {
    await db.query('BEGIN');
    const interrupted = await schemaExists(db, INTERRUPTED);
    for (const { name, aside } of SCHEMAS) {
      if (interrupted) await db.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      else if (await schemaExists(db, name)) await db.query(`ALTER SCHEMA ${name} RENAME TO ${aside}`);
    }
    await db.query('CREATE SCHEMA public');
    await db.query('COMMIT');
  });

/** After a `restore --replace` that failed: its schemas dropped, those it set aside put back. */
const putBack = (databaseUrl: string): Promise<void> =>
  withClient(databaseUrl, async (db) => {
    await db.query('BEGIN');
    for (const { name, aside } of SCHEMAS) {
      await db.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      if (await schemaExists(db, aside)) await db.query(`ALTER SCHEMA ${aside} RENAME TO ${name}`);
    }
    if (!(await schemaExists(db, 'public'))) await db.query('CREATE SCHEMA public');
    await db.query('COMMIT');
  });

/** After a `restore --replace` that succeeded: what it set aside is dropped. */
const dropSetAside = (databaseUrl: string): Promise<void> =>
  withClient(databaseUrl, async (db) => {
    for (const { aside } of SCHEMAS) await db.query(`DROP SCHEMA IF EXISTS ${aside} CASCADE`);
  });

/** Whether a castsync server is connected to the database (its listener's connection). */
const serverConnected = (databaseUrl: string): Promise<boolean> =>
  withClient(
    databaseUrl,
    async (db) =>
      (
        await db.query('SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [
          LISTENER_APPLICATION,
        ])
      ).rowCount! > 0,
  );

/**
 * Restores a backup into a database without castsync's schema (or, with `replace`, in place of the data it
 * holds): migrates to the backup's migration, loads its rows in one transaction, then migrates the rest, so
 * a backup of an older release comes back under this one. Nothing is changed before the file is known
 * good: it is read to its end first, so a copy cut short or damaged anywhere leaves the database as it was.
 * With `replace`, the data the database held is set aside, not dropped, until the restore is done: a
 * restore that fails after that (a row the schema refuses, a migration, the disk) puts it back.
 */
export async function restore(databaseUrl: string, file: string, logger: Logger, { replace = false } = {}) {
  // A server would go on with what it cached, and its job worker stops for good when its schema is replaced.
  if (await serverConnected(databaseUrl)) {
    throw new Error('A castsync server is using the database: stop it first (every instance), then restore');
  }
  const header = await checkBackup(file);
  if (!migrationNames().includes(header.migration))
    throw new Error(`${file} was made by castsync ${header.version}, newer than this one (${VERSION}): upgrade first`);
  const replacing = await hasData(databaseUrl);
  if (replacing) {
    if (!replace)
      throw new Error(
        'The database already holds castsync data: restore into an empty one (a new DATA_DIR or database), or pass --replace',
      );
    await setAside(databaseUrl);
  }
  try {
    await migrateDatabase(databaseUrl, logger, { upTo: header.migration });
    const { rows } = await loadBackup(databaseUrl, file);
    const upgraded = await migrateDatabase(databaseUrl, logger);
    if (replacing) await dropSetAside(databaseUrl);
    return { header, rows, upgraded };
  } catch (err) {
    if (!replacing) throw err;
    await putBack(databaseUrl);
    throw new Error(`${(err as Error).message}\nThe restore failed; the database holds what it held before.`);
  }
}

/** Opens the database the server uses (joining a running server's embedded PostgreSQL) without migrating it. */
export async function withDatabaseUrl<T>(fn: (url: string, logger: Logger) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const logger = cliLogger(config);
  const database = await openDatabase(config, logger, { attach: true });
  try {
    return await fn(database.url, logger);
  } finally {
    await database.stop();
  }
}
