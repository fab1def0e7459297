import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import request from 'supertest';
import { createApp } from '../../src/app';
import { AuthCache } from '../../src/auth/cache';
import { loadConfig } from '../../src/config';
import { migrationNames } from '../../src/db/migrate';
import { createPool, type Db } from '../../src/db/pool';
import { Foreground } from '../../src/jobs/foreground';
import { emptyDatabase } from '../helpers/db';
import { cliAsync } from '../helpers/process';

// Upgrades never lose data: a database as release 0.1.0 left it (test/fixtures/upgrade, written by that
// release's own code: scripts/make-upgrade-fixture.mjs) is restored, brought up to today's schema, and
// every answer the old server gave is given again; apps that synced against it go on from their marks.
// Each release adds its own fixture here (docs/releasing.md).

const logger = pino({ level: 'silent' });
const FIXTURES = path.join(__dirname, '..', 'fixtures', 'upgrade');
type Fixture = {
  users: Record<string, string>;
  refreshToken: string;
  appPassword: string;
  sessionCookie: string;
  deletionId: number;
  feedBase: string;
  opaSubscriptions: { subscriptions: { guid: string }[] };
  syncTimestamp: string;
  opaSince: { subscriptions: unknown[] };
  gpodderPull: { add: string[]; remove: string[]; timestamp: number };
  gpodderSince: { add: string[]; remove: string[] };
  episodes: { actions: unknown[]; timestamp: number };
  episodesSince: { actions: unknown[] };
  devices: unknown[];
  feed: Record<string, unknown>;
  bobSubscriptions: unknown;
};

type Opened = { db: Db; url: string; app: ReturnType<typeof createApp>; drop: () => Promise<void> };
const opened: Opened[] = [];

/** `castsync restore FILE` into a new database, as an operator runs it; the app on that database. */
async function openRestored(file: string): Promise<Opened & { said: string }> {
  const database = await emptyDatabase();
  const restored = await cliAsync(['restore', file], { DATABASE_URL: database.url });
  expect(restored.stderr).toBe('');
  expect(restored.status).toBe(0);
  const config = loadConfig({ DATABASE_URL: database.url }, { dotenvFile: false });
  const db = createPool(database.url, { max: 4, timeoutMs: 5000, logger });
  const app = createApp({
    db,
    config,
    logger,
    state: { draining: false },
    authCache: new AuthCache(0),
    foreground: new Foreground(),
  });
  const o = { db, url: database.url, app, drop: database.drop };
  opened.push(o);
  return { ...o, said: restored.stdout };
}
afterAll(async () => {
  for (const o of opened) {
    await o.db.end();
    await o.drop();
  }
});

const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');

describe.each(fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.backup')))('a database of release %s', (file) => {
  const fixture = JSON.parse(
    fs.readFileSync(path.join(FIXTURES, file.replace(/\.backup$/, '.json')), 'utf8'),
  ) as Fixture;
  let o: Opened & { said: string };
  const alice = basic('alice', fixture.users.alice!);
  const get = (p: string, auth = alice) => request(o.app).get(p).set('Authorization', auth);

  beforeAll(async () => {
    o = await openRestored(path.join(FIXTURES, file));
  });

  test("is brought up to today's schema", async () => {
    expect(o.said).toMatch(/migrations applied since/);
    const newest = (await o.db.query('SELECT name FROM pgmigrations ORDER BY id DESC LIMIT 1')).rows[0].name;
    expect(newest).toBe(migrationNames().at(-1));
  });

  test('every subscription, device, episode action and feed is answered as the old server answered', async () => {
    expect((await get('/v1/subscriptions?per_page=500')).body).toEqual(fixture.opaSubscriptions);
    const pull = (await get('/api/2/subscriptions/alice/phone.json?since=0')).body;
    expect({ ...pull, timestamp: 0 }).toEqual({ ...fixture.gpodderPull, timestamp: 0 });
    expect((await get('/api/2/episodes/alice.json?since=0')).body.actions).toEqual(fixture.episodes.actions);
    expect((await get('/api/2/devices/alice.json')).body).toEqual(fixture.devices);
    const guid = fixture.opaSubscriptions.subscriptions[0]!.guid;
    expect((await get(`/v1/feeds/${guid}`)).body).toEqual(fixture.feed);
    expect((await get(`/v1/deletions/${fixture.deletionId}`)).body.status).toBe('SUCCESS');
    expect((await get('/v1/subscriptions', basic('bob', fixture.users.bob!))).body).toEqual(fixture.bobSubscriptions);
  });

  test('passwords, app passwords, refresh tokens and gpodder sessions still sign in', async () => {
    const login = await request(o.app)
      .post('/v1/auth/login')
      .send({ username: 'alice', password: fixture.users.alice });
    expect(login.status).toBe(200);
    expect((await request(o.app).post('/v1/auth/refresh').send({ refresh_token: fixture.refreshToken })).status).toBe(
      200,
    );
    expect((await get('/v1/subscriptions', basic('alice', fixture.appPassword))).status).toBe(200);
    const cookie = await request(o.app)
      .get('/api/2/devices/alice.json')
      .set('Cookie', `sessionid=${fixture.sessionCookie}`);
    expect(cookie.status).toBe(200);
  });

  test('apps that synced against the old server go on from their marks, then see what is new', async () => {
    const opaSince = `/v1/subscriptions?since=${encodeURIComponent(fixture.syncTimestamp)}`;
    expect((await get(opaSince)).body.subscriptions).toEqual(fixture.opaSince.subscriptions);
    const gpSince = `/api/2/subscriptions/alice/phone.json?since=${fixture.gpodderPull.timestamp}`;
    expect((await get(gpSince)).body).toMatchObject({
      add: fixture.gpodderSince.add,
      remove: fixture.gpodderSince.remove,
    });
    const epSince = `/api/2/episodes/alice.json?since=${fixture.episodes.timestamp}`;
    expect((await get(epSince)).body.actions).toEqual(fixture.episodesSince.actions);

    const added = await request(o.app)
      .post('/v1/subscriptions')
      .set('Authorization', alice)
      .send({ subscriptions: [{ feed_url: 'https://after.example.org/upgrade.xml' }] });
    expect(added.status).toBe(200);
    const changed = (await get(opaSince)).body.subscriptions as { feed_url: string }[];
    expect(changed.map((s) => s.feed_url)).toEqual(['https://after.example.org/upgrade.xml']);
    expect((await get(gpSince)).body.add).toEqual([
      ...fixture.gpodderSince.add,
      'https://after.example.org/upgrade.xml',
    ]);
  });

  test('a backup of the upgraded database restores to the same answers', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'castsync-backup-'));
    const copyFile = path.join(dir, 'copy.backup');
    const written = await cliAsync(['backup', copyFile], { DATABASE_URL: o.url });
    expect(written.status).toBe(0);
    expect(written.stdout).toMatch(/^Backup written to .*: \d+ tables, \d+ rows/);
    const copy = await openRestored(copyFile);
    expect(copy.said).not.toMatch(/migrations applied/);
    for (const p of [
      '/v1/subscriptions?per_page=500',
      '/api/2/episodes/alice.json?since=0',
      '/api/2/devices/alice.json',
    ]) {
      const [a, b] = [await get(p), await request(copy.app).get(p).set('Authorization', alice)];
      // (An episode download's timestamp is the clock's: the rest must be equal.)
      expect({ ...b.body, timestamp: 0 }).toEqual({ ...a.body, timestamp: 0 });
    }
    // The copy goes on counting where the original stopped: a new record gets a new id.
    const more = await request(copy.app)
      .post('/v1/subscriptions')
      .set('Authorization', alice)
      .send({ subscriptions: [{ feed_url: 'https://copy.example.org/new.xml' }] });
    expect(more.status).toBe(200);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
