import path from 'node:path';
import pg from 'pg';
import { runMigrations as runQueueMigrations } from 'graphile-worker';
import type { Logger } from '../logger';
import { queueLogger } from '../deletions/queue';

export const MIGRATIONS_DIR = path.join(__dirname, '..', '..', 'migrations');

/**
 * Brings the schema up to date: the project's SQL migrations (node-pg-migrate, under an advisory lock, so
 * several instances may start at once) and the job queue's own schema.
 */
export async function migrate(databaseUrl: string, logger: Logger): Promise<string[]> {
  const { runner } = await import('node-pg-migrate');
  const log = (msg: string) => logger.debug(msg);
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    count: Infinity,
    checkOrder: true,
    singleTransaction: true,
    log,
    logger: { debug: log, info: log, warn: (m: string) => logger.warn(m), error: (m: string) => logger.error(m) },
  });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  pool.on('error', (err) => logger.warn({ err: err.message }, 'migration connection lost'));
  pool.on('connect', (client) => client.on('error', () => undefined));
  try {
    await runQueueMigrations({ pgPool: pool, logger: queueLogger(logger) });
  } finally {
    await pool.end();
  }
  if (applied.length > 0) logger.info({ migrations: applied.map((m) => m.name) }, 'migrations applied');
  return applied.map((m) => m.name);
}
