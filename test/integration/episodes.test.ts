import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import request from 'supertest';
import { performDeletion } from '../../src/deletions/service';
import { as, expectError, sleep, testApp, type TestApp, type TestUser } from '../helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const play = (episode: string, position: number, timestamp: string, extra: object = {}) => ({
  podcast: 'https://ep.example/feed.xml',
  episode: `https://ep.example/${episode}.mp3`,
  action: 'play',
  timestamp,
  position,
  ...extra,
});
const post = (u: TestUser, body: unknown) => as(t, u).post(`/api/2/episodes/${u.name}.json`, body);
const get = (u: TestUser, query = '') => as(t, u).get(`/api/2/episodes/${u.name}.json${query}`);

test('a batch is stored and read back with only the fields clients parse, timestamps to the second in UTC', async () => {
  const u = await t.user();
  const up = await post(u, [
    play('e1', 120, '2026-11-20T10:00:00', { started: 0, total: 3600, device: 'phone', guid: 'ep-guid-1' }),
    {
      podcast: 'itpc://ep.example/feed.xml',
      episode: 'https://ep.example/e2.mp3',
      action: 'DOWNLOAD',
      timestamp: '2026-11-20T09:00:00.123Z',
    },
  ]);
  expect(up.status).toBe(200);
  expect(up.body).toEqual({
    timestamp: expect.any(Number),
    update_urls: [['itpc://ep.example/feed.xml', 'http://ep.example/feed.xml']],
  });
  const down = await get(u, '?since=0');
  expect(down.body).toEqual({
    actions: [
      {
        podcast: 'https://ep.example/feed.xml',
        episode: 'https://ep.example/e1.mp3',
        guid: 'ep-guid-1',
        action: 'play',
        timestamp: '2026-11-20T10:00:00',
        device: 'phone',
        started: 0,
        position: 120,
        total: 3600,
      },
      {
        podcast: 'http://ep.example/feed.xml',
        episode: 'https://ep.example/e2.mp3',
        action: 'download',
        timestamp: '2026-11-20T09:00:00',
      },
    ],
    timestamp: expect.any(Number),
  });
  // Devices named in actions exist.
  expect((await as(t, u).get(`/api/2/devices/${u.name}.json`)).body.map((d: { id: string }) => d.id)).toEqual([
    'phone',
  ]);
});

test('one bad action never blocks the rest: 200, the good ones stored, the bad one named with its index', async () => {
  const u = await t.user();
  const good = (n: number) => play(`ok${n}`, 10, '2026-11-20T10:00:00');
  const cases = [
    [{ ...good(0), action: 'listen' }, /^action: one of/],
    [{ ...good(0), position: undefined }, /^position/],
    [{ ...good(0), position: -3 }, /^position/],
    [{ ...good(0), position: -1 }, /^position/],
    [{ ...good(0), timestamp: '20.11.2026' }, /^timestamp/],
    [{ ...good(0), timestamp: '2026-02-30T10:00:00' }, /^timestamp/],
    [{ ...good(0), podcast: 'feed.xml' }, /^podcast: No protocol present/],
    [{ ...good(0), episode: undefined }, /^episode is required/],
    [{ ...good(0), device: 'bad id' }, /^device/],
    // What the columns cannot hold (whole seconds to 2^31 - 1, years 1 to 9999) is this action's problem only.
    [{ ...good(0), position: 2 ** 31 }, /^position: whole seconds, 0 to 2147483647/],
    [{ ...good(0), started: 1e20 }, /^started: whole seconds/],
    [{ ...good(0), total: 2 ** 31 }, /^total: whole seconds/],
    [{ ...good(0), timestamp: '0000-12-31T10:00:00' }, /^timestamp: .*years 1 to 9999/],
    [{ ...good(0), timestamp: '9999-12-31T23:00:00-05:00' }, /^timestamp: .*years 1 to 9999/],
    ['not an object', /^not an object/],
  ] as const;
  for (const [k, [bad, why]] of cases.entries()) {
    const r = await post(u, [good(2 * k), bad, good(2 * k + 1)]);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      timestamp: expect.any(Number),
      update_urls: [],
      skipped: [{ index: 1, reason: expect.stringMatching(why) }],
    });
  }
  const stored = ((await get(u)).body.actions as { episode: string }[]).map((a) => a.episode);
  expect(stored).toEqual(
    cases.flatMap((_, k) => [`https://ep.example/ok${2 * k}.mp3`, `https://ep.example/ok${2 * k + 1}.mp3`]),
  );
  // A body that is not a list is still refused whole.
  expectError(await post(u, { not: 'a list' }), 400);
});

test('timestamps: no zone is UTC; a fraction, Z, an offset and +00:00 are honoured; out always UTC to the second', async () => {
  const u = await t.user();
  const r = await post(u, [
    play('z1', 1, '2026-11-22T10:00:00'),
    play('z2', 2, '2026-11-22T10:00:00.750'),
    play('z3', 3, '2026-11-22T10:00:00Z'),
    play('z4', 4, '2026-11-22T10:00:00+02:00'),
    play('z5', 5, '2026-11-22T10:00:00+00:00'),
    play('z6', 6, '2026-11-22T10:00:00.123456-05:30'),
    { ...play('z7', 7, ''), action: 'PLAY' },
  ]);
  expect(r.status).toBe(200);
  expect(r.body.skipped).toBeUndefined();
  const times = Object.fromEntries(
    ((await get(u)).body.actions as { episode: string; timestamp: string; action: string }[]).map((a) => [
      a.episode.slice(-6, -4),
      [a.timestamp, a.action],
    ]),
  );
  expect(times.z1).toEqual(['2026-11-22T10:00:00', 'play']);
  expect(times.z2).toEqual(['2026-11-22T10:00:00', 'play']);
  expect(times.z3).toEqual(['2026-11-22T10:00:00', 'play']);
  expect(times.z4).toEqual(['2026-11-22T08:00:00', 'play']);
  expect(times.z5).toEqual(['2026-11-22T10:00:00', 'play']);
  expect(times.z6).toEqual(['2026-11-22T15:30:00', 'play']);
  // An empty timestamp is the time received; upper-case actions come back in lower case.
  expect(times.z7![1]).toBe('play');
  expect(Math.abs(Date.parse(`${times.z7![0]}Z`) - Date.now())).toBeLessThan(10_000);
});

test('the Nextcloud route takes the same batches: a bad action skipped, the rest stored', async () => {
  const u = await t.user();
  const r = await as(t, u).post('/index.php/apps/gpoddersync/episode_action/create', [
    { ...play('nc1', 10, '2026-11-22T10:00:00+00:00'), action: 'PLAY' },
    { ...play('nc2', 10, '2026-11-22T10:00:00'), action: 'skip' },
    play('nc3', 2 ** 31, '2026-11-22T10:00:00'),
  ]);
  expect(r.status).toBe(200);
  expect(r.body).toEqual({
    timestamp: expect.any(Number),
    skipped: [
      { index: 1, reason: expect.any(String) },
      { index: 2, reason: expect.stringMatching(/^position: whole seconds/) },
    ],
  });
  const back = await as(t, u).get('/index.php/apps/gpoddersync/episode_action?since=0');
  expect(back.body.actions.map((a: { episode: string }) => a.episode)).toEqual(['https://ep.example/nc1.mp3']);
});

test('aggregated: a delete after a play does not hide the play position (latest per episode and action type)', async () => {
  const u = await t.user();
  await post(u, [
    play('d', 100, '2026-11-20T10:00:00'),
    play('d', 300, '2026-11-20T10:30:00'),
    { ...play('d', 0, '2026-11-20T11:00:00'), action: 'delete', position: undefined },
    { ...play('d', 0, '2026-11-20T09:00:00'), action: 'download', position: undefined },
  ]);
  const latest = (await get(u, '?aggregated=true')).body.actions as { action: string; position?: number }[];
  expect(latest.map((a) => [a.action, a.position]).sort()).toEqual([
    ['delete', undefined],
    ['download', undefined],
    ['play', 300],
  ]);
});

test('a batch retried after a timeout stores nothing twice; a missing timestamp is the time received', async () => {
  const u = await t.user();
  const batch = [play('r1', 30, '2026-11-20T10:00:00'), play('r2', 40, '2026-11-20T10:01:00', { device: 'd' })];
  await post(u, batch);
  await post(u, batch);
  expect((await get(u)).body.actions).toHaveLength(2);
  const before = Date.now();
  await post(u, [{ podcast: 'https://ep.example/feed.xml', episode: 'https://ep.example/now.mp3', action: 'new' }]);
  const now = (await get(u)).body.actions.find((a: { action: string }) => a.action === 'new');
  expect(Math.abs(Date.parse(`${now.timestamp}Z`) - before)).toBeLessThan(5000);
});

test('aggregated: the latest action of each episode by its own time; filters by podcast (any of its URLs) and device', async () => {
  const u = await t.user();
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://old.example/feed.xml' }] });
  const guid = (await as(t, u).get('/v1/subscriptions')).body.subscriptions[0].guid;
  await post(u, [
    { ...play('a', 100, '2026-11-20T10:00:00', { device: 'phone' }), podcast: 'https://old.example/feed.xml' },
    { ...play('a', 50, '2026-11-20T09:00:00', { device: 'laptop' }), podcast: 'https://old.example/feed.xml' },
  ]);
  // The feed moves; actions under the new URL belong to the same podcast.
  await as(t, u).patch(`/v1/subscriptions/${guid}`, { new_feed_url: 'https://new.example/feed.xml' });
  await post(u, [
    { ...play('b', 7, '2026-11-20T11:00:00', { device: 'laptop' }), podcast: 'https://new.example/feed.xml' },
  ]);
  await post(u, [play('c', 1, '2026-11-20T12:00:00')]);
  const latest = (await get(u, '?aggregated=true')).body.actions as { episode: string; position: number }[];
  expect(latest.map((a) => [a.episode, a.position]).sort()).toEqual([
    ['https://ep.example/a.mp3', 100],
    ['https://ep.example/b.mp3', 7],
    ['https://ep.example/c.mp3', 1],
  ]);
  const ofPodcast = (await get(u, `?podcast=${encodeURIComponent('https://old.example/feed.xml')}`)).body.actions;
  expect(ofPodcast.map((a: { episode: string }) => a.episode).sort()).toEqual([
    'https://ep.example/a.mp3',
    'https://ep.example/a.mp3',
    'https://ep.example/b.mp3',
  ]);
  // The laptop's, and c's, which names no device and so is the account's (docs/apps.md); not the phone's.
  const ofLaptop = (await get(u, '?device=laptop')).body.actions;
  expect(ofLaptop.map((a: { position: number }) => a.position)).toEqual([50, 7, 1]);
});

test('two devices: the phone plays to 600 s, the laptop sees 600; the laptop plays to 900, the phone sees 900', async () => {
  const u = await t.user();
  let phoneSince = 0;
  let laptopSince = 0;
  const sync = async (device: string, since: number, upload: object[]) => {
    if (upload.length)
      await post(
        u,
        upload.map((a) => ({ ...a, device })),
      );
    const r = await get(u, `?since=${since}&aggregated=true`);
    return r.body as { actions: { episode: string; position: number }[]; timestamp: number };
  };
  const ep = { podcast: 'https://two.example/feed.xml', episode: 'https://two.example/1.mp3', action: 'play' };
  let r = await sync('phone', phoneSince, [{ ...ep, position: 600, timestamp: '2026-11-21T08:00:00' }]);
  phoneSince = r.timestamp;
  r = await sync('laptop', laptopSince, []);
  expect(r.actions.find((a) => a.episode === ep.episode)?.position).toBe(600);
  laptopSince = r.timestamp;
  r = await sync('laptop', laptopSince, [{ ...ep, position: 900, timestamp: '2026-11-21T20:00:00' }]);
  r = await sync('phone', phoneSince, []);
  expect(r.actions.find((a) => a.episode === ep.episode)?.position).toBe(900);
});

test('Kasts: it keeps fetching while the timestamp is over 10 s behind its clock and actions come; it stops', async () => {
  const u = await t.user();
  await post(u, [play('k', 5, '2026-11-20T10:00:00')]);
  await sleep(1200);
  let since = 0;
  let rounds = 0;
  for (;;) {
    const r = await get(u, `?since=${since}&aggregated=${rounds === 0}`);
    rounds++;
    since = (r.body.timestamp as number) + 1;
    const behind = Date.now() / 1000 - (r.body.timestamp as number);
    if (!(behind > 10 && r.body.actions.length > 0)) break;
    expect(rounds).toBeLessThan(5);
  }
  expect(rounds).toBeLessThanOrEqual(2);
  // And the next sync, a little later, returns nothing new.
  expect((await get(u, `?since=${since}`)).body.actions).toEqual([]);
});

test('lossless: readers following T and T + 1 miss no action while writers upload', async () => {
  const u = await t.user();
  const seen = [new Set<string>(), new Set<string>()];
  const since = [0, 0];
  let writing = true;
  let n = 0;
  const writers = Array.from({ length: 3 }, async (_, w) => {
    while (writing) {
      const k = n++;
      await post(u, [play(`w${w}-${k}`, k, '2026-11-20T10:00:00', { device: `w${w}` })]);
    }
  });
  const readers = [0, 1].map(async (plus) => {
    while (writing) {
      const r = await get(u, `?since=${since[plus]}`);
      for (const a of r.body.actions as { episode: string }[]) seen[plus]!.add(a.episode);
      since[plus] = (r.body.timestamp as number) + plus;
    }
  });
  await sleep(2000);
  writing = false;
  await Promise.all([...writers, ...readers]);
  const all = new Set(((await get(u)).body.actions as { episode: string }[]).map((a) => a.episode));
  for (const plus of [0, 1]) {
    const r = await get(u, `?since=${since[plus]}`);
    for (const a of r.body.actions as { episode: string }[]) seen[plus]!.add(a.episode);
    expect([...all].filter((e) => !seen[plus]!.has(e))).toEqual([]);
  }
  expect(all.size).toBeGreaterThan(10);
});

test('Nextcloud-mode: create and read actions without a device, with and without /index.php', async () => {
  const u = await t.user();
  const created = await as(t, u).post('/index.php/apps/gpoddersync/episode_action/create', [
    {
      podcast: 'https://nc.example/feed.xml',
      episode: 'https://nc.example/1.mp3',
      action: 'PLAY',
      timestamp: '2026-11-20T10:00:00',
      started: 0,
      position: 61,
      total: 120,
      guid: 'g1',
    },
  ]);
  expect(created.status).toBe(200);
  expect(created.body).toEqual({ timestamp: expect.any(Number) });
  const read = await as(t, u).get('/apps/gpoddersync/episode_action?since=0');
  expect(read.body.actions).toEqual([
    {
      podcast: 'https://nc.example/feed.xml',
      episode: 'https://nc.example/1.mp3',
      guid: 'g1',
      action: 'play',
      timestamp: '2026-11-20T10:00:00',
      started: 0,
      position: 61,
      total: 120,
    },
  ]);
});

test("an empty device or guid is none: the action is the account's, and ?device= filters nothing", async () => {
  const u = await t.user();
  const r = await post(u, [
    play('e1', 10, '2026-11-20T10:00:00', { device: '', guid: '' }),
    play('e2', 20, '2026-11-20T10:01:00', { device: 'phone', guid: 'g2' }),
  ]);
  expect(r.body.skipped).toBeUndefined();
  const all = (await get(u)).body.actions;
  expect(all[0]).toEqual({
    podcast: 'https://ep.example/feed.xml',
    episode: 'https://ep.example/e1.mp3',
    action: 'play',
    timestamp: '2026-11-20T10:00:00',
    position: 10,
  });
  expect((await get(u, '?device=')).body.actions).toEqual(all);
  expect((await get(u, '?device=laptop')).body.actions.map((a: { position: number }) => a.position)).toEqual([10]);
});

test('deleting the subscription removes its actions; other podcasts keep theirs', async () => {
  const u = await t.user();
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://gone.example/feed.xml' }] });
  const guid = (await as(t, u).get('/v1/subscriptions')).body.subscriptions[0].guid;
  await post(u, [
    { ...play('x', 1, '2026-11-20T10:00:00'), podcast: 'https://gone.example/feed.xml' },
    play('kept', 2, '2026-11-20T10:00:00'),
  ]);
  const d = await as(t, u).del(`/v1/subscriptions/${guid}`);
  expect(d.status).toBe(202);
  // No worker runs in this app: perform the deletion the way the worker does.
  await performDeletion(t.db, pino({ level: 'silent' }), d.body.deletion_id);
  const left = (await get(u)).body.actions as { episode: string }[];
  expect(left.map((a) => a.episode)).toEqual(['https://ep.example/kept.mp3']);
  expect((await get(u, '?aggregated=true')).body.actions).toHaveLength(1);
});

test("an episode another podcast also played keeps that podcast's latest play when one podcast is deleted", async () => {
  // The same episode file in two feeds (a feed that moved, a paid feed beside the free one): its latest
  // play was under the podcast deleted, and the play before it, under the other, is its state again.
  const u = await t.user();
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://gone.example/feed.xml' }] });
  const guid = (await as(t, u).get('/v1/subscriptions')).body.subscriptions[0].guid;
  await post(u, [
    play('both', 20, '2026-11-20T10:00:00'),
    { ...play('both', 30, '2026-11-20T11:00:00'), podcast: 'https://gone.example/feed.xml' },
  ]);
  const before = (await as(t, u).get('/v1/episodes')).headers['sync-timestamp'] as string;
  const d = await as(t, u).del(`/v1/subscriptions/${guid}`);
  await performDeletion(t.db, pino({ level: 'silent' }), d.body.deletion_id);
  const latest = (await get(u, '?aggregated=true')).body.actions;
  expect(latest).toEqual([expect.objectContaining({ podcast: 'https://ep.example/feed.xml', position: 20 })]);
  // The episode changed with the deletion: an app that synced before it learns its state again.
  type State = { podcast_url: string; playback_position?: { value: number } };
  for (const query of ['', `?since=${encodeURIComponent(before)}`]) {
    const states = (await as(t, u).get(`/v1/episodes${query}`)).body.episodes as State[];
    expect(states.map((e) => [e.podcast_url, e.playback_position?.value])).toEqual([
      ['https://ep.example/feed.xml', 20],
    ]);
  }
});

test('another user sees none of these actions, and {user} must be the signed-in user', async () => {
  const u = await t.user();
  const other = await t.user();
  await post(u, [play('mine', 1, '2026-11-20T10:00:00')]);
  expect((await get(other)).body.actions).toEqual([]);
  expectError(await as(t, other).get(`/api/2/episodes/${u.name}.json`), 401);
  expect((await request(t.app).get(`/api/2/episodes/${u.name}.json`)).status).toBe(401);
});

test('the download is compact JSON in the clients field order, strings escaped as JSON.stringify does', async () => {
  const u = await t.user();
  const odd = 'https://ep.example/"quoted"\\back\tslash/ü/😀\u0001\u2028.mp3';
  await post(u, [
    play('a', 5, '2026-11-20T10:00:00', { guid: 'g "1"', device: 'phone', started: 1, total: 99 }),
    { podcast: 'https://ep.example/feed.xml', episode: odd, action: 'download', timestamp: '2026-11-20T11:00:00' },
  ]);
  for (const query of ['?since=0', '?aggregated=true']) {
    const r = await get(u, query);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.text).toBe(JSON.stringify(r.body));
    expect(r.text.startsWith('{"actions":[{"podcast":"https://ep.example/feed.xml","episode":')).toBe(true);
  }
  const all = (await get(u, '?since=0')).body.actions;
  expect(all).toEqual([
    {
      podcast: 'https://ep.example/feed.xml',
      episode: 'https://ep.example/a.mp3',
      guid: 'g "1"',
      action: 'play',
      timestamp: '2026-11-20T10:00:00',
      device: 'phone',
      started: 1,
      position: 5,
      total: 99,
    },
    { podcast: 'https://ep.example/feed.xml', episode: odd, action: 'download', timestamp: '2026-11-20T11:00:00' },
  ]);
  // None at all: an empty list, still valid JSON.
  const v = await t.user();
  expect((await get(v, '?since=0')).text).toMatch(/^\{"actions":\[\],"timestamp":\d+\}$/);
});

test('the JSON the migration wrote for stored actions is the JSON a new action gets', async () => {
  const u = await t.user();
  await post(u, [
    play('m', 7, '2026-11-20T10:00:00', { guid: 'q"', device: 'laptop', total: 10 }),
    { podcast: 'https://ep.example/feed.xml', episode: 'https://ep.example/ü.mp3', action: 'new' },
  ]);
  const migration = readFileSync(
    path.join(__dirname, '../../migrations/1763800000014_episode-action-json.sql'),
    'utf8',
  );
  const expression = /SET json = ([\s\S]*?);/.exec(migration)![1]!;
  const r = await t.db.query<{ stored: string; migrated: string }>(
    `SELECT a.json AS stored, ${expression} AS migrated FROM episode_actions a WHERE a.user_id = $1`,
    [u.id],
  );
  expect(r.rows).toHaveLength(2);
  for (const row of r.rows) expect(row.migrated).toBe(row.stored);
});
