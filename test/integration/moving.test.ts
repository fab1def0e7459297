import http from 'node:http';
import type net from 'node:net';
import pino from 'pino';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { feedServer } from '../helpers/feed-server';
import { signedInAgent } from '../helpers/web';
import { importSnapshot } from '../../src/transfer/import';
import { runImportJob, startImport } from '../../src/transfer/jobs';
import {
  archiveText,
  exportArchive,
  ImportFailed,
  runImport,
  type ImportSource,
  type Summary,
} from '../../src/transfer/service';
import type { RemoteLimits } from '../../src/transfer/remote';
import { ARCHIVE_LIMITS } from '../helpers/gpodder-archive';

// Importing from another sync server (a second castsync started here, speaking both dialects for real,
// and replays of gpodder.net's and the Nextcloud app's answers as their source writes them), and the
// archive that castsync writes and reads.

let remote: TestApp;
let local: TestApp;
let remoteServer: http.Server;
let remoteUrl: string;

beforeAll(async () => {
  [remote, local] = await Promise.all([testApp(), testApp()]);
  remoteServer = http.createServer(remote.app);
  await new Promise<void>((resolve) => remoteServer.listen(0, '127.0.0.1', resolve));
  remoteUrl = `http://127.0.0.1:${(remoteServer.address() as net.AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => remoteServer.close(() => resolve()));
  await Promise.all([remote.close(), local.close()]);
});

const OPTIONS = {
  policy: { allowPrivate: true, allowCidrs: [] },
  limits: { timeoutMs: 5000, maxBytes: 1024 * 1024, totalMs: 60_000, totalBytes: 16 * 1024 * 1024 },
  progress: () => undefined,
};
const importInto = (user: TestUser, from: ImportSource, dryRun = false): Promise<Summary> =>
  runImport(local.db, user.id, from, { ...OPTIONS, dryRun });

/** What an app of the user sees: the subscribed feeds, and every action as the gpodder API gives it. */
async function viewOf(t: TestApp, u: TestUser) {
  const api = as(t, u);
  const feeds = (await api.get(`/subscriptions/${u.name}.json`)).body as string[];
  const actions = (await api.get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions as object[];
  const key = (a: object) => JSON.stringify(a);
  return { feeds: [...feeds].sort(), actions: actions.map(key).sort() };
}

const count = async (t: TestApp, table: string, userId: number) =>
  Number((await t.db.query(`SELECT count(*) AS n FROM ${table} WHERE user_id = $1`, [userId])).rows[0].n);
const lastChange = async (t: TestApp, userId: number) =>
  (await t.db.query('SELECT last_change FROM users WHERE id = $1', [userId])).rows[0].last_change as Date;

/** A remote user with two devices, a feed removed on one of them, and a history of actions. */
async function remoteUserWithHistory(): Promise<TestUser> {
  const u = await remote.user('remote');
  const api = as(remote, u);
  await api.post(`/api/2/devices/${u.name}/phone.json`, { caption: 'My phone', type: 'mobile' }).expect(200);
  await api.post(`/api/2/devices/${u.name}/laptop.json`, { caption: 'Laptop', type: 'laptop' }).expect(200);
  await api
    .post(`/api/2/subscriptions/${u.name}/phone.json`, {
      add: ['https://a.example/feed.xml', 'https://b.example/feed', 'https://gone.example/rss'],
      remove: [],
    })
    .expect(200);
  await api
    .post(`/api/2/subscriptions/${u.name}/laptop.json`, {
      add: ['https://c.example/x?y=1'],
      remove: ['https://gone.example/rss'],
    })
    .expect(200);
  await api
    .post(`/api/2/episodes/${u.name}.json`, [
      {
        podcast: 'https://a.example/feed.xml',
        episode: 'https://a.example/1.mp3',
        guid: 'ep-1',
        action: 'play',
        timestamp: '2021-08-22T23:58:56',
        started: 10,
        position: 120,
        total: 3600,
        device: 'phone',
      },
      {
        podcast: 'https://b.example/feed',
        episode: 'https://b.example/2.mp3',
        action: 'download',
        timestamp: '2020-01-02T03:04:05',
        device: 'laptop',
      },
      {
        podcast: 'https://gone.example/rss',
        episode: 'https://gone.example/e.mp3',
        action: 'delete',
        timestamp: '2019-05-05T05:05:05',
      },
    ])
    .expect(200);
  return u;
}

describe('import from a gpodder v2 server (a second castsync)', () => {
  test('the union of the devices’ lists, every action with its own time, device, guid and positions; devices with caption and type', async () => {
    const r = await remoteUserWithHistory();
    const u = await local.user('local');
    const from = { source: 'gpodder' as const, serverUrl: remoteUrl, remoteUser: r.name, password: r.password };
    const summary = await importInto(u, from);
    expect(summary.feeds).toMatchObject({ total: 3, added: 3, removedOnRemote: 1, refused: [] });
    expect(summary.actions).toMatchObject({ total: 3, added: 3, refused: [] });
    expect(summary.devices).toMatchObject({ total: 2, added: 2, refused: [] });

    const mine = await viewOf(local, u);
    const theirs = await viewOf(remote, r);
    expect(mine.feeds).toEqual(['https://a.example/feed.xml', 'https://b.example/feed', 'https://c.example/x?y=1']);
    expect(mine.feeds).toEqual(theirs.feeds);
    expect(mine.actions).toEqual(theirs.actions);
    expect(mine.actions).toContain(
      JSON.stringify({
        podcast: 'https://a.example/feed.xml',
        episode: 'https://a.example/1.mp3',
        guid: 'ep-1',
        action: 'play',
        timestamp: '2021-08-22T23:58:56',
        device: 'phone',
        started: 10,
        position: 120,
        total: 3600,
      }),
    );
    const devices = (await as(local, u).get(`/api/2/devices/${u.name}.json`)).body as {
      id: string;
      caption: string;
      type: string;
    }[];
    expect(devices.map(({ id, caption, type }) => ({ id, caption, type }))).toEqual([
      { id: 'laptop', caption: 'Laptop', type: 'laptop' },
      { id: 'phone', caption: 'My phone', type: 'mobile' },
    ]);

    // Every app of the local user sees it at its next sync: /v1 lists the feeds too.
    const v1 = await as(local, u).get('/v1/subscriptions');
    expect(v1.body.subscriptions.map((s: { feed_url: string }) => s.feed_url).sort()).toEqual(mine.feeds);

    // A second run adds nothing: no record changes, no action is stored twice.
    const records = await local.db.query('SELECT * FROM subscriptions WHERE user_id = $1 ORDER BY id', [u.id]);
    const again = await importInto(u, from);
    expect([again.feeds.added, again.actions.added, again.devices.added]).toEqual([0, 0, 0]);
    expect((await local.db.query('SELECT * FROM subscriptions WHERE user_id = $1 ORDER BY id', [u.id])).rows).toEqual(
      records.rows,
    );
    expect(await count(local, 'episode_actions', u.id)).toBe(3);
    expect(await viewOf(local, u)).toEqual(mine);
  });

  test('--dry-run reports the counts and the first few, and changes nothing', async () => {
    const r = await remoteUserWithHistory();
    const u = await local.user('dry');
    const from = { source: 'gpodder' as const, serverUrl: remoteUrl, remoteUser: r.name, password: r.password };
    const before = await lastChange(local, u.id);
    const preview = await importInto(u, from, true);
    expect(preview.dryRun).toBe(true);
    expect(preview.feeds).toMatchObject({ total: 3, added: 3 });
    expect(preview.feeds.sample).toEqual([
      'https://a.example/feed.xml',
      'https://b.example/feed',
      'https://c.example/x?y=1',
    ]);
    expect(preview.actions).toMatchObject({ total: 3, added: 3 });
    expect(preview.actions.sample[0]).toBe('play https://a.example/1.mp3 at 2021-08-22T23:58:56.000Z (position 120 s)');
    expect(preview.devices.sample).toEqual(['laptop (Laptop, laptop)', 'phone (My phone, mobile)']);
    for (const table of ['subscriptions', 'episode_actions', 'devices'])
      expect(await count(local, table, u.id)).toBe(0);
    expect(await lastChange(local, u.id)).toEqual(before);
  });

  test('what the local user has stays; only what is new comes', async () => {
    const r = await remoteUserWithHistory();
    const u = await local.user('merge');
    await as(local, u).post('/v1/subscriptions', {
      subscriptions: [{ feed_url: 'https://a.example/feed.xml' }, { feed_url: 'https://mine.example/only' }],
    });
    const summary = await importInto(u, {
      source: 'gpodder',
      serverUrl: remoteUrl,
      remoteUser: r.name,
      password: r.password,
    });
    expect(summary.feeds).toMatchObject({ total: 3, added: 2 });
    expect((await viewOf(local, u)).feeds).toEqual([
      'https://a.example/feed.xml',
      'https://b.example/feed',
      'https://c.example/x?y=1',
      'https://mine.example/only',
    ]);
  });

  test('a wrong password is a clear error and imports nothing', async () => {
    const r = await remoteUserWithHistory();
    const u = await local.user('wrong');
    const failed = await importInto(u, {
      source: 'gpodder',
      serverUrl: remoteUrl,
      remoteUser: r.name,
      password: 'not-it',
    }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ImportFailed);
    expect((failed as Error).message).toBe(`${remoteUrl} refused the name ${r.name} and its password (HTTP 401)`);
    for (const table of ['subscriptions', 'episode_actions', 'devices'])
      expect(await count(local, table, u.id)).toBe(0);
  });
});

describe('a failure once writing began', () => {
  test('says where the import stopped; what was written stays, and the same import run again completes it', async () => {
    const r = await remoteUserWithHistory();
    const u = await local.user('halfway');
    const from = { source: 'gpodder' as const, serverUrl: remoteUrl, remoteUser: r.name, password: r.password };
    // The database going away between the subscriptions and the actions, as this import sees it.
    const failed = await runImport(local.db, u.id, from, {
      ...OPTIONS,
      dryRun: false,
      progress: (step) => {
        if (step === 'storing episode actions') throw new Error('Connection terminated unexpectedly');
      },
    }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ImportFailed);
    expect((failed as Error).message).toBe(
      'Connection terminated unexpectedly. The import stopped while storing episode actions (0 of 3): what was ' +
        'imported before stays, and running the same import again completes it',
    );
    expect(await count(local, 'subscriptions', u.id)).toBe(3);
    expect(await count(local, 'episode_actions', u.id)).toBe(0);
    const again = await importInto(u, from);
    expect([again.feeds.added, again.actions.added]).toEqual([0, 3]);
    expect(await viewOf(local, u)).toEqual(await viewOf(remote, r));
  });
});

describe('import from a Nextcloud gpoddersync server (the second castsync’s Nextcloud routes)', () => {
  test('subscriptions and every action arrive, with or without /index.php in the address; a second run adds nothing', async () => {
    const r = await remoteUserWithHistory();
    const u = await local.user('nc');
    const from = {
      source: 'nextcloud' as const,
      serverUrl: `${remoteUrl}/index.php/`,
      remoteUser: r.name,
      password: r.password,
    };
    const summary = await importInto(u, from);
    expect(summary.feeds).toMatchObject({ total: 3, added: 3, removedOnRemote: 1 });
    expect(summary.actions).toMatchObject({ total: 3, added: 3 });
    expect(summary.devices.total).toBe(0);
    expect(await viewOf(local, u)).toEqual(await viewOf(remote, r));
    const again = await importInto(u, { ...from, serverUrl: remoteUrl });
    expect([again.feeds.added, again.actions.added]).toEqual([0, 0]);
  });
});

/** gpodder.net (mygpo) as its source writes its answers: a session cookie, isoformat() times, nulls. */
async function mygpoReplay(password = 'secret') {
  const basic = 'Basic ' + Buffer.from(`alice:${password}`).toString('base64');
  const seen: { path: string; cookie?: string }[] = [];
  const json = (res: http.ServerResponse, body: unknown) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = await feedServer({
    '*': (req, res) => {
      const path = req.url ?? '';
      seen.push({ path, cookie: req.headers.cookie });
      if (req.headers.authorization !== basic)
        return void res.writeHead(401, { 'www-authenticate': 'Basic realm="mygpo"' }).end();
      if (path === '/api/2/auth/alice/login.json' && req.method === 'POST') {
        return void res
          .writeHead(200, { 'set-cookie': 'sessionid=abc123; expires=Thu, 01 Jan 2037 00:00:00 GMT; HttpOnly; Path=/' })
          .end();
      }
      if (path === '/api/2/devices/alice.json') {
        return json(res, [
          { id: 'n900', caption: 'My N900', type: 'mobile', subscriptions: 2 },
          { id: 'desktop-1', caption: '', type: 'desktop', subscriptions: 1 },
        ]);
      }
      if (path === '/api/2/subscriptions/alice/n900.json?since=0') {
        return json(res, {
          add: ['http://feeds.example.com/tech', 'itpc://old.example.com/pod'],
          remove: [],
          timestamp: 1700000000,
        });
      }
      if (path === '/api/2/subscriptions/alice/desktop-1.json?since=0') {
        return json(res, {
          add: ['http://feeds.example.com/tech'],
          remove: ['http://dropped.example.com/'],
          timestamp: 1700000000,
        });
      }
      if (path === '/api/2/episodes/alice.json?since=0') {
        return json(res, {
          actions: [
            {
              podcast: 'http://feeds.example.com/tech',
              episode: 'http://media.example.com/tech-1.mp3',
              guid: null,
              action: 'play',
              timestamp: '2009-12-12T09:00:00.123456',
              device: 'n900',
              started: null,
              position: 1800,
              total: null,
            },
            {
              podcast: 'http://feeds.example.com/tech',
              episode: 'http://media.example.com/tech-2.mp3',
              guid: 'urn:tech-2',
              action: 'download',
              timestamp: '2010-01-01T00:00:00',
              device: 'desktop-1',
            },
            {
              podcast: 'http://feeds.example.com/tech',
              episode: 'http://media.example.com/tech-3.mp3',
              guid: null,
              action: 'play',
              timestamp: '2011-02-03T04:05:06',
              started: 0,
              position: null,
              total: 100,
            },
          ],
          timestamp: 1700000000,
        });
      }
      res.writeHead(404).end();
    },
  });
  return { ...server, seen };
}

describe('import from replayed gpodder.net (mygpo) answers', () => {
  test('logs in, sends the session cookie, keeps fractions, rewrites podcast schemes, and names what it refused', async () => {
    const mygpo = await mygpoReplay();
    try {
      const u = await local.user('mygpo');
      const summary = await importInto(u, {
        source: 'gpodder',
        serverUrl: mygpo.url(''),
        remoteUser: 'alice',
        password: 'secret',
      });
      expect(mygpo.seen[0]).toEqual({ path: '/api/2/auth/alice/login.json', cookie: undefined });
      expect(mygpo.seen.slice(1).every((s) => s.cookie === 'sessionid=abc123')).toBe(true);
      expect(summary.feeds).toMatchObject({ total: 2, added: 2, removedOnRemote: 1, refused: [] });
      expect(summary.devices).toMatchObject({ total: 2, added: 2 });
      expect(summary.actions).toMatchObject({ total: 3, added: 2 });
      expect(summary.actions.refused).toEqual([
        { item: 'action 2', reason: 'position: seconds, at least 0, required for play' },
      ]);
      const view = await viewOf(local, u);
      expect(view.feeds).toEqual(['http://feeds.example.com/tech', 'http://old.example.com/pod']);
      const actions = (await as(local, u).get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions;
      expect(actions[0]).toEqual({
        podcast: 'http://feeds.example.com/tech',
        episode: 'http://media.example.com/tech-1.mp3',
        action: 'play',
        timestamp: '2009-12-12T09:00:00',
        device: 'n900',
        position: 1800,
      });
      // The time kept to the millisecond.
      const at = await local.db.query('SELECT at FROM episode_actions WHERE user_id = $1 ORDER BY id LIMIT 1', [u.id]);
      expect((at.rows[0].at as Date).toISOString()).toBe('2009-12-12T09:00:00.123Z');
      const devices = (await as(local, u).get(`/api/2/devices/${u.name}.json`)).body;
      expect(devices.map((d: { id: string; caption: string }) => [d.id, d.caption])).toEqual([
        ['desktop-1', 'desktop-1'],
        ['n900', 'My N900'],
      ]);
    } finally {
      await mygpo.close();
    }
  });
});

describe('import from replayed Nextcloud gpoddersync answers', () => {
  test('+00:00 times, upper-case actions, -1 positions on other actions and no device', async () => {
    const nc = await feedServer({
      '/index.php/apps/gpoddersync/subscriptions': (_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(
          JSON.stringify({
            add: ['https://rss.art19.com/dr-death-s3-miracle-man'],
            remove: [],
            timestamp: 1700000000,
          }),
        ),
      '/index.php/apps/gpoddersync/episode_action': (_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(
          JSON.stringify({
            actions: [
              {
                podcast: 'https://rss.art19.com/dr-death-s3-miracle-man',
                episode: 'https://dts.podtrac.com/redirect.mp3/ep1.mp3',
                timestamp: '2021-08-22T23:58:56+00:00',
                guid: 'gid://art19-episode-locator/V0/Ktd',
                position: 54,
                started: 47,
                total: 2252,
                action: 'PLAY',
              },
              {
                podcast: 'https://rss.art19.com/dr-death-s3-miracle-man',
                episode: 'https://dts.podtrac.com/redirect.mp3/ep2.mp3',
                timestamp: '2021-08-23T10:00:00+02:00',
                guid: null,
                position: -1,
                started: -1,
                total: -1,
                action: 'DOWNLOAD',
              },
            ],
            timestamp: 1700000000,
          }),
        ),
    });
    try {
      const u = await local.user('ncreplay');
      const summary = await importInto(u, {
        source: 'nextcloud',
        serverUrl: nc.url(''),
        remoteUser: 'alice',
        password: 'app-pass',
      });
      expect(summary.actions).toMatchObject({ total: 2, added: 2, refused: [] });
      expect(nc.requests.map((r) => r.headers.authorization)).toEqual([
        'Basic ' + Buffer.from('alice:app-pass').toString('base64'),
        'Basic ' + Buffer.from('alice:app-pass').toString('base64'),
      ]);
      const actions = (await as(local, u).get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions;
      expect(actions).toEqual([
        {
          podcast: 'https://rss.art19.com/dr-death-s3-miracle-man',
          episode: 'https://dts.podtrac.com/redirect.mp3/ep1.mp3',
          guid: 'gid://art19-episode-locator/V0/Ktd',
          action: 'play',
          timestamp: '2021-08-22T23:58:56',
          started: 47,
          position: 54,
          total: 2252,
        },
        {
          podcast: 'https://rss.art19.com/dr-death-s3-miracle-man',
          episode: 'https://dts.podtrac.com/redirect.mp3/ep2.mp3',
          action: 'download',
          timestamp: '2021-08-23T08:00:00',
        },
      ]);
    } finally {
      await nc.close();
    }
  });
});

describe('a feed the other server lists in two spellings', () => {
  test('is one new feed, counted and shown once by the URL castsync keeps', async () => {
    const nc = await feedServer({
      '/index.php/apps/gpoddersync/subscriptions': (_req, res) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ add: ['http://x.example/feed', 'itpc://x.example/feed', 'feed://y.example/f'] })),
      '/index.php/apps/gpoddersync/episode_action': (_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"actions": []}'),
    });
    try {
      const u = await local.user('spellings');
      const from = { source: 'nextcloud' as const, serverUrl: nc.url(''), remoteUser: 'a', password: 'b' };
      for (const dryRun of [true, false]) {
        const summary = await importInto(u, from, dryRun);
        expect(summary.feeds).toMatchObject({
          total: 3,
          added: 2,
          sample: ['http://x.example/feed', 'http://y.example/f'],
          refused: [],
        });
      }
      expect((await viewOf(local, u)).feeds).toEqual(['http://x.example/feed', 'http://y.example/f']);
      expect((await importInto(u, from)).feeds).toMatchObject({ total: 3, added: 0 });
    } finally {
      await nc.close();
    }
  });
});

describe('hostile or broken servers: a clear error, nothing imported', () => {
  const cases: [string, http.RequestListener, RegExp][] = [
    [
      'answers a web page',
      (_q, s) => void s.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>'),
      /answered with a web page, not JSON/,
    ],
    [
      'answers malformed JSON',
      (_q, s) => void s.writeHead(200, { 'content-type': 'application/json' }).end('{"add": ['),
      /answered with something that is not JSON/,
    ],
    [
      'answers JSON of another shape',
      (_q, s) => void s.writeHead(200, { 'content-type': 'application/json' }).end('{"add": "x"}'),
      /JSON of another shape than expected at add/,
    ],
    [
      'sends a body over the cap',
      (_q, s) =>
        void s.writeHead(200, { 'content-type': 'application/json' }).end(`{"add":["${'x'.repeat(2 * 1024 * 1024)}"]}`),
      /over the limit of 1048576 bytes/,
    ],
    [
      'is too slow',
      (_q, s) => void setTimeout(() => s.writeHead(200).end('{}'), 3000).unref(),
      /no complete answer within 1000 ms/,
    ],
    [
      'redirects',
      (_q, s) => void s.writeHead(302, { location: 'https://elsewhere.example/' }).end(),
      /redirects to https:\/\/elsewhere.example\/: give the address the server is at now/,
    ],
    ['answers 500', (_q, s) => void s.writeHead(500).end(), /answered HTTP 500/],
  ];
  test.each(cases)('a server that %s', async (_name, handler, message) => {
    const bad = await feedServer({ '*': handler });
    try {
      const u = await local.user('hostile');
      const failed = await runImport(
        local.db,
        u.id,
        { source: 'nextcloud', serverUrl: bad.url(''), remoteUser: 'a', password: 'b' },
        { ...OPTIONS, limits: { ...OPTIONS.limits, timeoutMs: 1000 }, dryRun: false },
      ).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(ImportFailed);
      expect((failed as Error).message).toMatch(message);
      expect(await count(local, 'subscriptions', u.id)).toBe(0);
    } finally {
      await bad.close();
    }
  });

  /** A gpodder v2 server with a thousand devices; `lists` answers each device's subscriptions. */
  const thousandDevices = (lists: http.RequestListener) =>
    feedServer({
      '/api/2/auth/*': (_q, s) => void s.writeHead(200).end(),
      '/api/2/devices/*': (_q, s) =>
        void s
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(Array.from({ length: 1000 }, (_, i) => ({ id: `d${i}` })))),
      '/api/2/subscriptions/*': lists,
    });
  const answer = (s: http.ServerResponse, body: unknown) =>
    void s.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  /** The reason an import from `url` into a new user failed with, under these limits. */
  async function failure(url: string, limits: Partial<RemoteLimits>, prefix: string): Promise<string> {
    const u = await local.user(prefix);
    const from = { source: 'gpodder' as const, serverUrl: url, remoteUser: 'a', password: 'b' };
    const options = { ...OPTIONS, limits: { ...OPTIONS.limits, ...limits }, dryRun: false };
    const failed = await runImport(local.db, u.id, from, options).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ImportFailed);
    expect([await count(local, 'devices', u.id), await count(local, 'subscriptions', u.id)]).toEqual([0, 0]);
    return (failed as Error).message;
  }

  test('a server that answers each request in time, but slowly and for ever, is stopped at the deadline of the whole import', async () => {
    const slow = await thousandDevices((_q, s) => void setTimeout(() => answer(s, { add: [] }), 100).unref());
    try {
      expect(await failure(slow.url(''), { timeoutMs: 5000, totalMs: 1000 }, 'forever')).toBe(
        `${slow.url('')} did not give everything within 1 s, the longest an import may read another server ` +
          '(IMPORT_TOTAL_TIMEOUT): nothing was imported. Try again later, or ask the administrator',
      );
      expect(slow.requests.length).toBeLessThan(1000);
    } finally {
      await slow.close();
    }
  });

  test('a server that sends more in all than an import may read is stopped there, each answer under its own cap', async () => {
    const feed = (n: string) => `https://many.example/${n}/${'x'.repeat(300_000)}`;
    const big = await thousandDevices((q, s) => answer(s, { add: [feed(q.url!)] }));
    try {
      expect(await failure(big.url(''), { maxBytes: 1024 * 1024, totalBytes: 1024 * 1024 }, 'endless')).toBe(
        `${big.url('')} sent more than 1 MiB, the most an import may read from another server ` +
          '(IMPORT_TOTAL_MAX_BYTES): nothing was imported. Ask the administrator',
      );
      // Three lists of 300 kB fit, the fourth does not: nothing more was asked for.
      expect(big.requests.filter((r) => r.path.startsWith('/api/2/subscriptions/'))).toHaveLength(4);
    } finally {
      await big.close();
    }
  });

  test('a server that is down, and an address that is not one', async () => {
    const u = await local.user('down');
    const down = await importInto(u, {
      source: 'gpodder',
      serverUrl: 'http://127.0.0.1:1',
      remoteUser: 'a',
      password: 'b',
    }).catch((e: unknown) => e);
    expect((down as Error).message).toMatch(/^http:\/\/127\.0\.0\.1:1: ECONNREFUSED/);
    const notUrl = await importInto(u, {
      source: 'gpodder',
      serverUrl: 'gpodder.net',
      remoteUser: 'a',
      password: 'b',
    }).catch((e: unknown) => e);
    expect((notUrl as Error).message).toBe(
      "gpodder.net is not a URL: give the server's address, like https://gpodder.net",
    );
  });

  test('under the feed fetcher’s policy, a loopback server is refused before any request', async () => {
    const u = await local.user('policy');
    const r = await remoteUserWithHistory();
    const failed = await runImport(
      local.db,
      u.id,
      { source: 'gpodder', serverUrl: remoteUrl, remoteUser: r.name, password: r.password },
      {
        ...OPTIONS,
        policy: { allowPrivate: false, allowCidrs: [] },
        dryRun: false,
      },
    ).catch((e: unknown) => e);
    expect((failed as Error).message).toBe(`${remoteUrl}: refused address: loopback address 127.0.0.1`);
  });
});

describe('the archive', () => {
  /** A user with history: a moved feed (URL history), a changed guid, an unsubscribed record, actions, devices. */
  async function userWithHistory(t: TestApp) {
    const u = await t.user('archived');
    const api = as(t, u);
    const posted = await api.post('/v1/subscriptions', {
      subscriptions: [
        { feed_url: 'https://moved.example/old.xml' },
        { feed_url: 'https://renamed.example/feed' },
        { feed_url: 'https://left.example/feed' },
        { feed_url: 'https://plain.example/feed' },
      ],
    });
    const guid = (url: string) =>
      posted.body.success.find((s: { feed_url: string }) => s.feed_url === url).guid as string;
    await api
      .patch(`/v1/subscriptions/${guid('https://moved.example/old.xml')}`, {
        new_feed_url: 'https://moved.example/new.xml',
      })
      .expect(200);
    await api
      .patch(`/v1/subscriptions/${guid('https://renamed.example/feed')}`, {
        new_guid: '0e4b1c2a-7d3f-4a8e-9b6c-5d2e1f0a9b8c',
      })
      .expect(200);
    await api.patch(`/v1/subscriptions/${guid('https://left.example/feed')}`, { is_subscribed: false }).expect(200);
    await api.post(`/api/2/devices/${u.name}/tablet.json`, { caption: 'Tablet', type: 'mobile' }).expect(200);
    await api
      .post(`/api/2/episodes/${u.name}.json`, [
        {
          podcast: 'https://moved.example/old.xml',
          episode: 'https://moved.example/1.mp3',
          action: 'play',
          timestamp: '2024-03-04T05:06:07.891Z',
          position: 77,
          device: 'tablet',
          guid: 'g1',
        },
        {
          podcast: 'https://plain.example/feed',
          episode: 'https://plain.example/e.mp3',
          action: 'new',
          timestamp: '2024-03-05T00:00:00Z',
        },
      ])
      .expect(200);
    return u;
  }

  /** The OPA view of a user: each record's URL, guid and state (times differ: a restore is a new change). */
  async function opaView(t: TestApp, u: TestUser) {
    const r = await as(t, u).get('/v1/subscriptions?per_page=100');
    return (r.body.subscriptions as { feed_url: string; guid: string; is_subscribed: boolean }[])
      .map(({ feed_url, guid, is_subscribed }) => ({ feed_url, guid, is_subscribed }))
      .sort((a, b) => a.feed_url.localeCompare(b.feed_url));
  }

  test('round-trips from one castsync to another: the same OPA view, URL and guid history, actions and devices', async () => {
    const source = await userWithHistory(remote);
    const archive = await exportArchive(remote.db, source.id, source.name);
    expect(archive).toMatchObject({ format: 'castsync-archive', version: 1, user: source.name });
    const moved = archive.subscriptions.find((s) => s.feed_url === 'https://moved.example/new.xml')!;
    expect(moved.other_urls).toEqual(['https://moved.example/old.xml']);
    const renamed = archive.subscriptions.find((s) => s.feed_url === 'https://renamed.example/feed')!;
    expect(renamed.earlier_guids).toHaveLength(1);

    const u = await local.user('restored');
    const document = JSON.stringify(archive);
    const summary = await importInto(u, { source: 'archive', document });
    expect(summary.feeds).toMatchObject({ total: 4, added: 4, refused: [] });
    expect(summary.actions).toMatchObject({ total: 2, added: 2 });
    expect(summary.devices).toMatchObject({ total: 1, added: 1 });

    expect(await opaView(local, u)).toEqual(await opaView(remote, source));
    expect((await opaView(local, u)).find((r) => r.feed_url === 'https://left.example/feed')!.is_subscribed).toBe(
      false,
    );
    expect(await viewOf(local, u)).toEqual(await viewOf(remote, source));
    // Exported again, the same archive, but for the times of the changes (a restore is a change of its own).
    const timeless = (a: typeof archive) => ({
      ...a,
      exported_at: '',
      subscriptions: a.subscriptions.map((r) => ({
        ...r,
        subscription_changed: '',
        guid_changed: r.guid_changed && '',
      })),
    });
    expect(timeless(await exportArchive(local.db, u.id, source.name))).toEqual(timeless(archive));

    // The history came too: the old URL and the earlier guid still name their records.
    const byOldUrl = await as(local, u).post('/v1/subscriptions', {
      subscriptions: [{ feed_url: 'https://moved.example/old.xml' }],
    });
    expect(byOldUrl.body.success[0].guid).toBe(moved.guid);
    const byOldGuid = await as(local, u).get(`/v1/subscriptions/${renamed.earlier_guids[0]}`);
    expect(byOldGuid.body).toMatchObject({ feed_url: 'https://renamed.example/feed', new_guid: renamed.guid });
    // Restoring twice adds nothing.
    const records = await local.db.query('SELECT * FROM subscriptions WHERE user_id = $1 ORDER BY id', [u.id]);
    const again = await importInto(u, { source: 'archive', document });
    expect([again.feeds.added, again.actions.added, again.devices.added]).toEqual([0, 0, 0]);
    expect(again.feeds.refused).toEqual([]);
    expect((await local.db.query('SELECT * FROM subscriptions WHERE user_id = $1 ORDER BY id', [u.id])).rows).toEqual(
      records.rows,
    );
    expect(await count(local, 'episode_actions', u.id)).toBe(2);
  });

  test('a record that names an earlier guid or another URL twice (or one URL in two spellings) restores, each named once', async () => {
    const source = await userWithHistory(remote);
    const archive = await exportArchive(remote.db, source.id, source.name);
    const moved = archive.subscriptions.find((s) => s.feed_url === 'https://moved.example/new.xml')!;
    // itpc:// names the http:// feed: the two are one URL by the rules.
    moved.other_urls.push(
      'https://moved.example/old.xml',
      'http://moved.example/extra',
      'itpc://moved.example/extra',
      moved.feed_url,
    );
    const renamed = archive.subscriptions.find((s) => s.feed_url === 'https://renamed.example/feed')!;
    const [earlier] = renamed.earlier_guids;
    renamed.earlier_guids.push(earlier!, renamed.guid);

    const u = await local.user('repeats');
    const summary = await importInto(u, { source: 'archive', document: JSON.stringify(archive) });
    expect(summary.feeds).toMatchObject({ total: 4, added: 4, refused: [] });
    expect(await opaView(local, u)).toEqual(await opaView(remote, source));
    const restored = (await exportArchive(local.db, u.id, source.name)).subscriptions;
    expect(restored.find((s) => s.guid === moved.guid)!.other_urls).toEqual([
      'http://moved.example/extra',
      'https://moved.example/old.xml',
    ]);
    expect(restored.find((s) => s.guid === renamed.guid)!.earlier_guids).toEqual([earlier]);
  });

  test('an action the store cannot hold is refused and named; the rest are stored, and again the same', async () => {
    const source = await userWithHistory(remote);
    const archive = await exportArchive(remote.db, source.id, source.name);
    const [first] = archive.episode_actions;
    // Between the two good actions: one a broken export could hold (a position past what the store keeps).
    archive.episode_actions.splice(1, 0, { ...first, episode: 'https://moved.example/huge.mp3', position: 2 ** 31 });
    const u = await local.user('oversized');
    const document = JSON.stringify(archive);
    for (const run of ['first', 'again']) {
      const summary = await importInto(u, { source: 'archive', document });
      expect(summary.actions).toMatchObject({
        total: 3,
        added: run === 'first' ? 2 : 0,
        refused: [{ item: 'action 1', reason: expect.stringMatching(/^position: whole seconds/) }],
      });
    }
    expect(await count(local, 'episode_actions', u.id)).toBe(2);
  });

  test('a dry run of an archive changes nothing', async () => {
    const source = await userWithHistory(remote);
    const document = JSON.stringify(await exportArchive(remote.db, source.id, source.name));
    const u = await local.user('dryarchive');
    const preview = await importInto(u, { source: 'archive', document }, true);
    expect(preview.feeds).toMatchObject({ total: 4, added: 4 });
    expect(preview.actions).toMatchObject({ total: 2, added: 2 });
    for (const table of ['subscriptions', 'episode_actions', 'devices'])
      expect(await count(local, table, u.id)).toBe(0);
  });

  test('a preview holds up none of the user’s apps while it runs, and counts what the import then adds', async () => {
    const u = await local.user('previewing');
    const play = (n: number) => ({
      podcast: 'https://preview.example/feed',
      episode: `https://preview.example/${n}.mp3`,
      action: 'play',
      timestamp: '2024-05-06T07:08:09Z',
      position: n,
    });
    await as(local, u)
      .post(`/api/2/episodes/${u.name}.json`, [play(1)])
      .expect(200);
    // Two batches, the second read only when the test lets it: the preview is part way meanwhile. Play 1
    // is the user's already, play 2 comes in both batches: 2 and 3 are new.
    let goOn = () => {};
    const paused = new Promise<void>((resolve) => (goOn = resolve));
    let firstDone = () => {};
    const firstRead = new Promise<void>((resolve) => (firstDone = resolve));
    const actions = {
      total: 4,
      batches: async function* () {
        yield [play(1), play(2)];
        firstDone();
        await paused;
        yield [play(2), play(3)];
      },
    };
    const snapshot = { devices: [], subscribed: [], removed: [], actions };
    const options = { progress: () => undefined };
    const preview = importSnapshot(local.db, u.id, snapshot, { ...options, dryRun: true });
    await firstRead;
    const before = await lastChange(local, u.id);
    const app = as(local, u).post(`/api/2/subscriptions/${u.name}/phone.json`, {
      add: ['https://preview.example/other'],
      remove: [],
    });
    const answered = await Promise.race([
      app.then((r) => r.status),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2000)),
    ]);
    goOn();
    expect(answered).toBe(200);
    expect((await app).status).toBe(200);
    expect(await lastChange(local, u.id)).not.toEqual(before);

    expect((await preview).actions).toMatchObject({ total: 4, added: 2, refused: [] });
    expect(await count(local, 'episode_actions', u.id)).toBe(1);
    const imported = await importSnapshot(local.db, u.id, snapshot, { ...options, dryRun: false });
    expect(imported.actions).toMatchObject({ total: 4, added: 2, refused: [] });
    expect(await count(local, 'episode_actions', u.id)).toBe(3);
  });

  test.each([
    ['not JSON', 'hello', 'This is not a castsync archive: it is not JSON'],
    [
      'JSON of something else',
      '{"subscriptions": []}',
      'This is not a castsync archive (the "format" field is not "castsync-archive")',
    ],
    [
      'of a newer format version',
      '{"format": "castsync-archive", "version": 2}',
      'This archive is of format version 2, newer than this castsync reads (1): upgrade castsync to import it',
    ],
  ])('a file that is %s is a clear error and nothing is written', async (_name, document, message) => {
    const u = await local.user('badarchive');
    await expect(importInto(u, { source: 'archive', document })).rejects.toThrow(message);
    expect(await count(local, 'subscriptions', u.id)).toBe(0);
  });

  test('a damaged archive says where, and nothing is written (every part is checked first)', async () => {
    const source = await userWithHistory(remote);
    const archive = await exportArchive(remote.db, source.id, source.name);
    (archive.subscriptions[2] as { guid: unknown }).guid = 42;
    const u = await local.user('damaged');
    await expect(importInto(u, { source: 'archive', document: JSON.stringify(archive) })).rejects.toThrow(
      'This castsync archive is damaged at subscriptions.2.guid: Invalid input: expected string, received number',
    );
    for (const table of ['subscriptions', 'episode_actions', 'devices'])
      expect(await count(local, table, u.id)).toBe(0);
  });
});

describe('the web page: download my data, and imports as jobs', () => {
  const JOB = {
    logger: pino({ level: 'silent' }),
    limits: { timeoutMs: 5000, maxBytes: 1024 * 1024, totalMs: 60_000, totalBytes: 16 * 1024 * 1024 },
    archive: ARCHIVE_LIMITS,
  };
  const jobs = async (): Promise<number[]> =>
    (
      await local.db.query(
        `SELECT (j.payload->>'importId')::int AS id FROM graphile_worker._private_jobs j
            JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = 'import' ORDER BY j.id`,
      )
    ).rows.map((r: { id: number }) => r.id);
  /** Runs the queued import jobs as the worker would (one attempt each), and takes them off the queue. */
  async function runJobs(policy = { allowPrivate: true, allowCidrs: [] }, limits = JOB.limits) {
    for (const id of await jobs()) await runImportJob({ ...JOB, db: local.db, policy, limits }, id);
    await local.db.query(`DELETE FROM graphile_worker._private_jobs`);
  }

  test('a preview, then an import, from another server: queued, shown running and then done, password kept only until the end', async () => {
    const r = await remoteUserWithHistory();
    const u = await local.user('web');
    const { agent, csrf } = await signedInAgent(local.app, u.name, u.password);
    const form = { _csrf: csrf, source: 'gpodder', server_url: remoteUrl, remote_user: r.name, password: r.password };
    const preview = await agent
      .post('/web/import')
      .type('form')
      .send({ ...form, action: 'preview' });
    expect(preview.status).toBe(303);
    expect(preview.headers.location).toMatch(/^\/web\/moving\?started=\d+$/);
    const queued = await agent.get(preview.headers.location!);
    expect(queued.text).toContain('Started: this page shows how far it is.');
    expect(queued.text).toContain(`Preview of ${r.name} at ${remoteUrl}`);
    expect(queued.text).toContain('Waiting to start.');
    expect(queued.text).toContain('<div id="imports" data-running="true" aria-live="polite">');
    const stored = await local.db.query('SELECT secret FROM imports WHERE user_id = $1', [u.id]);
    expect(stored.rows).toEqual([{ secret: r.password }]);

    await runJobs();
    const previewed = await agent.get('/web/moving');
    expect(previewed.text).toContain('Preview done: nothing was changed. Importing would bring');
    expect(previewed.text).toMatch(/3 new of 3 feeds, 3 new of 3 episode actions\s+and 2 new of 2 devices/);
    expect(previewed.text).toContain('<div id="imports" data-running="false" aria-live="polite">');
    expect(await count(local, 'subscriptions', u.id)).toBe(0);

    await agent
      .post('/web/import')
      .type('form')
      .send({ ...form, action: 'import' })
      .expect(303);
    await runJobs();
    const done = await agent.get('/web/moving');
    expect(done.text).toMatch(/Done: imported\s+3 new of 3 feeds, 3 new of 3 episode actions/);
    expect(done.text).toContain('1 feeds you had removed there are not brought.');
    expect(await viewOf(local, u)).toEqual(await viewOf(remote, r));
    const secrets = await local.db.query('SELECT state, secret FROM imports WHERE user_id = $1 ORDER BY id', [u.id]);
    expect(secrets.rows).toEqual([
      { state: 'done', secret: null },
      { state: 'done', secret: null },
    ]);
  });

  test('the web page’s import is under the fetcher’s address policy: a loopback server fails clearly', async () => {
    const r = await remoteUserWithHistory();
    const u = await local.user('webpolicy');
    const { agent, csrf } = await signedInAgent(local.app, u.name, u.password);
    await agent
      .post('/web/import')
      .type('form')
      .send({
        _csrf: csrf,
        source: 'nextcloud',
        server_url: remoteUrl,
        remote_user: r.name,
        password: r.password,
        action: 'import',
      })
      .expect(303);
    await runJobs({ allowPrivate: false, allowCidrs: [] });
    const page = await agent.get('/web/moving');
    expect(page.text).toContain(`Failed: ${remoteUrl}: refused address: loopback address 127.0.0.1`);
    expect(await count(local, 'subscriptions', u.id)).toBe(0);
    expect((await local.db.query('SELECT secret FROM imports WHERE user_id = $1', [u.id])).rows).toEqual([
      { secret: null },
    ]);
  });

  test('an import that outlasts the deadline of the whole import fails, and the page says why', async () => {
    const slow = await feedServer({
      '*': (_q, s) => void setTimeout(() => s.writeHead(200, { 'content-type': 'application/json' }).end('[]'), 100),
    });
    try {
      const u = await local.user('webslow');
      const { agent, csrf } = await signedInAgent(local.app, u.name, u.password);
      const form = { _csrf: csrf, source: 'gpodder', server_url: slow.url(''), remote_user: 'a', password: 'b' };
      await agent
        .post('/web/import')
        .type('form')
        .send({ ...form, action: 'import' })
        .expect(303);
      await runJobs(undefined, { ...JOB.limits, totalMs: 150 });
      expect((await agent.get('/web/moving')).text).toContain(
        `Failed: ${slow.url('')} did not give everything within 0.15 s, the longest an import may read another ` +
          'server (IMPORT_TOTAL_TIMEOUT): nothing was imported. Try again later, or ask the administrator',
      );
    } finally {
      await slow.close();
    }
  });

  test('one import at a time: a second one, from a server or an archive, is refused while the first is queued or running', async () => {
    const r = await remoteUserWithHistory();
    const u = await local.user('onceonly');
    const { agent, csrf } = await signedInAgent(local.app, u.name, u.password);
    const form = { _csrf: csrf, source: 'gpodder', server_url: remoteUrl, remote_user: r.name, password: r.password };
    const fromServer = (action: string) =>
      agent
        .post('/web/import')
        .type('form')
        .send({ ...form, action });
    const document = archiveText(await exportArchive(local.db, u.id, u.name));
    const fromArchive = () =>
      agent
        .post('/web/import/archive')
        .field('_csrf', csrf)
        .field('action', 'import')
        .attach('archive', Buffer.from(document), 'archive.json');
    const refusal =
      'Another import into this account is queued or running: one at a time, so start this one when it is done.';
    expect((await fromServer('preview')).status).toBe(303);
    expect((await agent.get('/web/moving')).text).toMatch(
      /One import\s+at a time: the next one can start when this one is done\./,
    );
    for (const state of ['queued', 'running']) {
      await local.db.query('UPDATE imports SET state = $2 WHERE user_id = $1', [u.id, state]);
      for (const second of [await fromServer('import'), await fromArchive()]) {
        expect(second.status).toBe(400);
        expect(second.text).toContain(refusal);
      }
    }
    expect(await count(local, 'imports', u.id)).toBe(1);
    // Once it ended, the next one is taken; and another user's import was never in the way.
    await runJobs();
    expect((await fromServer('import')).status).toBe(303);
    const other = await local.user('onceother');
    expect(await startImport(local.db, other.id, { source: 'archive', upload: [Buffer.from(document)] }, true)).toEqual(
      expect.any(Number),
    );
    await runJobs();
    expect(await count(local, 'imports', u.id)).toBe(2);
  });

  test('an archive of many actions castsync refuses: all counted, the first 50 kept with why, the summary small', async () => {
    const u = await local.user('manyrefused');
    const { agent } = await signedInAgent(local.app, u.name, u.password);
    // 100,000 actions with nothing in them, 300 kB: each refused.
    const n = 100_000;
    const head = { format: 'castsync-archive', version: 1, exported_at: '2024-01-01T00:00:00Z', user: 'x' };
    const document = JSON.stringify({ ...head, devices: [], subscriptions: [], episode_actions: Array(n).fill({}) });
    await startImport(local.db, u.id, { source: 'archive', upload: [Buffer.from(document)] }, false);
    await runJobs();
    const stored = await local.db.query<{ summary: Summary; size: number }>(
      'SELECT summary, pg_column_size(summary) AS size FROM imports WHERE user_id = $1',
      [u.id],
    );
    const { summary, size } = stored.rows[0]!;
    expect(summary.actions).toMatchObject({ total: n, added: 0, refusedCount: n });
    expect(summary.actions.refused).toHaveLength(50);
    expect(summary.actions.refused[49]).toEqual({
      item: 'action 49',
      reason: expect.stringMatching(/^podcast is required/),
    });
    expect(size).toBeLessThan(20_000);
    const page = (await agent.get('/web/moving')).text;
    expect(page).toContain(`${n} items were refused by castsync's rules:`);
    expect(page.match(/<li><span class="wrap">action \d+<\/span>/g)).toHaveLength(20);
  });

  test('a bad form is shown again with the reason, and nothing is queued', async () => {
    const u = await local.user('webbad');
    const { agent, csrf } = await signedInAgent(local.app, u.name, u.password);
    const r = await agent.post('/web/import').type('form').send({
      _csrf: csrf,
      source: 'gpodder',
      server_url: 'gpodder.net',
      remote_user: 'me',
      password: 'x',
      action: 'import',
    });
    expect(r.status).toBe(400);
    expect(r.text).toContain('gpodder.net is not a URL');
    expect(r.text).toContain('value="me"');
    expect(await count(local, 'imports', u.id)).toBe(0);
  });

  test('an import cut off by a crash runs again from its job and says it was resumed', async () => {
    const r = await remoteUserWithHistory();
    const u = await local.user('resumed');
    const { agent, csrf } = await signedInAgent(local.app, u.name, u.password);
    await agent
      .post('/web/import')
      .type('form')
      .send({
        _csrf: csrf,
        source: 'gpodder',
        server_url: remoteUrl,
        remote_user: r.name,
        password: r.password,
        action: 'import',
      })
      .expect(303);
    // As a worker that died mid-import leaves it: begun once, running, its job still queued.
    await local.db.query(
      `UPDATE imports SET state = 'running', runs = 1, progress = 'storing episode actions (0 of 3)' WHERE user_id = $1`,
      [u.id],
    );
    expect((await agent.get('/web/moving')).text).toContain('Running: storing episode actions (0 of 3).');
    await runJobs();
    const page = await agent.get('/web/moving');
    expect(page.text).toMatch(/Done: imported\s+3 new of 3 feeds[^<]*\(resumed after a restart\)/);
    expect(await viewOf(local, u)).toEqual(await viewOf(remote, r));
  });

  test('download my data is streamed a page of actions at a time and is the archive written whole', async () => {
    const empty = await remote.user('streamempty');
    const source = await remote.user('streamed');
    const api = as(remote, source);
    // 1,201 actions: more than two pages of the archive's read, in uploads of 300, with an ordinary and a
    // device-less action, and text that JSON escapes.
    for (let from = 0; from < 1201; from += 300) {
      const batch = Array.from({ length: Math.min(300, 1201 - from) }, (_, k) => ({
        podcast: 'https://s.example/feed',
        episode: `https://s.example/${from + k}.mp3?q="a\\b"`,
        action: 'play',
        timestamp: new Date(Date.UTC(2024, 0, 1) + (from + k) * 60_000).toISOString().slice(0, 19),
        started: 0,
        position: from + k,
        total: 3600,
        ...(k % 2 === 0 && { device: 'phone' }),
      }));
      await api.post(`/api/2/episodes/${source.name}.json`, batch).expect(200);
    }
    for (const u of [empty, source]) {
      const { agent } = await signedInAgent(remote.app, u.name, u.password);
      const download = await agent.get('/web/export').buffer(true);
      expect(download.status).toBe(200);
      // Sent as it is read, without a length.
      expect(download.headers['transfer-encoding']).toBe('chunked');
      expect(download.headers['content-length']).toBeUndefined();
      const archive = JSON.parse(download.text);
      // The same text, byte for byte, as the archive written whole (the CLI's and the idle archive's).
      expect(download.text).toBe(JSON.stringify(archive, null, 2) + '\n');
      expect({ ...archive, exported_at: '' }).toEqual({
        ...(await exportArchive(remote.db, u.id, u.name)),
        exported_at: '',
      });
    }
    const { agent } = await signedInAgent(remote.app, source.name, source.password);
    const actions = JSON.parse((await agent.get('/web/export')).text).episode_actions;
    expect(actions).toHaveLength(1201);
    expect(actions.map((a: { position: number }) => a.position)).toEqual(Array.from({ length: 1201 }, (_, k) => k));
    expect(actions[0]).toEqual({
      podcast: 'https://s.example/feed',
      episode: 'https://s.example/0.mp3?q="a\\b"',
      action: 'play',
      timestamp: '2024-01-01T00:00:00.000Z',
      device: 'phone',
      started: 0,
      position: 0,
      total: 3600,
    });
    expect(actions[1].device).toBeUndefined();
    const none = JSON.parse(
      (await (await signedInAgent(remote.app, empty.name, empty.password)).agent.get('/web/export')).text,
    );
    expect(none.episode_actions).toEqual([]);

    // The database failing before the first piece: an error page, not a download of it.
    await remote.db.query('ALTER TABLE devices RENAME TO devices_away');
    try {
      const broken = await agent.get('/web/export');
      expect(broken.status).toBe(500);
      expect(broken.headers['content-type']).toMatch(/^text\/html/);
      expect(broken.headers['content-disposition']).toBeUndefined();
    } finally {
      await remote.db.query('ALTER TABLE devices_away RENAME TO devices');
    }
  });

  test('download my data gives the archive; restoring it on the page brings the same OPA view', async () => {
    const source = await remote.user('webarchive');
    await as(remote, source)
      .post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://w.example/feed' }] })
      .expect(200);
    const from = await signedInAgent(remote.app, source.name, source.password);
    const download = await from.agent.get('/web/export');
    expect(download.status).toBe(200);
    expect(download.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(download.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="?castsync-${source.name}-\\d{4}-\\d{2}-\\d{2}\\.json"?$`),
    );
    const archive = JSON.parse(download.text);
    expect(archive.subscriptions.map((s: { feed_url: string }) => s.feed_url)).toEqual(['https://w.example/feed']);

    const u = await local.user('webrestore');
    const into = await signedInAgent(local.app, u.name, u.password);
    const notArchive = await into.agent
      .post('/web/import/archive')
      .field('_csrf', into.csrf)
      .field('action', 'import')
      .attach('archive', Buffer.from('<opml/>'), 'subs.opml');
    expect(notArchive.status).toBe(400);
    expect(notArchive.text).toContain('This is not a castsync archive: it is not JSON');
    const sent = await into.agent
      .post('/web/import/archive')
      .field('_csrf', into.csrf)
      .field('action', 'import')
      .attach('archive', Buffer.from(download.text), 'archive.json');
    expect(sent.status).toBe(303);
    await runJobs();
    expect(
      (await as(local, u).get('/v1/subscriptions')).body.subscriptions.map((s: { guid: string; feed_url: string }) => [
        s.feed_url,
        s.guid,
      ]),
    ).toEqual(
      (await as(remote, source).get('/v1/subscriptions')).body.subscriptions.map(
        (s: { guid: string; feed_url: string }) => [s.feed_url, s.guid],
      ),
    );
    expect((await local.db.query('SELECT secret FROM imports WHERE user_id = $1', [u.id])).rows).toEqual([
      { secret: null },
    ]);
  });
});
