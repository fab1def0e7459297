import pg from 'pg';
import { loadConfig } from '../config';
import { openDatabase } from '../db/database';
import { checkBackup, loadBackup, writeBackup } from '../db/backup';
import { migrationNames } from '../db/migrate';
import { migrateDatabase } from '../jobs/migrate';
import { createLogger, type Logger } from '../logger';
import { VERSION } from '../version';

// `castsync backup FILE` and `castsync restore FILE` (docs/backups.md): the whole database, with the
// embedded PostgreSQL or DATABASE_URL alike.

export const backup = (databaseUrl: string, file: string) => writeBackup(databaseUrl, file, VERSION);

/** Whether the database already holds castsync's schema (then a restore would mix two histories). */
async function hasSchema(databaseUrl: string): Promise<boolean> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    return (await db.query("SELECT to_regclass('public.pgmigrations') IS NOT NULL AS has")).rows[0].has as boolean;
  } finally {
    await db.end();
  }
}

/** Drops every table of castsync and of its job queue: for `restore --replace` only. */
async function dropEverything(databaseUrl: string): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query('DROP SCHEMA IF EXISTS graphile_worker CASCADE');
    await db.query('DROP SCHEMA public CASCADE');
    await db.query('CREATE SCHEMA public');
  } finally {
    await db.end();
  }
}

/**
 * Restores a backup into a database without castsync's schema (or, with `replace`, after dropping it):
 * migrates to the backup's migration, loads its rows in one transaction, then migrates the rest, so a
 * backup of an older release comes back under this one. Nothing is dropped before the file is known good:
 * it is read to its end first, so a copy cut short or damaged anywhere leaves the database as it was.
 */
export async function restore(databaseUrl: string, file: string, logger: Logger, { replace = false } = {}) {
  const header = await checkBackup(file);
  if (!migrationNames().includes(header.migration))
    throw new Error(`${file} was made by castsync ${header.version}, newer than this one (${VERSION}): upgrade first`);
  if (await hasSchema(databaseUrl)) {
    if (!replace)
      throw new Error(
        'The database already holds castsync data: restore into an empty one (a new DATA_DIR or database), or pass --replace',
      );
    await dropEverything(databaseUrl);
  }
  await migrateDatabase(databaseUrl, logger, { upTo: header.migration });
  const { rows } = await loadBackup(databaseUrl, file);
  const upgraded = await migrateDatabase(databaseUrl, logger);
  return { header, rows, upgraded };
}

/** Opens the database the server uses (joining a running server's embedded PostgreSQL) without migrating it. */
export async function withDatabaseUrl<T>(fn: (url: string, logger: Logger) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel === 'debug' || config.logLevel === 'trace' ? config.logLevel : 'warn');
  const database = await openDatabase(config, logger, { attach: true });
  try {
    return await fn(database.url, logger);
  } finally {
    await database.stop();
  }
}
