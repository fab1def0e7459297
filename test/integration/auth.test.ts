import request from 'supertest';
import { as, expectError, sessionCookieOf, sleep, testApp, type TestApp, type TestUser } from '../helpers/app';
import { capturedLogger } from '../helpers/logs';
import { signedInAgent } from '../helpers/web';
import { createAppPasswordFor, revokeAppPasswordById, setPassword } from '../../src/auth/service';
import { AuthCache, credentialChanges } from '../../src/auth/cache';
import { listen, notifyThrough } from '../../src/db/notifications';
import pino from 'pino';
import argon2 from 'argon2';

let t: TestApp;
let alice: TestUser;
const log = capturedLogger('error');

beforeAll(async () => {
  t = await testApp({ ACCESS_TOKEN_TTL: '2' }, log.logger);
  alice = await t.user('alice');
});
afterAll(() => t.close());

const CHALLENGE = 'Bearer realm="castsync", Basic realm="castsync"';
const login = (username: string, password: string) =>
  request(t.app).post('/v1/auth/login').send({ username, password });
const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64');

describe('authentication', () => {
  test('without credentials: 401, the error body and the challenge header', async () => {
    const r = await request(t.app).get('/v1/subscriptions');
    expectError(r, 401, 'User not authorized');
    expect(r.headers['www-authenticate']).toBe(CHALLENGE);
  });

  test.each([
    ['a wrong password', () => basic(alice.name, 'wrong-password')],
    ['an unknown user', () => basic('nobody-here', 'whatever-pass')],
    ['a garbage bearer token', () => 'Bearer not-a-token'],
    ['an unknown scheme', () => 'Digest abc'],
    ['Basic without a colon', () => 'Basic ' + Buffer.from('alice').toString('base64')],
  ])('%s: 401 on GET and POST', async (_name, header) => {
    for (const r of [
      await request(t.app).get('/v1/subscriptions').set('Authorization', header()),
      await request(t.app).post('/v1/subscriptions').set('Authorization', header()).send({ subscriptions: [] }),
    ]) {
      expectError(r, 401, 'User not authorized');
      expect(r.headers['www-authenticate']).toBe(CHALLENGE);
    }
  });

  test.each([
    ['/v1/subscriptions'],
    ['/api/v1/subscriptions'],
    ['/api/2/devices/x.json'],
    ['/index.php/apps/gpoddersync/subscriptions'],
  ])(
    'a Basic username no user can have (with U+0000) on %s: 401 as for an unknown user, nothing logged',
    async (path) => {
      const logged = log.lines.length;
      const r = await request(t.app).get(path).set('Authorization', basic('a\u0000b', 'whatever-pass'));
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ code: '401' });
      expect(log.lines.slice(logged)).toEqual([]);
    },
  );

  test('HTTP Basic with the password works, again and again (from the cache)', async () => {
    for (let i = 0; i < 3; i++) expect((await as(t, alice).get('/v1/subscriptions')).status).toBe(200);
  });

  test('concurrent HTTP Basic requests of a user whose password is not cached cost one argon2 verification', async () => {
    const bob = await t.user('bob');
    const verify = jest.spyOn(argon2, 'verify');
    try {
      const answers = await Promise.all(Array.from({ length: 6 }, () => as(t, bob).get('/v1/subscriptions')));
      expect(answers.map((r) => r.status)).toEqual(Array(6).fill(200));
      expect(verify).toHaveBeenCalledTimes(1);
      const wrong = await Promise.all(
        Array.from({ length: 4 }, () => as(t, basic(bob.name, 'not-the-password')).get('/v1/subscriptions')),
      );
      for (const r of wrong) expectError(r, 401, 'User not authorized');
      expect(verify).toHaveBeenCalledTimes(2);
    } finally {
      verify.mockRestore();
    }
  });

  test('login gives the contract fields; the access token works as a bearer token', async () => {
    const r = await login(alice.name, alice.password);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      access_token: expect.any(String),
      expires_in: 2,
      refresh_token: expect.any(String),
      refresh_expires: expect.stringMatching(/Z$/),
      refresh_endpoint: '/v1/auth/refresh',
    });
    expect((await as(t, `Bearer ${r.body.access_token}`).get('/v1/subscriptions')).status).toBe(200);
  });

  test('login with a wrong password or unknown user: 401; a malformed body: 405', async () => {
    expectError(await login(alice.name, 'wrong-password'), 401, 'User not authorized');
    expectError(await login('nobody-at-all', 'wrong-password'), 401);
    expectError(
      await request(t.app).post('/v1/auth/login').send({ username: alice.name }),
      405,
      /^Input could not be validated/,
    );
  });

  test('an access token expires', async () => {
    const { access_token } = (await login(alice.name, alice.password)).body;
    expect((await as(t, `Bearer ${access_token}`).get('/v1/subscriptions')).status).toBe(200);
    await sleep(2200);
    expectError(await as(t, `Bearer ${access_token}`).get('/v1/subscriptions'), 401);
  });

  test('refresh rotates; a refresh token used twice is refused and ends that session', async () => {
    const first = (await login(alice.name, alice.password)).body;
    const r1 = await request(t.app).post('/v1/auth/refresh').send({ refresh_token: first.refresh_token });
    expect(r1.status).toBe(200);
    expect(r1.body.access_token).not.toBe(first.access_token);
    expect(r1.body.refresh_token).not.toBe(first.refresh_token);
    expect((await as(t, `Bearer ${r1.body.access_token}`).get('/v1/subscriptions')).status).toBe(200);
    expectError(await request(t.app).post('/v1/auth/refresh').send({ refresh_token: first.refresh_token }), 401);
    // The reuse revoked the family: the rotated tokens no longer work either.
    expectError(await request(t.app).post('/v1/auth/refresh').send({ refresh_token: r1.body.refresh_token }), 401);
    expectError(await as(t, `Bearer ${r1.body.access_token}`).get('/v1/subscriptions'), 401);
  });

  test('an unknown refresh token, or an access token used as one: 401', async () => {
    expectError(await request(t.app).post('/v1/auth/refresh').send({ refresh_token: 'csr_nope' }), 401);
    const s = (await login(alice.name, alice.password)).body;
    expectError(await request(t.app).post('/v1/auth/refresh').send({ refresh_token: s.access_token }), 401);
  });

  test('a refresh token cannot be used as an access token', async () => {
    const s = (await login(alice.name, alice.password)).body;
    expectError(await as(t, `Bearer ${s.refresh_token}`).get('/v1/subscriptions'), 401);
  });

  test('logout with a refresh token revokes that session only', async () => {
    const a = (await login(alice.name, alice.password)).body;
    const b = (await login(alice.name, alice.password)).body;
    const r = await as(t, `Bearer ${a.access_token}`).post('/v1/auth/logout', { refresh_token: a.refresh_token });
    expect(r.status).toBe(204);
    expectError(await as(t, `Bearer ${a.access_token}`).get('/v1/subscriptions'), 401);
    expectError(await request(t.app).post('/v1/auth/refresh').send({ refresh_token: a.refresh_token }), 401);
    expect((await as(t, `Bearer ${b.access_token}`).get('/v1/subscriptions')).status).toBe(200);
  });

  test('logout without a body revokes every session of the user', async () => {
    const a = (await login(alice.name, alice.password)).body;
    const b = (await login(alice.name, alice.password)).body;
    expect((await request(t.app).post('/v1/auth/logout').set('Authorization', `Bearer ${a.access_token}`)).status).toBe(
      204,
    );
    expectError(await as(t, `Bearer ${b.access_token}`).get('/v1/subscriptions'), 401);
    expectError(await request(t.app).post('/v1/auth/refresh').send({ refresh_token: b.refresh_token }), 401);
  });

  test("logout cannot revoke another user's session", async () => {
    const bob = await t.user('bob');
    const bobSession = (await login(bob.name, bob.password)).body;
    await as(t, alice).post('/v1/auth/logout', { refresh_token: bobSession.refresh_token });
    expect((await as(t, `Bearer ${bobSession.access_token}`).get('/v1/subscriptions')).status).toBe(200);
  });

  test('a personal access token works as Bearer and as the Basic password, until revoked', async () => {
    const pat = await createAppPasswordFor({ db: t.db }, alice.name, 'phone');
    expect((await as(t, `Bearer ${pat.token}`).get('/v1/subscriptions')).status).toBe(200);
    expect((await as(t, basic(alice.name, pat.token)).get('/v1/subscriptions')).status).toBe(200);
    const bob = await t.user('bob');
    expectError(await as(t, basic(bob.name, pat.token)).get('/v1/subscriptions'), 401);
    await revokeAppPasswordById({ db: t.db, authCache: t.authCache }, pat.id);
    expectError(await as(t, `Bearer ${pat.token}`).get('/v1/subscriptions'), 401);
    expectError(await as(t, basic(alice.name, pat.token)).get('/v1/subscriptions'), 401);
  });

  test('each kind of token opens only its own door, also once its own use is cached', async () => {
    const u = await t.user('kinds');
    const doors = {
      bearer: async (v: string) => (await as(t, `Bearer ${v}`).get('/v1/subscriptions')).status === 200,
      sessionid: async (v: string) =>
        (await request(t.app).get(`/api/2/devices/${u.name}.json`).set('Cookie', `sessionid=${v}`)).status === 200,
      page: async (v: string) =>
        (await request(t.app).get('/web/account').set('Cookie', `castsync_web=${v}`)).status === 200,
    };
    const browser = (await signedInAgent(t.app, u.name, u.password)).cookie.replace('castsync_web=', '');
    const tokens = {
      appPassword: (await createAppPasswordFor(t, u.name, 'phone')).token,
      access: (await login(u.name, u.password)).body.access_token as string,
      gpodder: sessionCookieOf(await as(t, u).post(`/api/2/auth/${u.name}/login.json`))!,
      browser,
    };
    const opens = async (token: string) => ({
      bearer: await doors.bearer(token),
      sessionid: await doors.sessionid(token),
      page: await doors.page(token),
    });
    // Each used where it belongs first, so that the credential cache holds it when it is tried elsewhere.
    expect(await doors.bearer(tokens.appPassword)).toBe(true);
    expect(await doors.bearer(tokens.access)).toBe(true);
    expect(await doors.sessionid(tokens.gpodder)).toBe(true);
    expect(await doors.page(tokens.browser)).toBe(true);
    expect(await opens(tokens.appPassword)).toEqual({ bearer: true, sessionid: false, page: false });
    expect(await opens(tokens.access)).toEqual({ bearer: true, sessionid: false, page: false });
    expect(await opens(tokens.gpodder)).toEqual({ bearer: false, sessionid: true, page: false });
    expect(await opens(tokens.browser)).toEqual({ bearer: false, sessionid: false, page: true });
  });

  test('a password change takes effect at once: the old password is refused, the new one works', async () => {
    const carol = await t.user('carol');
    expect((await as(t, carol).get('/v1/subscriptions')).status).toBe(200);
    await setPassword({ db: t.db, authCache: t.authCache }, carol.name, 'a-brand-new-password');
    expectError(await as(t, carol).get('/v1/subscriptions'), 401);
    expect((await as(t, basic(carol.name, 'a-brand-new-password')).get('/v1/subscriptions')).status).toBe(200);
  });

  test('a credential change in another process (the CLI) empties this process cache through NOTIFY', async () => {
    const cache = new AuthCache(60_000);
    const listener = listen(t.url, [credentialChanges(cache)], pino({ level: 'silent' }), {
      notify: notifyThrough(t.db),
    });
    try {
      for (let i = 0; i < 100 && !cache.active; i++) await sleep(50);
      expect(cache.active).toBe(true);
      cache.set('b:someone', 42);
      expect(cache.get('b:someone')).toBe(42);
      const dave = await t.user('dave');
      await setPassword({ db: t.db, authCache: new AuthCache(0) }, dave.name, 'another-new-password');
      for (let i = 0; i < 100 && cache.get('b:someone') !== undefined; i++) await sleep(50);
      expect(cache.get('b:someone')).toBeUndefined();
    } finally {
      await listener.stop();
    }
  });

  test('passwords are stored as argon2id hashes and tokens as SHA-256 digests, never in the clear', async () => {
    const s = (await login(alice.name, alice.password)).body;
    const u = await t.db.query('SELECT password_hash FROM users WHERE username = $1', [alice.name]);
    expect(u.rows[0].password_hash).toMatch(/^\$argon2id\$v=19\$m=47104,p=1,t=1\$/);
    const tokens = await t.db.query('SELECT token_hash FROM tokens');
    for (const row of tokens.rows) {
      expect(row.token_hash).toHaveLength(32);
      expect(row.token_hash.toString('utf8')).not.toContain(s.access_token);
    }
  });
});

describe('rate limits', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await testApp({ AUTH_FAILURE_RATE_LIMIT: '5', LOGIN_RATE_LIMIT: '4' });
  });
  afterAll(() => limited.close());
  const limitedLogin = (username: string, password: string) =>
    request(limited.app).post('/v1/auth/login').send({ username, password });

  test('repeated failed authentication for one username and address: 429 with Retry-After', async () => {
    const victim = await limited.user('victim');
    const bad = basic(victim.name, 'not-the-password');
    for (let i = 0; i < 5; i++) expectError(await as(limited, bad).get('/v1/subscriptions'), 401);
    const r = await as(limited, bad).get('/v1/subscriptions');
    expectError(r, 429, 'Too many requests');
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    // The right password gets the same answer: a blocked client learns nothing about its guesses.
    expectError(await as(limited, basic(victim.name, victim.password)).get('/v1/subscriptions'), 429);
    // Another user from the same address is not affected.
    const other = await limited.user('other');
    expect((await as(limited, other).get('/v1/subscriptions')).status).toBe(200);
  });

  test('successful requests do not count towards the limit', async () => {
    const busy = await limited.user('busy');
    for (let i = 0; i < 10; i++) expect((await as(limited, busy).get('/v1/subscriptions')).status).toBe(200);
  });

  test('requests without credentials do not count: 401 with the challenge, and the bearer tokens of the address still work', async () => {
    const u = await limited.user('anonymous');
    const { access_token } = (await limitedLogin(u.name, u.password)).body;
    for (const header of [undefined, 'Digest abc']) {
      for (let i = 0; i < 6; i++) {
        const get = request(limited.app).get('/v1/subscriptions');
        const r = header === undefined ? await get : await get.set('Authorization', header);
        expectError(r, 401, 'User not authorized');
        expect(r.headers['www-authenticate']).toBe(CHALLENGE);
      }
    }
    expect((await as(limited, `Bearer ${access_token}`).get('/v1/subscriptions')).status).toBe(200);
  });

  test('refused bearer tokens do not count: expired access tokens do not lock out the bearer clients of their address', async () => {
    const [u, v] = [await limited.user('expired'), await limited.user('fresh')];
    const old = (await limitedLogin(u.name, u.password)).body.access_token;
    await limited.db.query(
      `UPDATE tokens SET expires_at = now() - interval '1 second' WHERE token_hash = sha256($1::bytea)`,
      [Buffer.from(old)],
    );
    const fresh = `Bearer ${(await limitedLogin(v.name, v.password)).body.access_token}`;
    for (let i = 0; i < 6; i++) {
      expectError(await as(limited, `Bearer ${old}`).get('/v1/subscriptions'), 401, 'User not authorized');
      expectError(await as(limited, `Bearer ${old}`).get(`/api/2/devices/${u.name}.json`), 401, 'User not authorized');
    }
    expect((await as(limited, fresh).get('/v1/subscriptions')).status).toBe(200);
    expect((await as(limited, fresh).get(`/api/2/devices/${v.name}.json`)).status).toBe(200);
  });

  test("a login's session is issued once the limit let it through: one a burst of guesses blocked meanwhile has none", async () => {
    const u = await limited.user('burst');
    const logins = async () =>
      (
        await limited.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM tokens WHERE user_id = $1 AND kind IN ('access', 'refresh')`,
          [u.id],
        )
      ).rows[0]!.n;
    // The tokens table held, so that the right login waits where it writes, while the wrong guesses sent
    // after it block the name.
    const holder = await limited.db.connect();
    let right: Promise<request.Response>;
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE tokens IN EXCLUSIVE MODE');
      right = limitedLogin(u.name, u.password).then((r) => r);
      const waiting = async () =>
        (
          await limited.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'tokens'::regclass AND NOT granted`,
          )
        ).rows[0]!.n > 0;
      for (let i = 0; i < 200 && !(await waiting()); i++) await new Promise((r) => setTimeout(r, 25));
      expect(await waiting()).toBe(true);
      for (let i = 0; i < 5; i++) await limitedLogin(u.name, 'wrong-password');
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    const answer = await right!;
    // Whichever answer it gets, a 429 is given no session and a 200 exactly one.
    expect([200, 429]).toContain(answer.status);
    expect(await logins()).toBe(answer.status === 200 ? 2 : 0);
  });

  test('failed logins are limited per username: 429 with Retry-After', async () => {
    const target = await limited.user('target');
    for (let i = 0; i < 4; i++) expectError(await limitedLogin(target.name, 'wrong-password'), 401);
    const r = await limitedLogin(target.name, 'wrong-password');
    expectError(r, 429, 'Too many requests');
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    expectError(await limitedLogin(target.name, target.password), 429);
    const other = await limited.user('other');
    expect((await limitedLogin(other.name, other.password)).status).toBe(200);
  });
});
