import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrationNames } from '../../src/db/migrate';
import { findMatches } from '../../src/subscriptions/repo';
import { urlHash } from '../../src/subscriptions/urls';
import { emptyDatabase, freshDatabase, testPool } from '../helpers/db';
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

test('URLs stored before url_hash became a uuid still match after the upgrade', async () => {
  const db = await emptyDatabase();
  const pool = testPool(db.url);
  try {
    // The schema as it was: the first four migrations, where url_hash is a full SHA-256.
    const before = spawnSync(
      process.execPath,
      ['node_modules/node-pg-migrate/bin/node-pg-migrate.js', 'up', '4', '-m', 'migrations', '--no-check-order'],
      { cwd: path.join(__dirname, '..', '..'), env: { ...process.env, DATABASE_URL: db.url }, encoding: 'utf8' },
    );
    expect(before.status).toBe(0);
    const oldHash = (key: string) => `sha256(convert_to('${key}', 'UTF8'))`;
    const { rows } = await pool.query(`
      WITH u AS (INSERT INTO users (username, password_hash) VALUES ('old', 'x') RETURNING id),
           s AS (INSERT INTO subscriptions (user_id, guid, feed_url, url_hash, subscription_changed)
                 SELECT id, gen_random_uuid(), 'https://Old.Example/feed.xml', ${oldHash('https://old.example/feed.xml')}, now()
                   FROM u RETURNING user_id, id),
           o AS (INSERT INTO subscription_urls (user_id, url_hash, subscription_id, feed_url)
                 SELECT user_id, ${oldHash('https://old.example/moved.xml')}, id, 'https://old.example/moved.xml' FROM s)
      SELECT user_id, id FROM s`);
    const { user_id: userId, id } = rows[0];

    const after = await cliAsync(['migrate'], { DATABASE_URL: db.url });
    expect({ status: after.status, stderr: after.stderr }).toEqual({ status: 0, stderr: '' });
    const keys = ['https://old.example/feed.xml', 'https://old.example/moved.xml', 'https://old.example/other.xml'];
    const guids = keys.map(() => '00000000-0000-4000-8000-000000000000');
    const { matches } = await findMatches(pool, userId, guids, keys.map(urlHash));
    expect(matches.map((m) => m.byUrl?.id ?? null)).toEqual([id, id, null]);
  } finally {
    await pool.end();
    await db.drop();
  }
});

// Release 1.0.0's migrations (CHANGELOG.md): a database it left has run these and no others. Every later
// migration must sort after the last of them, or node-pg-migrate refuses to start on such a database.
const RELEASE_1_0_0 = [
  '1763800000000_users-and-tokens',
  '1763800000001_subscriptions',
  '1763800000002_deletions',
  '1763800000003_conflict-signal',
  '1763800000004_url-hash-uuid',
  '1763800000005_deletion-message-default',
  '1763800000006_record-count',
  '1763800000007_gpodder',
  '1763800000008_episode-actions',
  '1763800000009_feeds',
  '1763800000010_web',
  '1763800000011_episode-latest-per-action',
  '1763800000012_sync-reports',
  '1763800000013_feed-discovery',
  '1763800000014_episode-action-json',
  '1763800000015_imports',
  '1763800000016_single-sign-on',
  '1763800000017_feed-items',
  '1763800000018_feed-changes',
  '1763800000024_opa-sync',
];

/** A new database with release 1.0.0's schema, as its own migrations made it. */
const databaseOfRelease1 = () => databaseMadeBy(RELEASE_1_0_0.map((name) => [name, name]));

/**
 * A new database made by these migrations (each a file of migrations/ by its name, and the name it ran
 * under then), as node-pg-migrate itself runs them.
 */
async function databaseMadeBy(migrations: [file: string, ranAs: string][]) {
  const root = path.join(__dirname, '..', '..');
  const released = fs.mkdtempSync(path.join(os.tmpdir(), 'castsync-made-by-'));
  const db = await emptyDatabase();
  try {
    for (const [file, ranAs] of migrations)
      fs.copyFileSync(path.join(root, 'migrations', `${file}.sql`), path.join(released, `${ranAs}.sql`));
    const before = spawnSync(
      process.execPath,
      ['node_modules/node-pg-migrate/bin/node-pg-migrate.js', 'up', '-m', released],
      { cwd: root, env: { ...process.env, DATABASE_URL: db.url }, encoding: 'utf8' },
    );
    expect(before.status).toBe(0);
    return db;
  } catch (e) {
    await db.drop();
    throw e;
  } finally {
    fs.rmSync(released, { recursive: true, force: true });
  }
}

/** `migrate` succeeds on the database, and it has then run every migration of this castsync, by its name. */
async function expectBroughtUpToDate(db: { url: string }) {
  const after = await cliAsync(['migrate'], { DATABASE_URL: db.url });
  expect({ status: after.status, stderr: after.stderr }).toEqual({ status: 0, stderr: '' });
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  const { rows } = await c.query<{ name: string }>('SELECT name FROM pgmigrations');
  await c.end();
  expect(rows.map((r) => r.name).sort()).toEqual(migrationNames());
}

test('a database as unreleased main left it, with gpodder-archive-imports run as 1763800000021, is brought up to date', async () => {
  // Main ran that migration as …021, in file order, before it took the number after 1.0.0's.
  const renumbered = '1763800000100_gpodder-archive-imports';
  const before = migrationNames().filter((n) => n < '1763800000099');
  const db = await databaseMadeBy([
    ...before.map((n): [string, string] => [n, n]),
    [renumbered, '1763800000021_gpodder-archive-imports'],
  ]);
  try {
    await expectBroughtUpToDate(db);
  } finally {
    await db.drop();
  }
});

test('a database as release 1.0.0 left it is brought up to date', async () => {
  const db = await databaseOfRelease1();
  try {
    await expectBroughtUpToDate(db);
  } finally {
    await db.drop();
  }
});

// The upgrade runs in one transaction, and every lock it takes is held to its end: from the first new table
// that references users, the running apps' writes (each takes its user's row) wait for it. The index of the
// items' artwork (feed_items: up to 1,000 items a feed, 5 s to index at 3 million) is built after the rest
// has committed, concurrently: it waits for the transactions under way, and no write waits for it.
test("the upgrade builds the items' artwork index once the rest is committed, while the apps write", async () => {
  const db = await databaseOfRelease1();
  const [older, app] = [testPool(db.url, { max: 1 }), testPool(db.url, { max: 1 })];
  const reading = await older.connect();
  try {
    // A request under way, its snapshot taken: a concurrent build waits for it.
    await reading.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await reading.query('SELECT 1');
    let settled = false;
    const upgrade = cliAsync(['migrate'], { DATABASE_URL: db.url }).finally(() => (settled = true));
    let waiting = false;
    while (!settled && !waiting) {
      const { rows } = await app.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
            AND application_name = 'castsync-migrate' AND wait_event_type = 'Lock' AND wait_event = 'virtualxid'`,
      );
      waiting = rows.length > 0;
      if (!waiting) await new Promise((r) => setTimeout(r, 50));
    }
    expect(waiting).toBe(true);
    const c = await app.connect();
    try {
      await c.query('BEGIN');
      await c.query('LOCK TABLE users, subscriptions, tokens, devices, feeds IN ROW EXCLUSIVE MODE NOWAIT');
      await c.query('COMMIT');
    } finally {
      c.release();
    }
    const { rows: done } = await app.query(
      `SELECT 1 FROM pgmigrations WHERE name = '1763800000100_gpodder-archive-imports'`,
    );
    expect(done).toHaveLength(1);
    await reading.query('COMMIT');
    const after = await upgrade;
    expect({ status: after.status, stderr: after.stderr }).toEqual({ status: 0, stderr: '' });
    const { rows } = await app.query(
      `SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'feed_items_artwork_url'`,
    );
    expect(rows).toEqual([{ indisvalid: true }]);
  } finally {
    await reading.query('ROLLBACK').catch(() => undefined);
    reading.release();
    await older.end();
    await app.end();
    await db.drop();
  }
});

test('a role that may not create tables: migrate says why in one line, without a stack trace', async () => {
  const db = await emptyDatabase();
  const role = `weak_${db.name}`;
  const admin = testPool(db.url);
  try {
    // PostgreSQL 15 and later: a role that does not own the database may not create in its public schema.
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'weak-password'`);
    await admin.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
    const url = new URL(db.url);
    [url.username, url.password] = [role, 'weak-password'];
    const r = await cliAsync(['migrate'], { DATABASE_URL: url.href });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^castsync: .*permission denied for schema public$/m);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  } finally {
    await admin.end();
    await db.drop();
    const cleanup = testPool(db.url.replace(/\/[^/]+$/, '/postgres'));
    await cleanup.query(`DROP ROLE IF EXISTS ${role}`);
    await cleanup.end();
  }
});
