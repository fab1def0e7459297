import pino from 'pino';
import * as auth from '../auth/service';
import { archivedAccount, AuthCache } from '../auth/service';
import { loadConfig, type Config } from '../config';
import { whenDatabaseUp } from '../db/connect';
import { openDatabase } from '../db/database';
import { createPool, type Db } from '../db/pool';
import { InvalidInput } from '../errors';
import { migrateDatabase } from '../jobs/migrate';
import { createLogger, type Logger } from '../logger';

export type Ctx = { db: Db; authCache: AuthCache };

/**
 * The CLI's log: warnings only (unless LOG_LEVEL asks for debug or trace), on standard error, so that what
 * a command prints (an archive that `castsync export` writes to standard output, a list a script reads)
 * stays whole whatever is logged.
 */
export function cliLogger(config: Config): Logger {
  const verbose = config.logLevel === 'debug' || config.logLevel === 'trace';
  return createLogger(verbose ? config.logLevel : 'warn', pino.destination({ dest: 2, sync: true }));
}

/** Opens the database the server uses (joining a running server's embedded PostgreSQL), runs fn, closes it. */
export async function withDatabase<T>(fn: (ctx: Ctx) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const logger = cliLogger(config);
  const database = await openDatabase(config, logger, { attach: true });
  try {
    await whenDatabaseUp(() => migrateDatabase(database.url, logger), logger, 10_000);
    const db = createPool(database.url, {
      max: 2,
      timeoutMs: config.dbTimeoutMs,
      logger,
      applicationName: 'castsync-cli',
    });
    try {
      return await fn({ db, authCache: new AuthCache(0) });
    } finally {
      await db.end();
    }
  } finally {
    await database.stop();
  }
}

export async function userIdOf(ctx: Ctx, name: string): Promise<number> {
  const id = await auth.userIdOf(ctx.db, name);
  if (id !== undefined) return id;
  const archived = await archivedAccount(ctx.db, name);
  if (archived === undefined) throw new InvalidInput(`No user ${name}`);
  throw new InvalidInput(
    `No user ${name}: archived on ${archived.archivedAt.toISOString().slice(0, 10)}` +
      `${archived.file === null ? '' : ` to ${archived.file}`} (castsync users restore ${name} brings it back)`,
  );
}
