import fs from 'node:fs';
import path from 'node:path';
import { setTimeout } from 'node:timers/promises';
import pg from 'pg';
import type { Logger } from '../logger';

export const MIGRATIONS_DIR = path.join(__dirname, '..', '..', 'migrations');

/** The advisory lock key that serialises migrations across processes (the bytes of "castsync"). */
const MIGRATION_LOCK = 0x63617374_73796e63n;
/** How often an instance that waits for another's migrations asks for the lock again. */
const LOCK_RETRY_MS = 100;

/**
 * Migrations that took a later number once databases built from unreleased main had run them under their
 * first (each is now the migration of the same name after the number): such a database forgets the old row
 * and runs the migration again under its new number, which each allows (…100 drops and adds the same CHECK).
 * Without it, node-pg-migrate's order check refuses to start on such a database.
 */
const RENUMBERED = ['1763800000021_gpodder-archive-imports'];

/** node-pg-migrate's note that a migration runs outside the single transaction. */
const BREAKS = /Need to break single transaction/;

/**
 * The project's migrations by name, oldest first: SQL files, and JavaScript for one that must run outside the
 * migrations' transaction (CREATE INDEX CONCURRENTLY on a big table).
 */
export const migrationNames = (): string[] =>
  fs
    .readdirSync(MIGRATIONS_DIR)
    .filter((f) => /\.(sql|js)$/.test(f))
    .map((f) => f.replace(/\.(sql|js)$/, ''))
    .sort();

/** How many migrations a new database runs to stand at `name` (for a restore of an older backup). */
function countUpTo(name: string): number {
  const at = migrationNames().indexOf(name);
  if (at < 0) throw new Error(`Migration ${name} is unknown to this castsync: the backup was made by a newer release`);
  return at + 1;
}

/**
 * Brings the schema up to date (or, with `upTo`, a new database to that migration): the project's SQL migrations (node-pg-migrate), then `more` (the job
 * queue's own schema: src/jobs/migrate.ts), under one lock. Several instances may start at once: each waits
 * for the advisory lock, so the first migrates and the rest find nothing to do. (node-pg-migrate's own
 * lock does not wait: a second instance would fail with "Another migration is already running".)
 */
export async function migrate(
  databaseUrl: string,
  logger: Logger,
  more: () => Promise<void> = async () => {},
  { upTo }: { upTo?: string } = {},
): Promise<string[]> {
  const { runner } = await import('node-pg-migrate');
  const log = (msg: string) => logger.debug(msg);
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'castsync-migrate' });
  client.on('error', (err) => logger.warn({ err: err.message }, 'migration connection lost'));
  await client.connect();
  try {
    // Tried again and again rather than waited for in pg_advisory_lock: a session waiting inside a statement
    // holds a snapshot, and a CREATE INDEX CONCURRENTLY of the instance that migrates waits for every older
    // snapshot, so instances starting at once would deadlock with it.
    while (!(await client.query('SELECT pg_try_advisory_lock($1) AS got', [MIGRATION_LOCK.toString()])).rows[0].got) {
      await setTimeout(LOCK_RETRY_MS);
    }
    if ((await client.query("SELECT to_regclass('public.pgmigrations') IS NOT NULL AS has")).rows[0].has) {
      await client.query('DELETE FROM pgmigrations WHERE name = ANY ($1)', [RENUMBERED]);
    }
    const applied = await runner({
      dbClient: client,
      noLock: true,
      dir: MIGRATIONS_DIR,
      direction: 'up',
      migrationsTable: 'pgmigrations',
      count: upTo === undefined ? Infinity : countUpTo(upTo),
      checkOrder: true,
      singleTransaction: true,
      log,
      // A migration outside the transaction (noTransaction) commits those before it: expected, not a warning.
      logger: {
        debug: log,
        info: log,
        warn: (m: string) => (BREAKS.test(m) ? log(m) : logger.warn(m)),
        error: (m: string) => logger.error(m),
      },
    });
    await more();
    if (applied.length > 0) logger.info({ migrations: applied.map((m) => m.name) }, 'migrations applied');
    return applied.map((m) => m.name);
  } finally {
    // Ending the session releases the lock, also when a migration failed.
    await client.end().catch(() => undefined);
  }
}
