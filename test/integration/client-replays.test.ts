import request from 'supertest';
import { approveLoginFlow } from '../../src/auth/service';
import { as, sessionCookieOf, testApp, type TestApp, type TestUser } from '../helpers/app';

// The call sequences today's apps send, with their headers, replayed through HTTP. Episode actions are
// not part of these replays yet.

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
  const login = await request(t.app)
    .post(`/api/2/auth/${u.name}/login.json`)
    .set('Authorization', u.basic)
    .set('User-Agent', ua)
    .set('Content-Type', 'plain/text; charset=utf-8')
    .send('');
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
