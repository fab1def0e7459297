import { randomBytes } from 'node:crypto';
import pg from 'pg';

const serverUrl = (): string => {
  const url = process.env.CASTSYNC_TEST_DATABASE_URL;
  if (!url) throw new Error('CASTSYNC_TEST_DATABASE_URL is not set: run the tests with `npm test`');
  return url;
};

export const databaseUrl = (name: string): string => serverUrl().replace(/\/postgres$/, `/${name}`);

/** A new database cloned from the migrated template: each test file works on its own. */
export async function freshDatabase(): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl() });
  await admin.connect();
  try {
    // Two CREATE DATABASE from one template at the same moment can fail with "source database is being
    // accessed by other users": the test workers take turns.
    await admin.query('SELECT pg_advisory_lock(4242)');
    await admin.query(`CREATE DATABASE ${name} TEMPLATE castsync_template`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: databaseUrl(name),
    drop: async () => {
      const c = new pg.Client({ connectionString: serverUrl() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
