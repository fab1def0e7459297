import pino from 'pino';
import { Writable } from 'node:stream';
import type pg from 'pg';
import { createPool } from '../../src/db/pool';
import { databaseUrl } from '../helpers/db';

// What the pool logs, line by line.
function capture(): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: pino({ level: 'warn' }, sink), lines };
}

/** An idle connection of the pool, as the pool keeps it (its idle error listener attached). */
async function idleClient(pool: pg.Pool): Promise<pg.PoolClient> {
  const client = await pool.connect();
  client.release();
  return client;
}

const lost = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

describe('a pool losing idle connections', () => {
  test('a connection lost while the pool is open is logged, and the process goes on', async () => {
    const { logger, lines } = capture();
    const pool = createPool(databaseUrl('postgres'), { max: 1, timeoutMs: 5000, logger });
    const client = await idleClient(pool);
    client.emit('error', lost());
    expect(lines.map((l) => JSON.parse(l) as { msg: string; err: string })).toEqual([
      expect.objectContaining({ msg: 'idle database connection lost', err: lost().message }),
    ]);
    // The pool opens another connection for the next query.
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.end();
  });

  test('one lost after pool.end() (it resolves before its connections have closed) is not', async () => {
    const { logger, lines } = capture();
    const pool = createPool(databaseUrl('postgres'), { max: 1, timeoutMs: 5000, logger });
    const client = await idleClient(pool);
    const ended = pool.end();
    // The embedded PostgreSQL stops here in the CLI and the server: its backend ends before the client does.
    client.emit('error', lost());
    await ended;
    expect(lines).toEqual([]);
  });
});
