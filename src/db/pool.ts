import pg from 'pg';
import type { Logger } from '../logger';

// Ids and counts are int8; they stay far below 2^53, so they are read as plain numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

// timestamptz arrives as "2026-11-22 10:15:30.123+00" (or with "+05:30"); the built-in parser takes a
// regular expression and arithmetic per value, while the ISO form of the same text is parsed natively.
const parseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ);
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, (v: string) => {
  if (v.charCodeAt(10) === 32 && v.length >= 22) {
    const d = new Date(`${v.slice(0, 10)}T${v.slice(11)}${v.charCodeAt(v.length - 3) === 58 ? '' : ':00'}`);
    if (!Number.isNaN(d.getTime())) return d;
  }
  return parseTimestamptz(v) as Date;
});

export type Db = pg.Pool;
export type Tx = pg.PoolClient;
export type Queryable = pg.Pool | pg.PoolClient;

export function createPool(
  connectionString: string,
  opts: { max: number; timeoutMs: number; logger: Logger; applicationName?: string },
): Db {
  const pool = new pg.Pool({
    connectionString,
    max: opts.max,
    // A database that does not answer must turn into a 503 quickly, not a hanging request.
    connectionTimeoutMillis: opts.timeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: opts.applicationName ?? 'castsync',
    // No request statement takes more than milliseconds; these bound a stuck one, and a query on a
    // connection whose database went silent (no reset, e.g. a network partition).
    statement_timeout: 10_000,
    query_timeout: 10_000,
  });
  // Without a listener, an idle client losing its connection would crash the process.
  pool.on('error', (err) => opts.logger.warn({ err: err.message }, 'idle database connection lost'));
  // A connection that breaks while checked out fails its query; the client must not crash the process.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

const RETRYABLE = new Set(['40001', '40P01']); // serialization failure, deadlock

/** Runs fn in one transaction; serialization failures and deadlocks are retried a few times. */
export async function withTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await db.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackErr) {
        broken = rollbackErr as Error;
      }
      const code = (err as { code?: string }).code;
      if (!broken && code && RETRYABLE.has(code) && attempt < 5) continue;
      throw err;
    } finally {
      client.release(broken);
    }
  }
}
