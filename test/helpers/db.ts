import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { survivingLostConnections } from '../../src/db/pool';

const serverUrl = (): string => {
  const url = process.env.CASTSYNC_TEST_DATABASE_URL;
  if (!url) throw new Error('CASTSYNC_TEST_DATABASE_URL is not set: run the tests with `npm test`');
  return url;
};

export const databaseUrl = (name: string): string => serverUrl().replace(/\/postgres$/, `/${name}`);

async function asAdmin(fn: (admin: pg.Client) => Promise<void>): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl() });
  await admin.connect();
  try {
    await fn(admin);
  } finally {
    await admin.end();
  }
}

type TestDatabase = { name: string; url: string; drop: () => Promise<void> };

async function createDatabase(prefix: string, create: (admin: pg.Client, name: string) => Promise<void>) {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await asAdmin((admin) => create(admin, name));
  return {
    name,
    url: databaseUrl(name),
    drop: () => asAdmin(async (admin) => void (await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}

/** A new database cloned from the migrated template: each test file works on its own. */
export function freshDatabase(): Promise<TestDatabase> {
  return createDatabase('t', async (admin, name) => {
    // Two CREATE DATABASE from one template at the same moment can fail with "source database is being
    // accessed by other users": the test workers take turns.
    await admin.query('SELECT pg_advisory_lock(4242)');
    await admin.query(`CREATE DATABASE ${name} TEMPLATE castsync_template`);
  });
}

/** A new database with nothing in it, not even the schema. */
export function emptyDatabase(): Promise<TestDatabase> {
  return createDatabase('m', async (admin, name) => void (await admin.query(`CREATE DATABASE ${name}`)));
}

/**
 * A pool on a test database. pool.end() resolves once its connections are asked to close, before they
 * have; a DROP DATABASE ... WITH (FORCE) right after it can end one of them first, and a pool without a
 * listener throws that connection's error out of the test file: the pool listens, as the server's does.
 */
export function testPool(url: string, config: Omit<pg.PoolConfig, 'connectionString'> = {}): pg.Pool {
  return survivingLostConnections(new pg.Pool({ connectionString: url, ...config }), pino({ level: 'silent' }));
}

/** Rows with this user id in every table that has a user_id column, by table. */
export async function rowsOfUser(db: pg.Pool, userId: number): Promise<Record<string, number>> {
  const tables = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.columns
      WHERE table_schema = 'public' AND column_name = 'user_id' ORDER BY table_name`,
  );
  const out: Record<string, number> = {};
  for (const { table_name } of tables.rows) {
    const r = await db.query<{ n: number }>(`SELECT count(*) AS n FROM "${table_name}" WHERE user_id = $1`, [userId]);
    out[table_name] = r.rows[0]!.n;
  }
  return out;
}
