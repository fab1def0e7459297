import request from 'supertest';
import { addUser, approveLoginFlow } from '../../src/auth/service';
import { antennaPodLogin, as, sessionCookieOf, testApp, type TestApp, type TestUser } from '../helpers/app';

// The call sequences today's apps send, with their headers, replayed through HTTP. A Nextcloud-mode app's
// episode actions (no device field) are in episodes.test.ts.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

test('AntennaPod (gpodder.net mode): login with plain/text, then the cookie only', async () => {
  const u: TestUser = await t.user();
  await as(t, u).post('/v1/subscriptions', {
    subscriptions: [{ feed_url: 'https://replay.example/other-device.xml' }],
  });
  const ua = 'AntennaPod/3.6.1';
  const login = await antennaPodLogin(t, u, { 'User-Agent': ua });
  expect(login.status).toBe(200);
  const jar = `sessionid=${sessionCookieOf(login)}`;
  const withCookie = (r: request.Test) => r.set('Cookie', jar).set('User-Agent', ua);
  const devices = await withCookie(request(t.app).get(`/api/2/devices/${u.name}.json`));
  expect(devices.status).toBe(200);
  expect(devices.headers['cache-control']).toBe('no-store');
  const configured = await withCookie(
    request(t.app).post(`/api/2/devices/${u.name}/antennapod_phone.json`).set('Content-Type', 'application/json'),
  ).send('{"caption":"AntennaPod on Pixel","type":"mobile"}');
  expect(configured.status).toBe(200);
  const first = await withCookie(request(t.app).get(`/api/2/subscriptions/${u.name}/antennapod_phone.json?since=0`));
  expect(first.body.add).toEqual(['https://replay.example/other-device.xml']);
  const pushed = await withCookie(
    request(t.app).post(`/api/2/subscriptions/${u.name}/antennapod_phone.json`).set('Content-Type', 'application/json'),
  ).send(
    JSON.stringify({
      add: ['https://replay.example/local-1.xml', 'https://replay.example/other-device.xml'],
      remove: [],
    }),
  );
  expect(pushed.status).toBe(200);
  expect(pushed.body.update_urls).toEqual([]);
  const next = await withCookie(
    request(t.app).get(`/api/2/subscriptions/${u.name}/antennapod_phone.json?since=${pushed.body.timestamp}`),
  );
  expect(next.body.add).toEqual(expect.arrayContaining(['https://replay.example/local-1.xml']));
  const v1 = await as(t, u).get('/v1/subscriptions');
  expect(v1.body.total).toBe(2);
});

test('Kasts: Basic on every request, since = timestamp + 1, percent-encoded URLs as stored, link all, logout', async () => {
  const u = await t.user();
  const kasts = (r: request.Test) =>
    r.set('Authorization', u.basic).set('User-Agent', 'Kasts/23.08').set('Content-Type', 'application/json');
  const url = 'https://replay.example/a%20b/feed.xml?x=%C3%A9';
  const added = await kasts(request(t.app).post(`/api/2/subscriptions/${u.name}/kasts.host.lan.json`)).send({
    add: [url],
    remove: [],
  });
  expect(added.status).toBe(200);
  let since = 0;
  const pull = async () => {
    const r = await kasts(request(t.app).get(`/api/2/subscriptions/${u.name}/kasts.host.lan.json?since=${since}`));
    expect(r.status).toBe(200);
    since = (r.body.timestamp as number) + 1;
    return r.body as { add: string[]; remove: string[] };
  };
  // Exactly as stored, never re-encoded: Kasts percent-decodes what it gets.
  expect((await pull()).add).toEqual([url]);
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://replay.example/later.xml' }] });
  expect((await pull()).add).toContain('https://replay.example/later.xml');
  await kasts(request(t.app).post(`/api/2/devices/${u.name}/other.json`)).send({});
  const link = await kasts(request(t.app).post(`/api/2/sync-devices/${u.name}.json`)).send({
    synchronize: [['kasts.host.lan', 'other']],
    'stop-synchronize': [],
  });
  expect(link.body).toEqual({ synchronized: [['kasts.host.lan', 'other']], 'not-synchronized': [] });
  const out = await kasts(request(t.app).post(`/api/2/auth/${u.name}/logout.json`)).send('');
  expect(out.status).toBe(200);
});

test('a Nextcloud-mode app: login flow v2 with polling, then Basic with the app password', async () => {
  const u = await t.user();
  const ua = 'AntennaPod/3.6.1';
  const start = await request(t.app).post('/index.php/login/v2').set('User-Agent', ua);
  const { poll, login } = start.body as { poll: { token: string; endpoint: string }; login: string };
  const pollPath = new URL(poll.endpoint).pathname;
  const ask = () =>
    request(t.app)
      .post(pollPath)
      .set('User-Agent', ua)
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send(`token=${encodeURIComponent(poll.token)}`);
  expect((await ask()).status).toBe(404);
  expect(await approveLoginFlow(t.db, decodeURIComponent(new URL(login).pathname.split('/').pop()!), u.id)).toBe(true);
  const granted = await ask();
  expect(granted.status).toBe(200);
  const app = 'Basic ' + Buffer.from(`${granted.body.loginName}:${granted.body.appPassword}`).toString('base64');
  const nc = (r: request.Test) => r.set('Authorization', app).set('User-Agent', ua);
  const created = await nc(request(t.app).post('/index.php/apps/gpoddersync/subscription_change/create'))
    .set('Content-Type', 'application/json')
    .send({ add: ['https://replay.example/nc.xml'], remove: [] });
  expect(created.status).toBe(200);
  const pulled = await nc(request(t.app).get('/index.php/apps/gpoddersync/subscriptions?since=0'));
  expect(pulled.body).toEqual({ add: ['https://replay.example/nc.xml'], remove: [], timestamp: expect.any(Number) });
  const sessions = await as(t, u).get('/v1/auth/sessions');
  expect(sessions.body.some((s: { label?: string }) => s.label === ua)).toBe(true);
});

test('AntennaPod episode sync: batches of 30 with its timestamp format, then the other device resumes from position', async () => {
  const u = await t.user();
  const ua = 'AntennaPod/3.6.1';
  const login = await request(t.app)
    .post(`/api/2/auth/${u.name}/login.json`)
    .set('Authorization', u.basic)
    .set('User-Agent', ua)
    .send('');
  const jar = `sessionid=${sessionCookieOf(login)}`;
  const actions = Array.from({ length: 45 }, (_, i) => ({
    podcast: 'https://replay.example/ap.xml',
    episode: `https://replay.example/ap/${i}.mp3`,
    guid: `ap-${i}`,
    action: 'play',
    // AntennaPod writes UTC without a zone.
    timestamp: `2026-11-22T07:${String(i).padStart(2, '0')}:05`,
    started: 0,
    position: 100 + i,
    total: 1800,
  }));
  let since = 0;
  for (let i = 0; i < actions.length; i += 30) {
    const up = await request(t.app)
      .post(`/api/2/episodes/${u.name}.json`)
      .set('Cookie', jar)
      .set('User-Agent', ua)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(actions.slice(i, i + 30)));
    expect(up.status).toBe(200);
    expect(up.body.update_urls).toEqual([]);
    since = up.body.timestamp as number;
  }
  expect(since).toBeGreaterThan(0);
  // Another device (Basic) reads everything and resumes episode 44 at its position.
  const all = await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0`);
  expect(all.body.actions).toHaveLength(45);
  expect(all.body.actions.find((a: { guid: string }) => a.guid === 'ap-44')).toMatchObject({
    position: 144,
    timestamp: '2026-11-22T07:44:05',
  });
});

test('Kasts episode sync: a first sync with aggregated=true, then since = timestamp + 1 until caught up', async () => {
  const u = await t.user();
  const kasts = (r: request.Test) => r.set('Authorization', u.basic).set('User-Agent', 'Kasts/23.08');
  for (const position of [10, 20, 30]) {
    await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
      {
        podcast: 'https://replay.example/k.xml',
        episode: 'https://replay.example/k/1.mp3',
        action: 'play',
        position,
        timestamp: `2026-11-22T08:00:${position}`,
      },
    ]);
  }
  const first = await kasts(request(t.app).get(`/api/2/episodes/${u.name}.json?since=0&aggregated=true`));
  expect(first.body.actions).toEqual([expect.objectContaining({ position: 30 })]);
  let since = (first.body.timestamp as number) + 1;
  let requests = 1;
  while (Date.now() / 1000 - (since - 1) > 10) {
    const r = await kasts(request(t.app).get(`/api/2/episodes/${u.name}.json?since=${since}`));
    requests++;
    if (r.body.actions.length === 0) break;
    since = (r.body.timestamp as number) + 1;
    expect(requests).toBeLessThan(4);
  }
  expect(requests).toBeLessThanOrEqual(2);
});

test('Kasts in Nextcloud mode: every action says "device":"" (and may say "guid":""); each is stored as the account’s and read back', async () => {
  const u = await t.user();
  const kasts = (r: request.Test) =>
    r.set('Authorization', u.basic).set('User-Agent', 'Kasts/24.12').set('Content-Type', 'application/json');
  // Kasts always writes the device, and in Nextcloud mode it never has one; QJsonDocument writes the keys
  // sorted, compact. Skipping such an action would lose it: Kasts clears its queue on a 200.
  const body =
    '[{"action":"play","device":"","episode":"https://replay.example/kasts/1.mp3","guid":"kasts-1",' +
    '"podcast":"https://replay.example/kasts.xml","position":600,"started":0,"timestamp":"2026-11-20T10:00:00",' +
    '"total":1800},' +
    '{"action":"download","device":"","episode":"https://replay.example/kasts/2.mp3","guid":"",' +
    '"podcast":"https://replay.example/kasts.xml","timestamp":"2026-11-20T10:05:00"}]';
  const up = await kasts(request(t.app).post('/index.php/apps/gpoddersync/episode_action/create')).send(body);
  expect(up.status).toBe(200);
  expect(up.body).toEqual({ timestamp: expect.any(Number) });
  const read = await kasts(request(t.app).get('/index.php/apps/gpoddersync/episode_action?since=0'));
  expect(read.body.actions).toEqual([
    {
      podcast: 'https://replay.example/kasts.xml',
      episode: 'https://replay.example/kasts/1.mp3',
      guid: 'kasts-1',
      action: 'play',
      timestamp: '2026-11-20T10:00:00',
      started: 0,
      position: 600,
      total: 1800,
    },
    {
      podcast: 'https://replay.example/kasts.xml',
      episode: 'https://replay.example/kasts/2.mp3',
      action: 'download',
      timestamp: '2026-11-20T10:05:00',
    },
  ]);
  // Every device of the account reads them, as any action that names no device.
  const phone = await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0&device=phone`);
  expect(phone.body.actions).toHaveLength(2);
});

test('Kasts with the server address typed with a trailing slash: every path it sends starts with //', async () => {
  const u = await t.user();
  // Kasts keeps the address as typed and appends "/api/2/..." (src/sync/gpodder/gpodder.cpp, baseUrl()).
  const kasts = (r: request.Test) => r.set('Authorization', u.basic).set('User-Agent', 'Kasts/24.12');
  const login = await kasts(request(t.app).post(`//api/2/auth/${u.name}/login.json`)).send('');
  expect(login.status).toBe(200);
  const devices = await kasts(request(t.app).get(`//api/2/devices/${u.name}.json`));
  expect(devices.status).toBe(200);
  const added = await kasts(request(t.app).post(`//api/2/subscriptions/${u.name}/kasts-host.json`)).send(
    '{"add":["https://replay.example/slash.xml"],"remove":[]}',
  );
  expect(added.status).toBe(200);
  const pulled = await kasts(request(t.app).get(`//api/2/subscriptions/${u.name}/kasts-host.json?since=0`));
  expect(pulled.body.add).toEqual(['https://replay.example/slash.xml']);
  // The same in Nextcloud mode, where the path starts with /index.php.
  const nc = await kasts(request(t.app).get('//index.php/apps/gpoddersync/subscriptions?since=0'));
  expect(nc.body.add).toEqual(['https://replay.example/slash.xml']);
});

test('AntennaPod on the plain-http address of a server whose PUBLIC_URL is https: the cookie comes back', async () => {
  const lan = await testApp({ PUBLIC_URL: 'https://sync.example', TRUST_PROXY: 'true' });
  try {
    const u = await lan.user();
    const login = await antennaPodLogin(lan, u, { 'User-Agent': 'AntennaPod/3.6.1' });
    expect(login.status).toBe(200);
    // java.net.CookieManager, AntennaPod's cookie jar, sends a Secure cookie over https only; AntennaPod
    // sends nothing else after the login.
    const cookie = ([login.headers['set-cookie']].flat() as string[]).find((c) => c.startsWith('sessionid='))!;
    const sent = /;\s*Secure\b/i.test(cookie) ? {} : { Cookie: cookie.split(';')[0]! };
    const devices = await request(lan.app).get(`/api/2/devices/${u.name}.json`).set(sent);
    expect(devices.status).toBe(200);
    // Over https (through the proxy) it is Secure.
    const https = await request(lan.app)
      .post(`/api/2/auth/${u.name}/login.json`)
      .set('Authorization', u.basic)
      .set('X-Forwarded-Proto', 'https')
      .send('');
    expect(https.headers['set-cookie']).toEqual([expect.stringMatching(/^sessionid=.*; Secure$/)]);
  } finally {
    await lan.close();
  }
});

test('an app signed in again as someone else, its cookie jar still holding the first user’s sessionid', async () => {
  const first = await t.user();
  const second = await t.user();
  await as(t, first).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://replay.example/first.xml' }] });
  await as(t, second).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://replay.example/second.xml' }] });
  // Kasts in Nextcloud mode: Basic on every request, and Qt's cookie jar keeps what the server set while the
  // app runs; signing out sends nothing to the server (src/sync/sync.cpp, Sync::logout()).
  const before = await request(t.app)
    .get('/index.php/apps/gpoddersync/subscriptions?since=0')
    .set('Authorization', first.basic);
  const jar = `sessionid=${sessionCookieOf(before)}`;
  const kasts = await request(t.app)
    .get('/index.php/apps/gpoddersync/subscriptions?since=0')
    .set('Authorization', second.basic)
    .set('Cookie', jar);
  expect(kasts.status).toBe(200);
  expect(kasts.body.add).toEqual(['https://replay.example/second.xml']);
  // AntennaPod (gpodder.net mode): Basic on the login only, OkHttp's cookie jar kept for the process.
  const login = await antennaPodLogin(t, second, { Cookie: jar });
  expect(login.status).toBe(200);
  const next = await request(t.app)
    .get(`/api/2/subscriptions/${second.name}/phone.json?since=0`)
    .set('Cookie', `sessionid=${sessionCookieOf(login)}`);
  expect(next.body.add).toEqual(['https://replay.example/second.xml']);
  // Credentials for someone else that do not open: 401, though the cookie is valid.
  const wrong = 'Basic ' + Buffer.from(`${second.name}:not-the-password`).toString('base64');
  const refused = await request(t.app)
    .get('/index.php/apps/gpoddersync/subscriptions?since=0')
    .set('Authorization', wrong)
    .set('Cookie', jar);
  expect(refused.status).toBe(401);
});

test('the same, the second user’s name differing from the first’s only in case', async () => {
  const first = await t.user('Replay');
  const second = { ...first, name: first.name.toLowerCase(), password: 'second-user-password' };
  second.id = await addUser({ db: t.db }, second.name, second.password);
  second.basic = 'Basic ' + Buffer.from(`${second.name}:${second.password}`).toString('base64');
  await as(t, first).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://replay.example/upper.xml' }] });
  await as(t, second).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://replay.example/lower.xml' }] });
  const before = await request(t.app)
    .get('/index.php/apps/gpoddersync/subscriptions?since=0')
    .set('Authorization', first.basic);
  const kasts = await request(t.app)
    .get('/index.php/apps/gpoddersync/subscriptions?since=0')
    .set('Authorization', second.basic)
    .set('Cookie', `sessionid=${sessionCookieOf(before)}`);
  expect(kasts.status).toBe(200);
  expect(kasts.body.add).toEqual(['https://replay.example/lower.xml']);
});
