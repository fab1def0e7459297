import pg from 'pg';
import { runMigrations } from 'graphile-worker';
import { migrate } from '../db/migrate';
import { survivingLostConnections } from '../db/pool';
import type { Logger } from '../logger';
import { queueLogger } from './queue';

/**
 * The whole schema: the project's SQL migrations (all, or up to one for a restore), then the job queue's,
 * under the migration lock.
 */
export const migrateDatabase = (
  databaseUrl: string,
  logger: Logger,
  options: { upTo?: string } = {},
): Promise<string[]> => migrate(databaseUrl, logger, () => migrateQueue(databaseUrl, logger), options);

/** The job queue's schema, through a connection of its own (graphile-worker takes a pool). */
async function migrateQueue(databaseUrl: string, logger: Logger): Promise<void> {
  const pool = survivingLostConnections(new pg.Pool({ connectionString: databaseUrl, max: 1 }), logger);
  try {
    await runMigrations({ pgPool: pool, logger: queueLogger(logger) });
  } finally {
    await pool.end();
  }
}
