import pg from 'pg';
import type { Logger } from '../logger';
import { isDatabaseUnavailable } from './errors';
import { parseTimestamptz } from './timestamptz';

// Ids and counts are int8; they stay far below 2^53, so they are read as plain numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, parseTimestamptz);

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
  return survivingLostConnections(pool, opts.logger);
}

/**
 * A pool whose lost connections are logged instead of crashing the process: without a listener, an idle
 * client losing its connection throws, and one that breaks while checked out must only fail its query.
 * A connection lost once the pool is ending is not news: pool.end() resolves before its connections have
 * closed, so an embedded PostgreSQL stopped right after it can end them first ("terminating connection due
 * to administrator command").
 */
export function survivingLostConnections(pool: pg.Pool, logger: Logger): pg.Pool {
  pool.on('error', (err) => {
    if (!pool.ending) logger.warn({ err: err.message }, 'idle database connection lost');
  });
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * Runs fn on one connection checked out of the pool, for a statement whose failure is an answer (a feed
 * the person has already, found by a unique index). pool.query would throw the connection away with its
 * failed statement (node-postgres ends a pooled client whose query failed), and the next request would pay
 * a new session: a fork and an authentication. A statement that fails outside a transaction leaves its
 * connection as it was, so it goes back to the pool; one that failed for the connection's sake does not.
 */
export async function onConnection<T>(db: Db, fn: (c: Queryable) => Promise<T>): Promise<T> {
  const client = await db.connect();
  let broken: Error | undefined;
  try {
    return await fn(client);
  } catch (err) {
    if (!(err instanceof pg.DatabaseError) || isDatabaseUnavailable(err)) broken = err as Error;
    throw err;
  } finally {
    client.release(broken);
  }
}

const RETRYABLE = new Set(['40001', '40P01']); // serialization failure, deadlock

/**
 * How a transaction of reads that must agree with each other begins: every statement sees the database as
 * the first one did, and nothing is written.
 */
export const ONE_SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

/**
 * Runs fn in one transaction (begun by `begin`); serialization failures and deadlocks are retried a few
 * times.
 */
export async function withTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await db.connect();
    let broken: Error | undefined;
    try {
      await client.query(begin);
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

/**
 * Runs a generator in one transaction, passing on what it yields as it comes (a long read, a page at a
 * time): committed when it returns; rolled back when it throws or its consumer stops early (`return()`).
 */
export async function* streamInTransaction<T, R>(
  db: Db,
  fn: (tx: Tx) => AsyncGenerator<T, R, undefined>,
): AsyncGenerator<T, R, undefined> {
  const client = await db.connect();
  let committed = false;
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = yield* fn(client);
    await client.query('COMMIT');
    committed = true;
    return result;
  } finally {
    if (!committed) await client.query('ROLLBACK').catch((err: Error) => (broken = err));
    client.release(broken);
  }
}

/**
 * Runs fn in a transaction that is always rolled back, and returns what fn returned: a dry run of writes
 * (what they would do, exactly, with nothing kept). It holds the locks the writes take until it ends.
 */
export async function rolledBack<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await db.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    return await fn(client);
  } finally {
    await client.query('ROLLBACK').catch((err: Error) => (broken = err));
    client.release(broken);
  }
}
