import request from 'supertest';
import { approveLoginFlow } from '../../src/auth/service';
import { testApp, type TestApp } from '../helpers/app';

// Music Assistant's gPodder provider (music_assistant/providers/gpodder), replayed
// (docs/apps.md): in "gpodder / opodsync server" mode a login, then HTTP Basic on every
// request with its device ID; in "Nextcloud" mode the login flow v2, then the app password as a bearer
// token, as Nextcloud accepts it. It reads an answer only when its content type is
// application/json and its status 200, and its play actions carry a timestamp without a zone.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const FEED = 'https://replay.example/ma.xml';
const EPISODE = 'https://replay.example/ma/1.mp3';
const json = (r: request.Response) => ({ status: r.status, type: r.type, body: r.body as unknown });

test('gpodder mode: login, subscriptions and episode actions with Basic and a device ID', async () => {
  const u = await t.user();
  const ma = (r: request.Test) => r.set('Authorization', u.basic).set('User-Agent', 'Python/3.13 aiohttp/3.12');
  expect((await ma(request(t.app).post(`/api/2/auth/${u.name}/login.json`))).status).toBe(200);
  const change = await ma(request(t.app).post(`/api/2/subscriptions/${u.name}/music-assistant.json`)).send({
    add: [FEED],
    remove: [],
  });
  expect(change.status).toBe(200);
  const subs = await ma(request(t.app).get(`/api/2/subscriptions/${u.name}/music-assistant.json?since=0`));
  expect(json(subs)).toEqual({
    status: 200,
    type: 'application/json',
    body: { add: [FEED], remove: [], timestamp: expect.any(Number) },
  });
  const play = { podcast: FEED, episode: EPISODE, timestamp: '2026-11-25T06:00:00', action: 'play' };
  const upload = await ma(request(t.app).post(`/api/2/episodes/${u.name}.json`)).send([
    { ...play, started: 0, position: 754, total: 3600 },
  ]);
  expect(upload.status).toBe(200);
  // It asks for the actions of its own device ID while its uploads name no device: actions that name no
  // device are the account's, and a device filter returns them (docs/apps.md), so it reads its own positions
  // and those of apps in Nextcloud mode; a gpodder.net-mode app's, uploaded naming its device, stay that
  // device's, as on gpodder.net.
  const nextcloudApp = { ...play, episode: 'https://replay.example/ma/2.mp3', timestamp: '2026-11-25T07:00:00' };
  const phone = { ...play, episode: 'https://replay.example/ma/3.mp3', device: 'phone' };
  await request(t.app)
    .post(`/api/2/episodes/${u.name}.json`)
    .set('Authorization', u.basic)
    .send([
      { ...nextcloudApp, started: 0, position: 99, total: 1200 },
      { ...phone, started: 0, position: 5, total: 60 },
    ]);
  const mine = await ma(request(t.app).get(`/api/2/episodes/${u.name}.json?since=0&device=music-assistant`));
  expect(json(mine)).toEqual({
    status: 200,
    type: 'application/json',
    body: {
      actions: [
        expect.objectContaining({ ...play, position: 754, total: 3600 }),
        expect.objectContaining({ ...nextcloudApp, position: 99, total: 1200 }),
      ],
      timestamp: expect.any(Number),
    },
  });
  const ofPhone = await ma(request(t.app).get(`/api/2/episodes/${u.name}.json?since=0&device=phone`));
  expect(ofPhone.body.actions).toEqual([
    expect.objectContaining({ ...play, position: 754 }),
    expect.objectContaining({ ...nextcloudApp, position: 99 }),
    expect.objectContaining({ ...phone, position: 5 }),
  ]);
});

test('Nextcloud mode: login flow v2, then the app password as a bearer token', async () => {
  const u = await t.user();
  const start = await request(t.app).post('/index.php/login/v2');
  const { poll, login } = start.body as { poll: { token: string; endpoint: string }; login: string };
  expect(await approveLoginFlow(t.db, decodeURIComponent(new URL(login).pathname.split('/').pop()!), u.id)).toBe(true);
  const granted = await request(t.app).post(new URL(poll.endpoint).pathname).type('form').send({ token: poll.token });
  expect(granted.status).toBe(200);
  const nc = (r: request.Test) => r.set('Authorization', `Bearer ${granted.body.appPassword}`);
  const base = '/index.php/apps/gpoddersync';
  const wrong = await request(t.app).get(`${base}/subscriptions?since=0`).set('Authorization', 'Bearer csp_wrong');
  expect(wrong.status).toBe(401);
  expect(
    (await nc(request(t.app).post(`${base}/subscription_change/create`)).send({ add: [FEED], remove: [] })).status,
  ).toBe(200);
  const subs = await nc(request(t.app).get(`${base}/subscriptions?since=0`));
  expect(json(subs)).toEqual({
    status: 200,
    type: 'application/json',
    body: { add: [FEED], remove: [], timestamp: expect.any(Number) },
  });
  const play = { podcast: FEED, episode: EPISODE, guid: 'ma-1', timestamp: '2026-11-25T06:00:00', action: 'play' };
  expect(
    (
      await nc(request(t.app).post(`${base}/episode_action/create`)).send([
        { ...play, position: 60, started: 0, total: 600 },
      ])
    ).status,
  ).toBe(200);
  const actions = await nc(request(t.app).get(`${base}/episode_action?since=0`));
  expect(actions.body.actions).toEqual([expect.objectContaining({ ...play, position: 60 })]);
});
