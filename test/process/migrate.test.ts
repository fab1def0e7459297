import pg from 'pg';
import { emptyDatabase, freshDatabase } from '../helpers/db';
import { cliAsync } from '../helpers/process';

// Several instances (replicas, or a rolling deploy) start at once on one database, and each brings the
// schema up to date as it starts: none may fail because another is migrating at the same moment.
const migrateAtOnce = (url: string, n: number) =>
  Promise.all(Array.from({ length: n }, () => cliAsync(['migrate'], { DATABASE_URL: url })));

test('five processes migrating an empty database at once all succeed, and each migration runs once', async () => {
  const db = await emptyDatabase();
  try {
    const runs = await migrateAtOnce(db.url, 5);
    for (const r of runs) expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const { rows } = await c.query('SELECT name, count(*)::int AS n FROM pgmigrations GROUP BY name');
    const tables = await c.query(`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'subscriptions'`);
    await c.end();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.n === 1)).toBe(true);
    expect(tables.rows[0].n).toBe(1);
  } finally {
    await db.drop();
  }
});

test('processes starting at once on an up-to-date database all succeed', async () => {
  const db = await freshDatabase();
  try {
    for (let round = 0; round < 3; round++) {
      const runs = await migrateAtOnce(db.url, 5);
      for (const r of runs) expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    }
  } finally {
    await db.drop();
  }
});
