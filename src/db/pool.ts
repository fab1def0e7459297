import pg from 'pg';
import type { Logger } from '../logger';

// Ids and counts are int8; they stay far below 2^53, so they are read as plain numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

// timestamptz arrives as "2026-11-22 10:15:30.123456+00" (or with "+05:30"). pg's built-in parser takes a
// regular expression and several strings per value; a GET page reads a hundred or more of them, so the
// common form is read from its character codes, allocating only the Date. Anything else (years past
// 9999, BC, infinity, an offset with seconds) goes to pg's parser.
/** pg's own timestamptz parser (what parseTimestamptz must agree with). */
export const pgParseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (v: string) => Date;
const digits = (v: string, at: number, n: number): number => {
  let x = 0;
  for (let i = at; i < at + n; i++) {
    const d = v.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    x = x * 10 + d;
  }
  return x;
};
const MS_PLACES = [100, 10, 1];
export function parseTimestamptz(v: string): Date {
  const year = digits(v, 0, 4);
  // Years below 100 would be read by Date.UTC as 19xx: left to pg's parser.
  if (year >= 100 && v.length >= 22 && v.charCodeAt(4) === 45 && v.charCodeAt(10) === 32) {
    let i = 19;
    let ms = 0;
    if (v.charCodeAt(i) === 46) {
      // Fraction: milliseconds are its first three digits (PostgreSQL sends up to six).
      const start = ++i;
      for (; i < v.length && v.charCodeAt(i) >= 48 && v.charCodeAt(i) <= 57; i++) {
        if (i - start < 3) ms += (v.charCodeAt(i) - 48) * MS_PLACES[i - start]!;
      }
    }
    const sign = v.charCodeAt(i);
    const rest = v.length - i;
    if ((sign === 43 || sign === 45) && (rest === 3 || (rest === 6 && v.charCodeAt(i + 3) === 58))) {
      const offset = digits(v, i + 1, 2) * 60 + (rest === 6 ? digits(v, i + 4, 2) : 0);
      const t = Date.UTC(
        year,
        digits(v, 5, 2) - 1,
        digits(v, 8, 2),
        digits(v, 11, 2),
        digits(v, 14, 2),
        digits(v, 17, 2),
        ms,
      );
      if (!Number.isNaN(t)) return new Date(t - (sign === 45 ? -1 : 1) * offset * 60_000);
    }
  }
  return pgParseTimestamptz(v);
}
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
