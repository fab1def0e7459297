import pino from 'pino';
import request from 'supertest';
import { revokeAppPassword } from '../../src/auth/accounts';
import {
  approveLoginFlow,
  authTasks,
  createAppPasswordFor,
  credentialChanges,
  openBasicSession,
  openSession,
  revokeAppPasswordById,
  setPassword,
} from '../../src/auth/service';
import { listen, notifyThrough } from '../../src/db/notifications';
import { as, sessionCookieOf, expectError, sleep, testApp, type TestApp, type TestUser } from '../helpers/app';
import { LOGIN_FLOW_STARTS } from '../../src/gpodder/address-limits';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const basic = (u: TestUser) => u.basic;

describe('authentication', () => {
  test('no credentials: 401 with a Basic challenge and the error body', async () => {
    const u = await t.user();
    const r = await request(t.app).get(`/api/2/devices/${u.name}.json`);
    expectError(r, 401, 'User not authorized');
    expect(r.headers['www-authenticate']).toBe('Basic realm="castsync"');
    expect(r.headers['cache-control']).toBe('no-store');
  });

  test('login with Basic and any Content-Type sets an HttpOnly session cookie that then works alone', async () => {
    const u = await t.user();
    const login = await request(t.app)
      .post(`/api/2/auth/${u.name}/login.json`)
      .set('Authorization', basic(u))
      .set('Content-Type', 'plain/text')
      .send('');
    expect(login.status).toBe(200);
    expect(login.text).toBe('');
    const setCookie = String([login.headers['set-cookie']].flat()[0]);
    expect(setCookie).toMatch(/^sessionid=css_[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=31536000$/);
    const cookie = sessionCookieOf(login)!;
    const devices = await request(t.app).get(`/api/2/devices/${u.name}.json`).set('Cookie', `sessionid=${cookie}`);
    expect(devices.status).toBe(200);
    expect(devices.headers['set-cookie']).toBeUndefined();
    // Stored as a digest only.
    const stored = await t.db.query(`SELECT count(*)::int AS n FROM tokens WHERE token_hash = sha256($1::bytea)`, [
      Buffer.from(cookie),
    ]);
    expect(stored.rows[0].n).toBe(1);
    const raw = await t.db.query(`SELECT count(*)::int AS n FROM tokens WHERE encode(token_hash, 'escape') LIKE $1`, [
      `%${cookie}%`,
    ]);
    expect(raw.rows[0].n).toBe(0);
    // Logout drops that session.
    const out = await request(t.app).post(`/api/2/auth/${u.name}/logout.json`).set('Cookie', `sessionid=${cookie}`);
    expect(out.status).toBe(200);
    const after = await request(t.app).get(`/api/2/devices/${u.name}.json`).set('Cookie', `sessionid=${cookie}`);
    expect(after.status).toBe(401);
  });

  test('{user} must be the authenticated user (any case); an app password works as the Basic password', async () => {
    const u = await t.user('Case');
    const other = await t.user();
    expect((await as(t, u).get(`/api/2/devices/${u.name.toUpperCase()}.json`)).status).toBe(200);
    const refused = await as(t, u).get(`/api/2/devices/${other.name}.json`);
    expectError(refused, 401);
    // A refused request is given no session.
    expect(refused.headers['set-cookie']).toBeUndefined();
    const app = await createAppPasswordFor({ db: t.db }, u.name, 'phone');
    const viaApp = 'Basic ' + Buffer.from(`${u.name}:${app.token}`).toString('base64');
    expect((await as(t, viaApp).get(`/api/2/devices/${u.name}.json`)).status).toBe(200);
  });

  test('a sessionid that is not percent-encoded UTF-8 (set by another application) is no cookie: Basic works', async () => {
    const u = await t.user();
    const r = await request(t.app)
      .get(`/api/2/devices/${u.name}.json`)
      .set('Authorization', basic(u))
      .set('Cookie', 'sessionid=%E0%A4%A');
    expect(r.status).toBe(200);
    expect(sessionCookieOf(r)).toMatch(/^css_/);
    const web = await request(t.app).get('/web/subscriptions').set('Cookie', 'castsync_web=%E0%A4%A');
    expect([web.status, web.headers.location]).toEqual([303, `/?next=${encodeURIComponent('/web/subscriptions')}`]);
  });

  test("another application's sessionid that is not percent-encoded UTF-8 does not hide castsync's beside it", async () => {
    const u = await t.user();
    const sid = sessionCookieOf(await as(t, u).post(`/api/2/auth/${u.name}/login.json`).expect(200))!;
    // A browser or an app's cookie jar sends both cookies of the name, the other application's first.
    const r = await request(t.app)
      .get(`/api/2/devices/${u.name}.json`)
      .set('Cookie', `sessionid=%E0%A4%A; sessionid=${sid}`);
    expect(r.status).toBe(200);
  });

  test('a client that sends Basic on every request keeps getting the same session, not a new one each time', async () => {
    const u = await t.user();
    const a = await as(t, u).get(`/api/2/devices/${u.name}.json`);
    const b = await as(t, u).get(`/api/2/devices/${u.name}.json`);
    expect(sessionCookieOf(a)).toBeDefined();
    expect(sessionCookieOf(b)).toBe(sessionCookieOf(a));
  });

  /** Another 100 gpodder sessions of the user, then the hourly clean-up: it keeps the newest 100. */
  const trimmedAway = async (u: TestUser) => {
    for (let i = 0; i < 100; i++) await openSession(t.db, u.id, `app ${i}`);
    const logger = pino({ level: 'silent' });
    await authTasks(t.db, logger).tasks.cleanup_tokens!({} as never, {} as never);
  };
  const withCookie = async (u: TestUser, sid: string) =>
    (await request(t.app).get(`/api/2/devices/${u.name}.json`).set('Cookie', `sessionid=${sid}`)).status;

  test('a session the hourly clean-up removed is not handed out again to the credentials it was given to', async () => {
    const u = await t.user();
    const first = sessionCookieOf(await as(t, u).post(`/api/2/auth/${u.name}/login.json`))!;
    await trimmedAway(u);
    const given = sessionCookieOf(await as(t, u).post(`/api/2/auth/${u.name}/login.json`))!;
    expect(given).not.toBe(first);
    expect(await withCookie(u, given)).toBe(200);
  });

  test('the hourly clean-up announces what it removed: a session it removed opens nothing, cached or not', async () => {
    const u = await t.user();
    const sub = credentialChanges(t.authCache);
    let listening: () => void = () => undefined;
    const up = new Promise<void>((resolve) => (listening = resolve));
    const listener = listen(t.url, [{ ...sub, up: () => (sub.up(), listening()) }], pino({ level: 'silent' }), {
      notify: notifyThrough(t.db),
    });
    try {
      await up;
      const first = sessionCookieOf(await as(t, u).get(`/api/2/devices/${u.name}.json`))!;
      expect(await withCookie(u, first)).toBe(200);
      const heard = new Promise<void>((resolve) => t.authCache.onClear(resolve));
      await trimmedAway(u);
      expect(await Promise.race([heard.then(() => 'heard'), sleep(5000).then(() => 'not heard')])).toBe('heard');
      expect(await withCookie(u, first)).toBe(401);
      const given = sessionCookieOf(await as(t, u).get(`/api/2/devices/${u.name}.json`))!;
      expect([given === first, await withCookie(u, given)]).toEqual([false, 200]);
    } finally {
      await listener.stop();
    }
  });

  test.each([
    ['on the App passwords page', (u: TestUser, id: number) => revokeAppPassword(t, u.id, id)],
    ['with the CLI', (_u: TestUser, id: number) => revokeAppPasswordById(t, id)],
  ])('revoking an app password %s ends the sessions its app got, and only those', async (_where, revoke) => {
    const u = await t.user();
    const app = await createAppPasswordFor(t, u.name, 'AntennaPod');
    const appBasic = 'Basic ' + Buffer.from(`${u.name}:${app.token}`).toString('base64');
    // AntennaPod sends Basic on login only, then the cookie; Kasts sends Basic every time.
    const antennapod = sessionCookieOf(await as(t, appBasic).post(`/api/2/auth/${u.name}/login.json`))!;
    const kasts = sessionCookieOf(await as(t, appBasic).get(`/api/2/devices/${u.name}.json`))!;
    const withPassword = sessionCookieOf(await as(t, u).get(`/api/2/devices/${u.name}.json`))!;
    expect(withPassword).not.toBe(kasts);
    expect([await withCookie(u, antennapod), await withCookie(u, kasts)]).toEqual([200, 200]);
    await revoke(u, app.id);
    expectError(await as(t, appBasic).get(`/api/2/devices/${u.name}.json`), 401);
    expect([await withCookie(u, antennapod), await withCookie(u, kasts)]).toEqual([401, 401]);
    // The password's session was never the app's: it stays, and the password is given a live one.
    expect(await withCookie(u, withPassword)).toBe(200);
    const given = sessionCookieOf(await as(t, u).get(`/api/2/devices/${u.name}.json`))!;
    expect([given === kasts, await withCookie(u, given)]).toEqual([false, 200]);
  });

  test('an account password that merely looks like an app password gets a session; a revoked app password none', async () => {
    const u = await t.user();
    await setPassword(t, u.name, 'csp_my-own-password');
    const lookalike = 'Basic ' + Buffer.from(`${u.name}:csp_my-own-password`).toString('base64');
    const sid = sessionCookieOf(await as(t, lookalike).post(`/api/2/auth/${u.name}/login.json`).expect(200))!;
    expect((await request(t.app).get(`/api/2/devices/${u.name}.json`).set('Cookie', `sessionid=${sid}`)).status).toBe(
      200,
    );
    // Revoked between the verification of the credentials and the opening of their session.
    const app = await createAppPasswordFor(t, u.name, 'AntennaPod');
    await revokeAppPasswordById(t, app.id);
    expect(await openBasicSession(t, u.id, { username: u.name, password: app.token }, 'AntennaPod')).toBeUndefined();
  });
});

describe('devices and sync-devices', () => {
  test('upsert with an empty body answers an empty 200; the list has all four fields; bad type or id is 400', async () => {
    const u = await t.user();
    const api = as(t, u);
    const created = await request(t.app)
      .post(`/api/2/devices/${u.name}/phone.example.org.json`)
      .set('Authorization', basic(u))
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send('{}');
    expect(created.status).toBe(200);
    expect(created.text).toBe('');
    await api.post(`/api/2/devices/${u.name}/laptop.json`, { caption: 'My laptop', type: 'laptop' });
    await api.post(`/api/2/subscriptions/${u.name}/laptop.json`, { add: ['https://dev.example/a.xml'], remove: [] });
    const list = await api.get(`/api/2/devices/${u.name}.json`);
    expect(list.body).toEqual([
      { id: 'laptop', caption: 'My laptop', type: 'laptop', subscriptions: 1 },
      { id: 'phone.example.org', caption: 'phone.example.org', type: 'other', subscriptions: 1 },
    ]);
    expectError(await api.post(`/api/2/devices/${u.name}/x.json`, { type: 'toaster' }), 400);
    expectError(await api.post(`/api/2/devices/${u.name}/bad%20id.json`, {}), 400);
    const sync = await api.get(`/api/2/sync-devices/${u.name}.json`);
    expect(sync.body).toEqual({ synchronized: [['laptop', 'phone.example.org']], 'not-synchronized': [] });
    const posted = await api.post(`/api/2/sync-devices/${u.name}.json`, { synchronize: [['laptop']] });
    expect(posted.body).toEqual(sync.body);
  });

  test('every type mygpo accepts is accepted, a tablet too, and listed as sent', async () => {
    const u = await t.user();
    const api = as(t, u);
    // mygpo's own list (mygpo/users/models.py, Client.TYPES).
    const types = ['desktop', 'laptop', 'mobile', 'server', 'tablet', 'other'];
    for (const type of types)
      expect((await api.post(`/api/2/devices/${u.name}/${type}-1.json`, { type })).status).toBe(200);
    const list = (await api.get(`/api/2/devices/${u.name}.json`)).body as { id: string; type: string }[];
    expect(Object.fromEntries(list.map((d) => [d.id, d.type]))).toEqual(
      Object.fromEntries(types.map((type) => [`${type}-1`, type])),
    );
    // A device made as another type can become a tablet.
    await api.post(`/api/2/devices/${u.name}/other-1.json`, { type: 'tablet', caption: 'The tablet' }).expect(200);
    expect((await api.get(`/api/2/devices/${u.name}.json`)).body).toContainEqual({
      id: 'other-1',
      caption: 'The tablet',
      type: 'tablet',
      subscriptions: 0,
    });
    // mygpoclient (gPodder's library) refuses the whole list for a type it does not know: a tablet is mobile to it.
    const toMygpoclient = await api
      .get(`/api/2/devices/${u.name}.json`)
      .set(
        'User-Agent',
        'mygpoclient/1.9 (+http://gpodder.org/mygpoclient/) gPodder/3.11.1 (+http://gpodder.org/) Linux',
      );
    expect(
      Object.fromEntries((toMygpoclient.body as { id: string; type: string }[]).map((d) => [d.id, d.type])),
    ).toEqual({
      'desktop-1': 'desktop',
      'laptop-1': 'laptop',
      'mobile-1': 'mobile',
      'server-1': 'server',
      'tablet-1': 'mobile',
      'other-1': 'mobile',
    });
  });
});

describe('subscriptions', () => {
  test('push then pull: the same store as /v1, URLs as stored, rewritten and refused URLs reported', async () => {
    const u = await t.user();
    const api = as(t, u);
    const pushed = await api.post(`/api/2/subscriptions/${u.name}/dev.json`, {
      add: ['https://sub.example/a.xml', 'itpc://sub.example/b.xml', 'not a url'],
      remove: [],
    });
    expect(pushed.status).toBe(200);
    expect(pushed.body).toEqual({
      timestamp: expect.any(Number),
      update_urls: [
        ['itpc://sub.example/b.xml', 'http://sub.example/b.xml'],
        ['not a url', ''],
      ],
    });
    const v1 = await api.get('/v1/subscriptions');
    expect(v1.body.subscriptions.map((s: { feed_url: string }) => s.feed_url)).toEqual([
      'https://sub.example/a.xml',
      'http://sub.example/b.xml',
    ]);
    await api.post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://sub.example/c%20d.xml' }] });
    const pulled = await api.get(`/api/2/subscriptions/${u.name}/dev.json?since=0`);
    expect(pulled.body).toEqual({
      add: ['https://sub.example/a.xml', 'http://sub.example/b.xml', 'https://sub.example/c%20d.xml'],
      remove: [],
      timestamp: expect.any(Number),
    });
    const removed = await api.post(`/api/2/subscriptions/${u.name}/dev.json`, {
      add: [],
      remove: ['HTTPS://SUB.EXAMPLE/a.xml', 'https://unknown.example/x'],
    });
    expect(removed.status).toBe(200);
    const again = await api.get(`/api/2/subscriptions/${u.name}/dev.json?since=${removed.body.timestamp}`);
    expect(again.body.remove).toEqual(['https://sub.example/a.xml']);
    const record = (await api.get('/v1/subscriptions')).body.subscriptions[0];
    expect(record).toMatchObject({ feed_url: 'https://sub.example/a.xml', is_subscribed: false });
  });

  test('bad input: a since that is not whole seconds, a body that is not JSON (a URL in add and remove is a 200)', async () => {
    const u = await t.user();
    const api = as(t, u);
    const path = `/api/2/subscriptions/${u.name}/dev.json`;
    expect((await api.post(path, { add: ['https://x.example/'], remove: ['https://x.example/'] })).status).toBe(200);
    expectError(await api.get(`${path}?since=yesterday`), 400);
    expectError(await api.get(`${path}?since=1.5`), 400);
    const notJson = await request(t.app).post(path).set('Authorization', basic(u)).send('{"add": [');
    expectError(notJson, 400);
    expectError(await api.post(path, { add: 'https://x.example/' }), 400);
  });
});

describe('simple API', () => {
  test('PUT adds and never removes; GET in opml, json and txt, for the user or a device', async () => {
    const u = await t.user();
    const api = as(t, u);
    const put = (fmt: string, body: string) =>
      request(t.app).put(`/subscriptions/${u.name}/desk.${fmt}`).set('Authorization', basic(u)).send(body);
    expect((await put('txt', 'https://s.example/1.xml\nhttps://s.example/2.xml\n')).status).toBe(200);
    expect((await put('json', '["https://s.example/3.xml"]')).status).toBe(200);
    const opml =
      '<?xml version="1.0"?><opml version="2.0"><body><outline text="g"><outline type="rss" text="x" xmlUrl="https://s.example/4.xml?a=1&amp;b=2"/></outline></body></opml>';
    expect((await put('opml', opml)).status).toBe(200);
    expect((await put('txt', 'https://s.example/1.xml\n')).status).toBe(200);
    const json = await api.get(`/subscriptions/${u.name}.json`);
    expect(json.body).toEqual([
      'https://s.example/1.xml',
      'https://s.example/2.xml',
      'https://s.example/3.xml',
      'https://s.example/4.xml?a=1&b=2',
    ]);
    const txt = await api.get(`/subscriptions/${u.name}/desk.txt`);
    expect(txt.text.split('\n').filter(Boolean)).toHaveLength(4);
    const out = await api.get(`/subscriptions/${u.name}.opml`);
    expect(out.headers['content-type']).toBe('text/x-opml; charset=utf-8');
    expect(out.text).toContain('<outline type="rss" text="https://s.example/4.xml?a=1&amp;b=2"');
    expectError(await put('json', '{"not":"a list"}'), 400);
    expectError(await put('opml', '<opml><body><outline'), 400);
    expectError(await put('opml', '<!DOCTYPE x [<!ENTITY a "aaaa">]><opml><body/></opml>'), 400);
    expect((await api.get(`/subscriptions/${u.name}.xml`)).status).toBe(404);
  });
});

describe('Nextcloud gpoddersync', () => {
  test('subscriptions and subscription_change/create, with and without /index.php', async () => {
    const u = await t.user();
    const api = as(t, u);
    for (const prefix of ['/index.php', '']) {
      const created = await api.post(`${prefix}/apps/gpoddersync/subscription_change/create`, {
        add: [`https://nc.example${prefix.replace('/', '-')}.xml`],
        remove: [],
      });
      expect(created.status).toBe(200);
      expect(created.body).toEqual({ timestamp: expect.any(Number) });
    }
    const pulled = await api.get('/index.php/apps/gpoddersync/subscriptions?since=0');
    expect(pulled.body.add).toEqual(['https://nc.example-index.php.xml', 'https://nc.example.xml']);
  });

  test('login flow v2: an address may start LOGIN_FLOW_STARTS flows (either path), then 429; no more are stored', async () => {
    const own = await testApp();
    try {
      const flows = async () => (await own.db.query('SELECT count(*)::int AS n FROM login_flows')).rows[0].n;
      for (let i = 0; i < LOGIN_FLOW_STARTS; i++) {
        expect((await request(own.app).post(i % 2 ? '/login/v2' : '/index.php/login/v2')).status).toBe(200);
      }
      for (const path of ['/index.php/login/v2', '/login/v2']) {
        const r = await request(own.app).post(path);
        expectError(r, 429, /^Too many login flows started/);
        expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      }
      expect(await flows()).toBe(LOGIN_FLOW_STARTS);
    } finally {
      await own.close();
    }
  });

  test('login flow v2: poll is 404 until approved, then gives an app password once', async () => {
    const u = await t.user();
    const start = await request(t.app).post('/index.php/login/v2').set('User-Agent', 'AntennaPod/3.5');
    expect(start.status).toBe(200);
    const { poll, login } = start.body as { poll: { token: string; endpoint: string }; login: string };
    expect(poll.endpoint).toMatch(/\/index\.php\/login\/v2\/poll$/);
    const pollPath = new URL(poll.endpoint).pathname;
    const ask = () => request(t.app).post(pollPath).type('form').send({ token: poll.token });
    expect((await ask()).status).toBe(404);
    // The page the app opens asks the user to sign in first (test/integration/web.test.ts approves there).
    const page = await request(t.app).get(new URL(login).pathname);
    expect(page.status).toBe(303);
    expect(page.headers.location).toBe(`/?next=${encodeURIComponent(new URL(login).pathname)}`);
    const code = decodeURIComponent(new URL(login).pathname.split('/').pop()!);
    expect(await approveLoginFlow(t.db, code, u.id)).toBe(true);
    const granted = await ask();
    expect(granted.status).toBe(200);
    expect(granted.body).toEqual({
      server: expect.any(String),
      loginName: u.name,
      appPassword: expect.stringMatching(/^csp_/),
    });
    expect((await ask()).status).toBe(404);
    const withApp = 'Basic ' + Buffer.from(`${u.name}:${granted.body.appPassword}`).toString('base64');
    expect((await as(t, withApp).get('/index.php/apps/gpoddersync/subscriptions')).status).toBe(200);
  });
});
