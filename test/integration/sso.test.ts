import request from 'supertest';
import { signInVouched } from '../../src/auth/identities';
import { SignInRefused } from '../../src/errors';
import { testApp, type TestApp } from '../helpers/app';
import { capturedLogger } from '../helpers/logs';
import { csrfOf } from '../helpers/web';

// Single sign-on without the browser: a trusted proxy's header, PASSWORD_LOGIN=false, users with no
// password reaching the apps with app passwords, and how people are linked to users (docs/sso.md).
// The OpenID Connect flow itself runs in Chromium against a real provider: test/process/oidc.test.ts.

const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');
const webCookie = (res: request.Response) =>
  ([res.headers['set-cookie']].flat().filter(Boolean) as string[]).find((c) => c.startsWith('castsync_web='));

/** An app's Nextcloud login flow: started, approved on the page by `agent`, polled for its app password. */
async function loginFlow(t: TestApp, agent: ReturnType<typeof request.agent>, headers: Record<string, string>) {
  const start = await request(t.app).post('/index.php/login/v2').set('User-Agent', 'AntennaPod/3.5');
  const { poll, login } = start.body as { poll: { token: string; endpoint: string }; login: string };
  const page = await agent.get(new URL(login).pathname).set(headers);
  expect(page.status).toBe(200);
  expect(page.text).toContain('Allow AntennaPod/3.5');
  const approved = await agent
    .post(new URL(login).pathname)
    .set(headers)
    .type('form')
    .send({ _csrf: csrfOf(page.text) });
  expect(approved.status).toBe(200);
  const answer = await request(t.app).post(new URL(poll.endpoint).pathname).type('form').send({ token: poll.token });
  expect(answer.status).toBe(200);
  return answer.body as { loginName: string; appPassword: string };
}

describe('a trusted proxy header, from an allowed address', () => {
  let t: TestApp;
  const log = capturedLogger('warn');
  beforeAll(async () => {
    t = await testApp({ TRUSTED_AUTH_HEADER: 'Remote-User', TRUSTED_PROXIES: '127.0.0.1, ::1' }, log.logger);
  });
  afterAll(() => t.close());

  test('signs the person in on the web page, with a browser session of their own', async () => {
    const u = await t.user('proxied');
    const agent = request.agent(t.app);
    const page = await agent.get('/web/subscriptions').set('Remote-User', u.name);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`Sign out ${u.name}`);
    expect(webCookie(page)).toBeDefined();
    // The sign-in page sends a signed-in person on.
    const root = await agent.get('/').set('Remote-User', u.name);
    expect(root.status).toBe(303);
    // Forms carry the session's token as with any sign-in.
    const made = await agent
      .post('/web/app-passwords')
      .set('Remote-User', u.name)
      .type('form')
      .send({ _csrf: csrfOf(page.text), label: 'Kasts' });
    expect(made.status).toBe(200);
    expect(made.text).toMatch(/csp_[A-Za-z0-9_-]{43}/);
  });

  test('a browser signed in as someone else is switched to the person the proxy names', async () => {
    const [a, b] = [await t.user('first'), await t.user('second')];
    const agent = request.agent(t.app);
    expect((await agent.get('/web/account').set('Remote-User', a.name)).text).toContain(`Sign out ${a.name}`);
    const page = await agent.get('/web/account').set('Remote-User', b.name);
    expect(page.text).toContain(`Sign out ${b.name}`);
  });

  test('an unknown name is refused with a page, as SSO_CREATE_USERS is off', async () => {
    const page = await request(t.app).get('/web/subscriptions').set('Remote-User', 'nobody-here');
    expect(page.status).toBe(403);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('There is no castsync user nobody-here');
  });

  test('never authenticates on /v1, /api/2 or the Nextcloud routes', async () => {
    const u = await t.user('api');
    for (const path of [
      '/v1/subscriptions',
      `/api/2/devices/${u.name}.json`,
      '/index.php/apps/gpoddersync/subscriptions',
    ]) {
      const r = await request(t.app).get(path).set('Remote-User', u.name);
      expect({ path, status: r.status }).toEqual({ path, status: 401 });
    }
    const login = await request(t.app).post(`/api/2/auth/${u.name}/login.json`).set('Remote-User', u.name);
    expect(login.status).toBe(401);
  });

  test('approves a Nextcloud-mode app, whose app password then syncs', async () => {
    const u = await t.user('flow');
    const agent = request.agent(t.app);
    const { loginName, appPassword } = await loginFlow(t, agent, { 'Remote-User': u.name });
    expect(loginName).toBe(u.name);
    const r = await request(t.app)
      .get('/index.php/apps/gpoddersync/subscriptions?since=0')
      .set('Authorization', basic(u.name, appPassword));
    expect(r.status).toBe(200);
  });

  test('an administrator makes a user without a password, for single sign-on only', async () => {
    const admin = await t.user('admin');
    await t.db.query('UPDATE users SET is_admin = true WHERE id = $1', [admin.id]);
    const agent = request.agent(t.app);
    const page = await agent.get('/web/admin/users').set('Remote-User', admin.name);
    expect(page.text).toContain('Leave it empty for someone who signs in only with single sign-on.');
    const made = await agent
      .post('/web/admin/users')
      .set('Remote-User', admin.name)
      .type('form')
      .send({ _csrf: csrfOf(page.text), username: 'newcomer', password: '' });
    expect(made.status).toBe(200);
    expect(made.text).toContain('User newcomer created');
    const r = await t.db.query('SELECT password_hash FROM users WHERE username = $1', ['newcomer']);
    expect(r.rows).toEqual([{ password_hash: null }]);
    // ... who then signs in through the proxy.
    expect((await request(t.app).get('/web/account').set('Remote-User', 'newcomer')).status).toBe(200);
  });

  test('was never logged as coming from an untrusted address', () => {
    expect(log.lines.filter((l) => String(l.msg).includes('TRUSTED_PROXIES'))).toEqual([]);
  });
});

describe('a trusted proxy header, from any other address', () => {
  let t: TestApp;
  const log = capturedLogger('warn');
  beforeAll(async () => {
    t = await testApp(
      { TRUSTED_AUTH_HEADER: 'Remote-User', TRUSTED_PROXIES: '10.0.0.0/8', TRUST_PROXY: 'true' },
      log.logger,
    );
  });
  afterAll(() => t.close());

  test('is ignored, even with X-Forwarded-For naming a trusted proxy, and logged once', async () => {
    const u = await t.user('spoof');
    for (let i = 0; i < 3; i++) {
      const page = await request(t.app)
        .get('/web/subscriptions')
        .set('Remote-User', u.name)
        .set('X-Forwarded-For', '10.0.0.7');
      expect(page.status).toBe(303);
      expect(page.headers.location).toBe('/?next=%2Fweb%2Fsubscriptions');
      expect(webCookie(page)).toBeUndefined();
    }
    const warnings = log.lines.filter((l) => String(l.msg).includes('TRUSTED_PROXIES'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ header: 'remote-user', peer: expect.stringMatching(/127\.0\.0\.1|::1/) });
  });
});

describe('single sign-on only: PASSWORD_LOGIN=false, users created at sign-in', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({
      TRUSTED_AUTH_HEADER: 'X-Forwarded-User',
      TRUSTED_PROXIES: '127.0.0.0/8, ::1',
      PASSWORD_LOGIN: 'false',
      SSO_CREATE_USERS: 'true',
    });
  });
  afterAll(() => t.close());

  test('a new person gets a user with no password, who reaches every door with app passwords', async () => {
    const headers = { 'X-Forwarded-User': 'grace' };
    const agent = request.agent(t.app);
    const account = await agent.get('/web/account').set(headers);
    expect(account.status).toBe(200);
    expect(account.text).toContain('have no castsync password');
    expect(account.text).not.toContain('Change password');
    const r = await t.db.query('SELECT password_hash FROM users WHERE username = $1', ['grace']);
    expect(r.rows).toEqual([{ password_hash: null }]);

    const made = await agent
      .post('/web/app-passwords')
      .set(headers)
      .type('form')
      .send({ _csrf: csrfOf(account.text), label: 'gPodder' });
    const appPassword = /csp_[A-Za-z0-9_-]{43}/.exec(made.text)![0];
    const auth = basic('grace', appPassword);
    expect((await request(t.app).get('/api/2/devices/grace.json').set('Authorization', auth)).status).toBe(200);
    expect((await request(t.app).post('/api/2/auth/grace/login.json').set('Authorization', auth)).status).toBe(200);
    expect((await request(t.app).get('/v1/subscriptions').set('Authorization', `Bearer ${appPassword}`)).status).toBe(
      200,
    );
    const { appPassword: fromFlow } = await loginFlow(t, agent, headers);
    const nc = await request(t.app)
      .get('/index.php/apps/gpoddersync/subscriptions?since=0')
      .set('Authorization', basic('grace', fromFlow));
    expect(nc.status).toBe(200);

    // ... and sees and revokes them.
    const list = await agent.get('/web/app-passwords').set(headers);
    expect(list.text).toContain('gPodder');
    expect(list.text).toContain('AntennaPod/3.5');
    const id = /action="\/web\/app-passwords\/(\d+)\/revoke"/.exec(list.text)![1];
    const revoked = await agent
      .post(`/web/app-passwords/${id}/revoke`)
      .set(headers)
      .type('form')
      .send({ _csrf: csrfOf(list.text) });
    expect(revoked.status).toBe(303);
    const left = await agent.get('/web/app-passwords').set(headers);
    expect(left.text.match(/\/revoke"/g)).toHaveLength(1);
  });

  test('account passwords sign in nowhere; the sign-in page offers no password form', async () => {
    const u = await t.user('local');
    const page = await request(t.app).get('/');
    expect(page.text).not.toContain('name="password"');
    const form = await request(t.app)
      .post('/web/sign-in')
      .type('form')
      .send({ username: u.name, password: u.password });
    expect(form.status).toBe(404);
    expect(form.text).toContain('Signing in with a password is turned off');
    const auth = basic(u.name, u.password);
    expect((await request(t.app).get(`/api/2/devices/${u.name}.json`).set('Authorization', auth)).status).toBe(401);
    expect(
      (await request(t.app).get('/index.php/apps/gpoddersync/subscriptions').set('Authorization', auth)).status,
    ).toBe(401);
    const v1 = await request(t.app).post('/v1/auth/login').send({ username: u.name, password: u.password });
    expect(v1.status).toBe(401);
  });
});

describe('how a vouched-for person is linked to a user', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());
  const provider = { issuer: 'https://id.example', subject: 'sub-1' };

  test('by name the first time, by subject after: a renamed person stays the same user', async () => {
    const u = await t.user('linked');
    expect(await signInVouched(t.db, { username: u.name, provider }, { createUsers: false })).toBe(u.id);
    const renamed = { username: 'a-new-name', provider };
    expect(await signInVouched(t.db, renamed, { createUsers: false })).toBe(u.id);
  });

  test('a user linked to one person at a provider is refused to another person of the same name', async () => {
    const u = await t.user('taken');
    await signInVouched(
      t.db,
      { username: u.name, provider: { issuer: 'https://id.example', subject: 'first' } },
      { createUsers: false },
    );
    const other = { username: u.name, provider: { issuer: 'https://id.example', subject: 'second' } };
    await expect(signInVouched(t.db, other, { createUsers: true })).rejects.toThrow(/belongs to another person/);
    // Another provider's person of that name is linked too (the administrator runs both).
    const elsewhere = { username: u.name, provider: { issuer: 'https://other.example', subject: 'first' } };
    expect(await signInVouched(t.db, elsewhere, { createUsers: false })).toBe(u.id);
  });

  test('two people of one name signing in for the first time at once: the second is refused, not let in', async () => {
    const u = await t.user('race');
    const issuer = 'https://race.example';
    // The first person's sign-in has linked the user and not committed yet when the second one's looks.
    const first = await t.db.connect();
    try {
      await first.query('BEGIN');
      await first.query('INSERT INTO user_identities (issuer, subject, user_id) VALUES ($1, $2, $3)', [
        issuer,
        'first',
        u.id,
      ]);
      const second = signInVouched(
        t.db,
        { username: u.name, provider: { issuer, subject: 'second' } },
        { createUsers: false },
      ).then(
        (userId) => ({ userId }),
        (err: unknown) => ({ err }),
      );
      // The second sign-in waits on the first one's link.
      for (let i = 0; i < 200; i++) {
        const r = await t.db.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        if (r.rows[0].n > 0) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      await first.query('COMMIT');
      expect(await second).toEqual({ err: expect.any(SignInRefused) });
    } finally {
      first.release();
    }
    const links = await t.db.query('SELECT subject FROM user_identities WHERE user_id = $1', [u.id]);
    expect(links.rows).toEqual([{ subject: 'first' }]);
  });

  test('a name that cannot be a username is refused, saying why', async () => {
    await expect(signInVouched(t.db, { username: 'ada@example.org' }, { createUsers: true })).rejects.toThrow(
      SignInRefused,
    );
    await expect(signInVouched(t.db, { username: 'ada@example.org' }, { createUsers: true })).rejects.toThrow(
      /not a castsync username/,
    );
  });

  test("the provider's group makes and unmakes an administrator", async () => {
    const u = await t.user('boss');
    const admin = async () =>
      (await t.db.query('SELECT is_admin FROM users WHERE id = $1', [u.id])).rows[0].is_admin as boolean;
    const as = (isAdmin: boolean | undefined) =>
      signInVouched(
        t.db,
        { username: u.name, provider: { issuer: 'https://g.example', subject: 'boss' }, admin: isAdmin },
        { createUsers: false },
      );
    await as(true);
    expect(await admin()).toBe(true);
    await as(undefined);
    expect(await admin()).toBe(true);
    await as(false);
    expect(await admin()).toBe(false);
  });
});
