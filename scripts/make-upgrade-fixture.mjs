// Makes test/fixtures/upgrade/<release>.backup and <release>.json: a database as an earlier release left
// it, for the upgrade test (test/process/upgrade.test.ts, docs/releasing.md).
//
//   git worktree add /tmp/castsync-0.1.0 <the release's commit> && (cd /tmp/castsync-0.1.0 && npm ci && npm run build)
//   npm run build && node scripts/make-upgrade-fixture.mjs /tmp/castsync-0.1.0 0.1.0
//
// The data is written by THAT release's own code (its migrations, services and HTTP routes), the way its
// users wrote it: users, logins and app passwords, subscriptions with guid and URL history, a deletion,
// gpodder devices, sessions and episode actions, a sync report, a Nextcloud login flow, a single sign-on
// identity, an import, feeds the fetcher read (with items and a move) from a loopback server. Then this
// release's `backup` writes it out, with what the old server answered, to compare after the upgrade.
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import pino from 'pino';
import request from 'supertest';

const [oldDir, release] = process.argv.slice(2);
if (!oldDir || !release) throw new Error('usage: node scripts/make-upgrade-fixture.mjs OLD_CHECKOUT RELEASE');
const require = createRequire(import.meta.url);
const old = (m) => require(path.resolve(oldDir, 'dist', m));
const here = (m) => require(path.resolve('dist', m));
const logger = pino({ level: 'warn' });

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'castsync-fixture-'));
const pg = await here('db/embedded').openEmbedded({ dataDir, logger, attach: false, settings: { fsync: 'off' } });
const feeds = http.createServer((req, res) => {
  if (req.url === '/moved') return res.writeHead(301, { location: '/show' }).end();
  const item = (n) =>
    `<item><title>Episode ${n}</title><guid>ep-${n}</guid><pubDate>Mon, 0${n} Nov 2026 10:00:00 GMT</pubDate>` +
    `<enclosure url="https://media.example.org/${n}.mp3" type="audio/mpeg" length="1000"/><itunes:duration>1800</itunes:duration></item>`;
  res
    .writeHead(200, { 'content-type': 'application/rss+xml' })
    .end(
      `<?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel>` +
        `<title>The Show</title><link>https://example.org/show</link><description>About it</description>${item(1)}${item(2)}</channel></rss>`,
    );
});
await new Promise((r) => feeds.listen(0, '127.0.0.1', r));
const feedBase = `http://127.0.0.1:${feeds.address().port}`;

try {
  const admin = new (require('pg').Client)({ connectionString: pg.url });
  await admin.connect();
  await admin.query('CREATE DATABASE fixture');
  await admin.end();
  const url = pg.url.replace(/\/postgres$/, '/fixture');
  await old('jobs/migrate').migrateDatabase(url, logger);
  const config = old('config').loadConfig(
    { DATABASE_URL: url, FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' },
    { dotenvFile: false },
  );
  const db = old('db/pool').createPool(url, { max: 4, timeoutMs: 5000, logger });
  const authCache = new (old('auth/cache').AuthCache)(0);
  const app = old('app').createApp({
    db,
    config,
    logger,
    state: { draining: false },
    authCache,
    foreground: new (old('jobs/foreground').Foreground)(),
  });
  const auth = old('auth/service');
  const users = { alice: 'alice-password-1', bob: 'bob-password-22' };
  for (const [name, password] of Object.entries(users)) await auth.addUser({ db }, name, password);
  const basic = (name) => 'Basic ' + Buffer.from(`${name}:${users[name]}`).toString('base64');
  const as = (name) => ({
    get: (p) => request(app).get(p).set('Authorization', basic(name)),
    post: (p, b) => request(app).post(p).set('Authorization', basic(name)).send(b),
    patch: (p, b) => request(app).patch(p).set('Authorization', basic(name)).send(b),
  });
  const alice = as('alice');
  const login = (await request(app).post('/v1/auth/login').send({ username: 'alice', password: users.alice })).body;
  const appPassword = (await auth.createAppPasswordFor({ db, authCache }, 'alice', 'phone')).token;

  const explicitGuid = '2d8bb39b-8d34-48d4-b223-a0d01eb27d71';
  const posted = await alice.post('/v1/subscriptions', {
    subscriptions: [
      { feed_url: `${feedBase}/show` },
      { feed_url: `${feedBase}/moved` },
      { feed_url: 'https://feeds.example.com/renamed.xml' },
      { feed_url: 'https://feeds.example.com/moved-by-app.xml' },
      { feed_url: 'https://feeds.example.com/deleted.xml' },
      { feed_url: 'https://example.com/rss4', guid: explicitGuid },
    ],
  });
  const guidOf = (u) => posted.body.success.find((s) => s.feed_url === u).guid;
  await alice.patch(`/v1/subscriptions/${guidOf('https://feeds.example.com/renamed.xml')}`, {
    new_guid: '0b6f3d36-2c7e-4c55-9a3e-2f1f0d5d3b71',
  });
  await alice.patch(`/v1/subscriptions/${guidOf('https://feeds.example.com/moved-by-app.xml')}`, {
    new_feed_url: 'https://feeds.example.com/new-home.xml',
  });
  const deletions = old('deletions/service');
  const deletion = await deletions.requestDeletion(db, 1, guidOf('https://feeds.example.com/deleted.xml'));
  await deletions.performDeletion(db, logger, deletion.id);

  // gpodder: a session, a device, an upload with a refused URL (a sync report), plays.
  const session = await request(app).post('/api/2/auth/alice/login.json').set('Authorization', basic('alice'));
  await alice.post('/api/2/devices/alice/phone.json', { caption: 'My phone', type: 'mobile' });
  await alice.post('/api/2/subscriptions/alice/phone.json', {
    add: ['https://gpodder.example.net/feed.rss', 'not a url'],
    remove: ['https://example.com/rss4'],
  });
  await alice.post('/api/2/episodes/alice.json', [
    {
      podcast: `${feedBase}/show`,
      episode: 'https://media.example.org/1.mp3',
      guid: 'ep-1',
      action: 'play',
      started: 0,
      position: 1200,
      total: 1800,
      timestamp: '2026-11-20T08:00:00',
      device: 'phone',
    },
    {
      podcast: `${feedBase}/show`,
      episode: 'https://media.example.org/2.mp3',
      action: 'download',
      timestamp: '2026-11-20T09:00:00',
      device: 'phone',
    },
    {
      podcast: 'https://gpodder.example.net/feed.rss',
      episode: 'https://gpodder.example.net/e.mp3',
      action: 'new',
      device: 'phone',
    },
  ]);
  await as('bob').post('/v1/subscriptions', { subscriptions: [{ feed_url: `${feedBase}/show` }] });

  // A Nextcloud login flow approved, a single sign-on identity, an import started from the web page.
  const flow = await request(app).post('/index.php/login/v2');
  const code = decodeURIComponent(new URL(flow.body.login).pathname.split('/').pop());
  await auth.approveLoginFlow(db, code, 1);
  await old('auth/identities').signInVouched(
    db,
    { username: 'bob', provider: { issuer: 'https://id.example', subject: 'bob-sub' } },
    { createUsers: false },
  );
  await old('transfer/jobs').startImport(db, 1, { source: 'archive', document: '{}' }, true);

  // The fetcher of that release reads the feeds: titles, items, and the move of /moved.
  const fetcher = old('feeds/fetcher');
  await fetcher.fetchDueFeeds({ db, logger }, fetcher.fetcherSettings(config));

  // A last change 2 s after the rest, then what the old server answers, and the marks its apps last
  // synced at: a since-read at a mark repeats the changes of its last second or two (by design), so the
  // upgrade test compares every answer, those too, with the old server's.
  await new Promise((r) => setTimeout(r, 2100));
  await alice.post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://feeds.example.com/last.xml' }] });
  const opa = await alice.get('/v1/subscriptions?per_page=500');
  const gpodderPull = (await alice.get('/api/2/subscriptions/alice/phone.json?since=0')).body;
  const episodes = (await alice.get('/api/2/episodes/alice.json?since=0')).body;
  const answered = {
    release,
    feedBase,
    users,
    refreshToken: login.refresh_token,
    appPassword,
    sessionCookie: /sessionid=([^;]+)/.exec(session.headers['set-cookie'].join(';'))[1],
    explicitGuid,
    deletionId: deletion.id,
    opaSubscriptions: opa.body,
    syncTimestamp: opa.headers['sync-timestamp'],
    opaSince: (await alice.get(`/v1/subscriptions?since=${encodeURIComponent(opa.headers['sync-timestamp'])}`)).body,
    gpodderPull,
    gpodderSince: (await alice.get(`/api/2/subscriptions/alice/phone.json?since=${gpodderPull.timestamp}`)).body,
    episodes,
    episodesSince: (await alice.get(`/api/2/episodes/alice.json?since=${episodes.timestamp}`)).body,
    devices: (await alice.get('/api/2/devices/alice.json')).body,
    feed: (await alice.get(`/v1/feeds/${guidOf(`${feedBase}/show`)}`)).body,
    bobSubscriptions: (await as('bob').get('/v1/subscriptions')).body,
  };
  await db.end();

  const out = path.resolve('test/fixtures/upgrade');
  fs.mkdirSync(out, { recursive: true });
  const file = path.join(out, `${release}.backup`);
  await here('db/backup').writeBackup(url, `${file}.gz`, release);
  // Committed as plain JSON lines: a reviewer can read what the old release stored.
  fs.writeFileSync(file, zlib.gunzipSync(fs.readFileSync(`${file}.gz`)));
  fs.rmSync(`${file}.gz`);
  fs.writeFileSync(path.join(out, `${release}.json`), JSON.stringify(answered, null, 2) + '\n');
  console.log(`wrote ${file} and ${release}.json`);
} finally {
  feeds.close();
  await pg.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
