import { createHmac } from 'node:crypto';
import request from 'supertest';
import { approveLoginFlow, createAppPasswordFor, pollLoginFlow, startLoginFlow } from '../../src/auth/service';
import { setAdmin } from '../../src/auth/accounts';
import { as, sessionCookieOf, testApp, type TestApp, type TestUser } from '../helpers/app';
import { csrfOf, signedInAgent } from '../helpers/web';
import { feedLearnt } from '../helpers/feeds';

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ LOGIN_RATE_LIMIT: '3', ALLOW_REGISTRATION: 'true' });
});
afterAll(() => t.close());

const subscribedUrls = async (u: TestUser): Promise<string[]> =>
  (
    (await as(t, u).get('/v1/subscriptions?per_page=500')).body.subscriptions as {
      feed_url: string;
      is_subscribed: boolean;
    }[]
  )
    .filter((s) => s.is_subscribed)
    .map((s) => s.feed_url);

/**
 * A user's sessions of every kind, each used once (so that the credential cache holds it): two browser
 * sessions, a gpodder session, a /v1 login and an app password; `status` tries each again.
 */
async function sessionsOf(u: TestUser) {
  const laptop = await signedInAgent(t.app, u.name, u.password);
  const phone = await signedInAgent(t.app, u.name, u.password);
  const gpodder = sessionCookieOf(await as(t, u).post(`/api/2/auth/${u.name}/login.json`).expect(200))!;
  const login = await request(t.app).post('/v1/auth/login').send({ username: u.name, password: u.password });
  const appPassword = (await createAppPasswordFor(t, u.name, 'phone')).token;
  const status = async () => ({
    laptop: (await laptop.agent.get('/web/account')).status,
    phone: (await phone.agent.get('/web/account')).status,
    gpodder: (await request(t.app).get(`/api/2/devices/${u.name}.json`).set('Cookie', `sessionid=${gpodder}`)).status,
    login: (await as(t, `Bearer ${login.body.access_token}`).get('/v1/subscriptions')).status,
    appPassword: (await as(t, `Bearer ${appPassword}`).get('/v1/subscriptions')).status,
  });
  expect(await status()).toEqual({ laptop: 200, phone: 200, gpodder: 200, login: 200, appPassword: 200 });
  return { laptop, phone, appPassword, status };
}

describe('signing in', () => {
  test('the sign-in page is at /, with no browser password popup; a wrong password says so', async () => {
    const u = await t.user();
    const agent = request.agent(t.app);
    const page = await agent.get('/');
    expect(page.status).toBe(200);
    expect(page.headers['www-authenticate']).toBeUndefined();
    expect(page.text).toContain('<label for="password">Password</label>');
    const wrong = await agent
      .post('/web/sign-in')
      .type('form')
      .send({ _csrf: csrfOf(page.text), username: u.name, password: 'not-the-password' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBeUndefined();
    expect(wrong.text).toContain('Wrong username or password.');
    expect(String(wrong.headers['set-cookie'] ?? '')).not.toMatch(/castsync_web=c/);
  });

  test('a session cookie of its own: HttpOnly, SameSite=Lax, not the gpodder API sessionid', async () => {
    const u = await t.user();
    const agent = request.agent(t.app);
    const page = await agent.get('/');
    const r = await agent
      .post('/web/sign-in')
      .type('form')
      .send({ _csrf: csrfOf(page.text), username: u.name, password: u.password, next: '/web/devices' });
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe('/web/devices');
    const cookie = (r.headers['set-cookie'] as unknown as string[]).find((c: string) => c.startsWith('castsync_web='))!;
    expect(cookie).toMatch(/^castsync_web=csw_[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=2592000$/);
    // The browser session is no key to the APIs.
    const value = cookie.split(';')[0]!;
    expect(
      (
        await request(t.app)
          .get('/api/2/devices/' + u.name + '.json')
          .set('Cookie', `sessionid=${value.split('=')[1]}`)
      ).status,
    ).toBe(401);
    expect((await request(t.app).get('/v1/subscriptions').set('Cookie', value)).status).toBe(401);
  });

  test('behind https (TRUST_PROXY), the cookie is Secure; `next` never leads off the site', async () => {
    const secure = await testApp({ TRUST_PROXY: 'true' });
    try {
      const u = await secure.user();
      const agent = request.agent(secure.app);
      const page = await agent.get('/').set('X-Forwarded-Proto', 'https');
      const r = await agent
        .post('/web/sign-in')
        .set('X-Forwarded-Proto', 'https')
        .set('Cookie', page.headers['set-cookie']![0]!.split(';')[0]!)
        .type('form')
        .send({ _csrf: csrfOf(page.text), username: u.name, password: u.password, next: '//evil.example/' });
      expect(
        (r.headers['set-cookie'] as unknown as string[]).find((c: string) => c.startsWith('castsync_web=')),
      ).toMatch(/; Secure$/);
      expect(r.headers.location).toBe('/web/new');
    } finally {
      await secure.close();
    }
  });

  test('with an https PUBLIC_URL, every cookie of the page is Secure though the proxy is not trusted (no TRUST_PROXY)', async () => {
    const behind = await testApp({ PUBLIC_URL: 'https://sync.example' });
    try {
      const u = await behind.user();
      const page = await request(behind.app).get('/');
      const presession = (page.headers['set-cookie'] as unknown as string[])[0]!;
      const r = await request(behind.app)
        .post('/web/sign-in')
        .set('Cookie', presession.split(';')[0]!)
        .type('form')
        .send({ _csrf: csrfOf(page.text), username: u.name, password: u.password });
      const gpodder = await as(behind, u).post(`/api/2/auth/${u.name}/login.json`);
      const cookies = [presession, ...(r.headers['set-cookie'] as unknown as string[])];
      expect(cookies.map((c) => c.split('=')[0])).toEqual(['castsync_csrf', 'castsync_web']);
      for (const c of cookies) expect(c).toMatch(/; Secure$/);
      // An app's sessionid is Secure only over https: an app on the plain-http address would not send it back.
      expect(gpodder.headers['set-cookie']).toEqual([expect.stringMatching(/^sessionid=[^;]+; .*Max-Age=\d+$/)]);
      const out = await request(behind.app)
        .post(`/api/2/auth/${u.name}/logout.json`)
        .set('Cookie', `sessionid=${sessionCookieOf(gpodder)}`);
      expect(out.headers['set-cookie']).toEqual([expect.stringMatching(/^sessionid=; .*Max-Age=0$/)]);
    } finally {
      await behind.close();
    }
  });

  test('a sign-in without the form token is refused, and so is one with another browser token', async () => {
    const u = await t.user();
    const agent = request.agent(t.app);
    await agent.get('/');
    const r = await agent.post('/web/sign-in').type('form').send({ username: u.name, password: u.password });
    expect(r.status).toBe(403);
    expect(r.text).toContain('This form has expired or did not come from this site');
    const other = csrfOf((await request(t.app).get('/')).text);
    const r2 = await agent
      .post('/web/sign-in')
      .type('form')
      .send({ _csrf: other, username: u.name, password: u.password });
    expect(r2.status).toBe(403);
  });

  test('failed sign-ins are rate-limited like the API: 429 with Retry-After after LOGIN_RATE_LIMIT', async () => {
    const u = await t.user();
    const agent = request.agent(t.app);
    const csrf = csrfOf((await agent.get('/')).text);
    const attempt = (password: string) =>
      agent.post('/web/sign-in').type('form').send({ _csrf: csrf, username: u.name, password });
    for (let i = 0; i < 3; i++) expect((await attempt('wrong-password')).status).toBe(401);
    const limited = await attempt(u.password);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.text).toMatch(/Too many failed sign-ins: try again in \d+ seconds\./);
  });

  test('pages need a session: a GET goes to sign-in and comes back, a POST changes nothing', async () => {
    const r = await request(t.app).get('/web/subscriptions?q=x');
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe('/?next=%2Fweb%2Fsubscriptions%3Fq%3Dx');
    expect(
      (await request(t.app).post('/web/subscriptions').type('form').send({ feed_url: 'https://x.example/' })).status,
    ).toBe(303);
  });

  test('sign-out ends the session on the server: the old cookie no longer works', async () => {
    const u = await t.user();
    const { agent, csrf, cookie } = await signedInAgent(t.app, u.name, u.password);
    expect((await request(t.app).get('/web/account').set('Cookie', cookie)).status).toBe(200);
    const out = await agent.post('/web/sign-out').type('form').send({ _csrf: csrf });
    expect(out.status).toBe(303);
    expect(String(out.headers['set-cookie'])).toMatch(/castsync_web=; .*Max-Age=0/);
    expect((await request(t.app).get('/web/account').set('Cookie', cookie)).status).toBe(303);
  });
});

test('a phone keyboard leaves names and addresses as typed: no capital letter, no correction', async () => {
  const admin = await t.user('keys');
  await setAdmin(t.db, admin.name, true);
  const { agent } = await signedInAgent(t.app, admin.name, admin.password);
  const other = await t.user('keys-other');
  const pages: [string, string, string][] = [
    ['/', 'username', (await request(t.app).get('/')).text],
    ['/web/register', 'username', (await request(t.app).get('/web/register')).text],
    ['/web/admin/users', 'username', (await agent.get('/web/admin/users')).text],
    [
      `/web/admin/users/${other.name}/remove`,
      'confirm',
      (await agent.get(`/web/admin/users/${other.name}/remove`)).text,
    ],
    ['/web/start-over', 'confirm', (await agent.get('/web/start-over')).text],
    ['/web/moving', 'remote_user', (await agent.get('/web/moving')).text],
    ['/web/subscriptions', 'feed_url', (await agent.get('/web/subscriptions')).text],
    ['/web/account', 'url', (await agent.get('/web/account')).text],
  ];
  const seen = pages.map(([path, name, html]) => {
    const input = new RegExp(`<input[^>]* name="${name}"[^>]*>`).exec(html)?.[0] ?? '';
    return [
      path,
      name,
      ['autocapitalize="none"', 'autocorrect="off"', 'spellcheck="false"'].filter((a) => input.includes(a)),
    ];
  });
  expect(seen).toEqual(
    pages.map(([path, name]) => [path, name, ['autocapitalize="none"', 'autocorrect="off"', 'spellcheck="false"']]),
  );
});

describe('subscriptions', () => {
  test('add by URL: read back through the API; a bad URL gets the API per-item message', async () => {
    const u = await t.user();
    const { agent, csrf } = await signedInAgent(t.app, u.name, u.password);
    const ok = await agent
      .post('/web/subscriptions')
      .type('form')
      .send({ _csrf: csrf, feed_url: 'https://web.example/a.xml' });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('Subscribed to https://web.example/a.xml');
    expect(await subscribedUrls(u)).toEqual(['https://web.example/a.xml']);
    const bad = await agent
      .post('/web/subscriptions')
      .type('form')
      .send({ _csrf: csrf, feed_url: 'web.example/b.xml' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('web.example/b.xml: No protocol present');
    expect(await subscribedUrls(u)).toEqual(['https://web.example/a.xml']);
  });

  test('a form without the session token, or with another session token, is refused and changes nothing', async () => {
    const u = await t.user();
    const other = await t.user();
    const { agent } = await signedInAgent(t.app, u.name, u.password);
    const { csrf: othersToken } = await signedInAgent(t.app, other.name, other.password);
    for (const body of [{}, { _csrf: othersToken }, { _csrf: '' }]) {
      const r = await agent
        .post('/web/subscriptions')
        .type('form')
        .send({ ...body, feed_url: 'https://csrf.example/' });
      expect(r.status).toBe(403);
    }
    expect(await subscribedUrls(u)).toEqual([]);
  });

  test('titles from feeds are text, never markup', async () => {
    const u = await t.user();
    const { agent, csrf } = await signedInAgent(t.app, u.name, u.password);
    await agent.post('/web/subscriptions').type('form').send({ _csrf: csrf, feed_url: 'https://xss.example/feed' });
    await feedLearnt(t.db, 'https://xss.example/feed', {
      title: '<img src=x onerror=alert(1)>',
      artworkUrl: 'javascript:alert(2)',
    });
    const page = await agent.get('/web/subscriptions');
    expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).not.toContain('javascript:');
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);
  });

  test("unsubscribe, resubscribe and delete; another user's feed is not found", async () => {
    const u = await t.user();
    const other = await t.user();
    const { agent, csrf } = await signedInAgent(t.app, u.name, u.password);
    await agent.post('/web/subscriptions').type('form').send({ _csrf: csrf, feed_url: 'https://states.example/' });
    const guid = (await as(t, u).get('/v1/subscriptions')).body.subscriptions[0].guid as string;
    const post = (action: string, who = agent, token = csrf) =>
      who
        .post(`/web/subscriptions/${guid}/${action}`)
        .type('form')
        .send({ _csrf: token, back: '/web/subscriptions?state=all' });
    const un = await post('unsubscribe');
    expect(un.status).toBe(303);
    expect(un.headers.location).toBe('/web/subscriptions?state=all');
    expect(await subscribedUrls(u)).toEqual([]);
    const listed = await agent.get('/web/subscriptions?state=unsubscribed');
    expect(listed.text).toContain('https://states.example/');
    expect(listed.text).toContain('Resubscribe');
    await post('resubscribe');
    expect(await subscribedUrls(u)).toEqual(['https://states.example/']);
    const stranger = await signedInAgent(t.app, other.name, other.password);
    expect((await post('unsubscribe', stranger.agent, stranger.csrf)).status).toBe(404);
    expect(await subscribedUrls(u)).toEqual(['https://states.example/']);
    expect((await post('delete')).status).toBe(303);
    // Deletion is the API's: requested at once, done by the worker.
    const requested = await t.db.query('SELECT count(*)::int AS n FROM deletions WHERE user_id = $1', [u.id]);
    expect(requested.rows[0].n).toBe(1);
  });

  test('search by URL or title, filter by state, and pages of 50', async () => {
    const u = await t.user();
    await as(t, u).post('/v1/subscriptions', {
      subscriptions: Array.from({ length: 120 }, (_, i) => ({
        feed_url: `https://many.example/${String(i).padStart(3, '0')}`,
      })),
    });
    const { agent } = await signedInAgent(t.app, u.name, u.password);
    const count = (html: string) => (html.match(/<li class="feed/g) ?? []).length;
    const first = await agent.get('/web/subscriptions');
    expect(first.text).toContain('120 feeds, page 1 of 3');
    expect(count(first.text)).toBe(50);
    const third = await agent.get('/web/subscriptions?page=3');
    expect(count(third.text)).toBe(20);
    expect(third.text).toContain('https://many.example/119');
    const found = await agent.get('/web/subscriptions?q=MANY.example/11');
    expect(count(found.text)).toBe(10);
    await feedLearnt(t.db, 'https://many.example/042', { title: 'The Needle Show' });
    const byTitle = await agent.get('/web/subscriptions?q=needle');
    expect(count(byTitle.text)).toBe(1);
    expect(byTitle.text).toContain('The Needle Show');
    expect(count((await agent.get('/web/subscriptions?state=unsubscribed')).text)).toBe(0);
  });

  test('OPML out, and into a second user by upload; a file that is not OPML is refused', async () => {
    const u = await t.user();
    const v = await t.user();
    const a = await signedInAgent(t.app, u.name, u.password);
    for (const url of ['https://opml.example/1', 'https://opml.example/2']) {
      await a.agent.post('/web/subscriptions').type('form').send({ _csrf: a.csrf, feed_url: url });
    }
    const out = await a.agent.get('/web/opml');
    expect(out.headers['content-disposition']).toMatch(/^attachment; filename="?castsync-subscriptions.opml"?$/);
    expect(out.text).toContain('xmlUrl="https://opml.example/2"');
    const b = await signedInAgent(t.app, v.name, v.password);
    const imported = await b.agent
      .post('/web/opml')
      .field('_csrf', b.csrf)
      .attach('opml', Buffer.from(out.text), 'list.opml');
    expect(imported.status).toBe(200);
    expect(imported.text).toContain('Imported 2 of 2 feeds.');
    expect((await subscribedUrls(v)).sort()).toEqual(['https://opml.example/1', 'https://opml.example/2']);
    const notOpml = await b.agent
      .post('/web/opml')
      .field('_csrf', b.csrf)
      .attach('opml', Buffer.from('hello'), 'x.opml');
    expect(notOpml.status).toBe(400);
    expect(notOpml.text).toContain('not OPML: ');
    const noToken = await b.agent.post('/web/opml').attach('opml', Buffer.from(out.text), 'list.opml');
    expect(noToken.status).toBe(403);
  });
});

describe('account', () => {
  test('app passwords: shown once, work as the API password, revoked in a click', async () => {
    const u = await t.user();
    const { agent, csrf } = await signedInAgent(t.app, u.name, u.password);
    const made = await agent.post('/web/app-passwords').type('form').send({ _csrf: csrf, label: 'Phone <b>' });
    const token = /value="(csp_[\w-]+)"/.exec(made.text)![1]!;
    expect(made.text).toContain('Phone &lt;b&gt;');
    const basic = 'Basic ' + Buffer.from(`${u.name}:${token}`).toString('base64');
    expect((await as(t, basic).get('/v1/subscriptions')).status).toBe(200);
    const list = await agent.get('/web/app-passwords');
    expect(list.text).not.toContain(token);
    const id = /\/web\/app-passwords\/(\d+)\/revoke/.exec(list.text)![1];
    expect((await agent.post(`/web/app-passwords/${id}/revoke`).type('form').send({ _csrf: csrf })).status).toBe(303);
    expect((await as(t, basic).get('/v1/subscriptions')).status).toBe(401);
  });

  test('sessions are listed (this one marked) and another is revoked; a password change keeps this one', async () => {
    const u = await t.user();
    const phone = await signedInAgent(t.app, u.name, u.password);
    const laptop = await signedInAgent(t.app, u.name, u.password);
    const page = await laptop.agent.get('/web/account');
    expect(page.text).toContain('Browser (this one)');
    const revokable = [...page.text.matchAll(/\/web\/sessions\/(\d+)\/revoke/g)].map((m) => m[1]);
    expect(revokable).toHaveLength(1);
    await laptop.agent.post(`/web/sessions/${revokable[0]}/revoke`).type('form').send({ _csrf: laptop.csrf });
    expect((await phone.agent.get('/web/account')).status).toBe(303);

    const wrong = await laptop.agent
      .post('/web/account/password')
      .type('form')
      .send({ _csrf: laptop.csrf, current: 'nope', new: 'a-new-password' });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('The current password is wrong');
    const ok = await laptop.agent
      .post('/web/account/password')
      .type('form')
      .send({ _csrf: laptop.csrf, current: u.password, new: 'a-new-password', sign_out_elsewhere: 'on' });
    expect(ok.text).toContain('Your password was changed, and you are signed out everywhere else.');
    expect((await laptop.agent.get('/web/account')).status).toBe(200);
    const basic = 'Basic ' + Buffer.from(`${u.name}:a-new-password`).toString('base64');
    expect((await as(t, basic).get('/v1/subscriptions')).status).toBe(200);
  });

  test("a password change with 'sign out everywhere else' ends every other session, this one and app passwords stay", async () => {
    const u = await t.user();
    const s = await sessionsOf(u);
    const page = await s.laptop.agent.get('/web/account');
    expect(page.text).toMatch(/<input type="checkbox" name="sign_out_elsewhere" value="on" checked/);
    const changed = await s.laptop.agent
      .post('/web/account/password')
      .type('form')
      .send({ _csrf: s.laptop.csrf, current: u.password, new: 'everywhere-else', sign_out_elsewhere: 'on' });
    expect(changed.status).toBe(200);
    expect(await s.status()).toEqual({ laptop: 200, phone: 303, gpodder: 401, login: 401, appPassword: 200 });
    const basic = 'Basic ' + Buffer.from(`${u.name}:everywhere-else`).toString('base64');
    expect((await as(t, basic).get('/v1/subscriptions')).status).toBe(200);
    expect((await as(t, u).get('/v1/subscriptions')).status).toBe(401);
  });

  test("a password change without 'sign out everywhere else' ends the gpodder sessions only, as any password change", async () => {
    const u = await t.user();
    const s = await sessionsOf(u);
    const changed = await s.laptop.agent
      .post('/web/account/password')
      .type('form')
      .send({ _csrf: s.laptop.csrf, current: u.password, new: 'only-the-password' });
    expect(changed.text).toContain('Your password was changed.');
    expect(await s.status()).toEqual({ laptop: 200, phone: 200, gpodder: 401, login: 200, appPassword: 200 });
    expect((await as(t, u).get('/v1/subscriptions')).status).toBe(401);
  });

  test('guesses of the current password count as failed sign-ins: past LOGIN_RATE_LIMIT, 429 whatever the password', async () => {
    const u = await t.user();
    const { agent, csrf } = await signedInAgent(t.app, u.name, u.password);
    const change = (current: string) =>
      agent.post('/web/account/password').type('form').send({ _csrf: csrf, current, new: 'a-guessed-password' });
    for (let i = 0; i < 3; i++) {
      const wrong = await change(`guess-${i}`);
      expect(wrong.status).toBe(400);
      expect(wrong.text).toContain('The current password is wrong');
    }
    const right = await change(u.password);
    expect(right.status).toBe(429);
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
    expect((await as(t, u).get('/v1/subscriptions')).status).toBe(200);
  });

  test('devices and recent plays from the gpodder API', async () => {
    const u = await t.user();
    await as(t, u).post(`/api/2/devices/${u.name}/phone-1.json`, { caption: 'My <phone>', type: 'mobile' });
    await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
      {
        podcast: 'https://plays.example/feed',
        episode: 'https://plays.example/ep1.mp3',
        action: 'play',
        timestamp: '2026-11-20T10:00:00',
        started: 0,
        position: 754,
        total: 3600,
        device: 'phone-1',
      },
    ]);
    const { agent } = await signedInAgent(t.app, u.name, u.password);
    const devices = await agent.get('/web/devices');
    expect(devices.text).toContain('My &lt;phone&gt;');
    expect(devices.text).toContain('mobile');
    const activity = await agent.get('/web/activity');
    expect(activity.text).toContain('https://plays.example/ep1.mp3');
    expect(activity.text).toContain('12:34 of 1:00:00');
  });
});

describe('administration and sign-up', () => {
  test('only administrators see the users; they create, reset and remove users', async () => {
    const plain = await t.user();
    const admin = await t.user('admin');
    expect(await setAdmin(t.db, admin.name, true)).toBe(true);
    const p = await signedInAgent(t.app, plain.name, plain.password);
    expect((await p.agent.get('/web/admin/users')).status).toBe(403);
    expect(
      (
        await p.agent
          .post('/web/admin/users')
          .type('form')
          .send({ _csrf: p.csrf, username: 'x1', password: 'password-x1' })
      ).status,
    ).toBe(403);
    const a = await signedInAgent(t.app, admin.name, admin.password);
    const list = await a.agent.get('/web/admin/users');
    expect(list.text).toContain(plain.name);
    const created = await a.agent
      .post('/web/admin/users')
      .type('form')
      .send({ _csrf: a.csrf, username: 'made-by-admin', password: 'made-password' });
    expect(created.text).toContain('User made-by-admin created.');
    const short = await a.agent
      .post('/web/admin/users')
      .type('form')
      .send({ _csrf: a.csrf, username: 'shorty', password: 'short' });
    expect(short.status).toBe(400);
    expect(short.text).toContain('Passwords have at least 8 characters');
    await a.agent
      .post('/web/admin/users/made-by-admin/password')
      .type('form')
      .send({ _csrf: a.csrf, password: 'reset-password' });
    expect(
      (await as(t, 'Basic ' + Buffer.from('made-by-admin:reset-password').toString('base64')).get('/v1/subscriptions'))
        .status,
    ).toBe(200);
    // A removal is confirmed on its own page by typing the username: without it, or with another, nothing goes.
    expect(created.text).toContain('href="/web/admin/users/made-by-admin/remove"');
    const confirmPage = await a.agent.get('/web/admin/users/made-by-admin/remove');
    expect(confirmPage.status).toBe(200);
    expect(confirmPage.text).toContain('Type the username, <strong>made-by-admin</strong>, to confirm');
    for (const confirm of [undefined, 'made-by-admi', plain.name]) {
      const refused = await a.agent
        .post('/web/admin/users/made-by-admin/remove')
        .type('form')
        .send({ _csrf: a.csrf, ...(confirm !== undefined && { confirm }) });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('Type the username exactly to confirm: nothing was changed.');
      expect(refused.text).toContain('Type the username, <strong>made-by-admin</strong>, to confirm');
      expect(
        (
          await as(t, 'Basic ' + Buffer.from('made-by-admin:reset-password').toString('base64')).get(
            '/v1/subscriptions',
          )
        ).status,
      ).toBe(200);
    }
    const removed = await a.agent
      .post('/web/admin/users/made-by-admin/remove')
      .type('form')
      .send({ _csrf: a.csrf, confirm: 'made-by-admin' });
    expect(removed.text).toContain('User made-by-admin and all of their data removed.');
    expect(
      (await as(t, 'Basic ' + Buffer.from('made-by-admin:reset-password').toString('base64')).get('/v1/subscriptions'))
        .status,
    ).toBe(401);
  });

  test("an administrator's reset ends every session of the user; app passwords only when asked", async () => {
    const admin = await t.user('admin');
    await setAdmin(t.db, admin.name, true);
    const a = await signedInAgent(t.app, admin.name, admin.password);
    const u = await t.user();
    const s = await sessionsOf(u);
    const reset = await a.agent
      .post(`/web/admin/users/${u.name}/password`)
      .type('form')
      .send({ _csrf: a.csrf, password: 'reset-by-admin' });
    expect(reset.text).toContain(`Password of ${u.name} changed; all of their sessions ended (app passwords stay).`);
    expect(await s.status()).toEqual({ laptop: 303, phone: 303, gpodder: 401, login: 401, appPassword: 200 });

    // Asked to, the reset revokes the app passwords, and a login flow allowed but not yet collected.
    const flow = await startLoginFlow(t.db, 'Kasts');
    expect(await approveLoginFlow(t.db, flow.code, u.id)).toBe(true);
    const revoked = await a.agent
      .post(`/web/admin/users/${u.name}/password`)
      .type('form')
      .send({ _csrf: a.csrf, password: 'reset-again', revoke_app_passwords: 'on' });
    expect(revoked.text).toContain('and the app passwords were revoked');
    expect((await as(t, `Bearer ${s.appPassword}`).get('/v1/subscriptions')).status).toBe(401);
    expect(await pollLoginFlow(t.db, flow.pollToken)).toBeUndefined();

    // Their own password: the administrator's other sessions end, the one in use stays.
    const elsewhere = await signedInAgent(t.app, admin.name, admin.password);
    const own = await a.agent
      .post(`/web/admin/users/${admin.name}/password`)
      .type('form')
      .send({ _csrf: a.csrf, password: 'admin-reset-own' });
    expect(own.text).toContain(`Password of ${admin.name} changed; your other sessions ended (app passwords stay).`);
    expect((await a.agent.get('/web/admin/users')).status).toBe(200);
    expect((await elsewhere.agent.get('/web/account')).status).toBe(303);
  });

  test("an administrator's app password, once an app has used it, is no browser session: it resets no password", async () => {
    const admin = await t.user('admin');
    await setAdmin(t.db, admin.name, true);
    const u = await t.user();
    const { token } = await createAppPasswordFor(t, admin.name, 'Kasts');
    expect((await as(t, `Bearer ${token}`).get('/v1/subscriptions')).status).toBe(200);
    // Whoever holds the app password puts it in the page's cookie, with the form token it implies.
    const csrf = createHmac('sha256', token).update('castsync-csrf').digest('base64url');
    const reset = await request(t.app)
      .post(`/web/admin/users/${u.name}/password`)
      .set('Cookie', `castsync_web=${token}`)
      .type('form')
      .send({ _csrf: csrf, password: 'chosen-by-the-app' });
    expect(reset.status).toBe(303);
    expect((await as(t, u).get('/v1/subscriptions')).status).toBe(200);
  });

  test('sign-up, when allowed, has the CLI password rules and signs the new user in (not as administrator)', async () => {
    const agent = request.agent(t.app);
    const page = await agent.get('/web/register');
    expect(page.status).toBe(200);
    const short = await agent
      .post('/web/register')
      .type('form')
      .send({ _csrf: csrfOf(page.text), username: 'newbie', password: 'short' });
    expect(short.status).toBe(400);
    expect(short.text).toContain('Passwords have at least 8 characters');
    const r = await agent
      .post('/web/register')
      .type('form')
      .send({ _csrf: csrfOf(page.text), username: 'newbie', password: 'long-enough' });
    expect(r.status).toBe(303);
    expect((await agent.get('/web/subscriptions')).status).toBe(200);
    expect((await agent.get('/web/admin/users')).status).toBe(403);
  });

  test('sign-up is off by default', async () => {
    const closed = await testApp();
    try {
      expect((await request(closed.app).get('/web/register')).status).toBe(404);
      expect((await request(closed.app).get('/')).text).not.toContain('/web/register');
    } finally {
      await closed.close();
    }
  });
});

test('the Nextcloud login flow: sign in, allow the app, and its poll gets an app password', async () => {
  const u = await t.user();
  const flow = await startLoginFlow(t.db, 'Kasts <script>');
  const path = `/login/flow/${encodeURIComponent(flow.code)}`;
  const { agent, csrf } = await signedInAgent(t.app, u.name, u.password);
  const page = await agent.get(path);
  expect(page.text).toContain('Allow Kasts &lt;script&gt; to access your account?');
  expect((await agent.post(path).type('form').send({})).status).toBe(403);
  expect(await pollLoginFlow(t.db, flow.pollToken)).toBeUndefined();
  const allowed = await agent.post(path).type('form').send({ _csrf: csrf });
  expect(allowed.status).toBe(200);
  expect(allowed.text).toContain('can now sync as');
  expect(await pollLoginFlow(t.db, flow.pollToken)).toEqual({
    loginName: u.name,
    appPassword: expect.stringMatching(/^csp_/),
  });
  expect((await agent.post(path).type('form').send({ _csrf: csrf })).status).toBe(404);
});
