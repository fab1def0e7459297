import { freshDatabase } from '../helpers/db';
import {
  basicAuth,
  call,
  cli,
  deletionOutcome,
  settles,
  startServer,
  stopServer,
  type ServerProcess,
} from '../helpers/process';

// Two app processes behind one load balancer, on one database: no state in a process may matter.
let database: Awaited<ReturnType<typeof freshDatabase>>;
let a: ServerProcess;
let b: ServerProcess;
const auth = basicAuth('ivy', 'ivy-password');

beforeAll(async () => {
  database = await freshDatabase();
  const env = { DATABASE_URL: database.url };
  expect(cli(['user', 'add', 'ivy', '--password-stdin'], env, 'ivy-password\n').status).toBe(0);
  [a, b] = await Promise.all([startServer(env), startServer({ ...env, WORKER: 'false' })]);
});
afterAll(async () => {
  await Promise.all([stopServer(a), stopServer(b)]);
  await database.drop();
});

type Rec = { feed_url: string; guid: string; new_guid?: string; is_subscribed: boolean };

test('interleaved writes and since-syncs through both instances end in exactly the final state', async () => {
  const state = new Map<string, boolean>();
  let since: string | undefined;
  const sync = async (origin: string) => {
    let r = await call(
      origin,
      'GET',
      `/v1/subscriptions?per_page=9${since ? `&since=${encodeURIComponent(since)}` : ''}`,
      auth,
    );
    const stamp = r.headers.get('sync-timestamp')!;
    for (;;) {
      for (const s of r.body.subscriptions as Rec[]) state.set(s.feed_url, s.is_subscribed);
      if (!r.body.next) break;
      const next = new URL(r.body.next);
      r = await call(origin, 'GET', next.pathname + next.search, auth);
    }
    since = stamp;
  };
  let writing = true;
  const reader = (async () => {
    for (let i = 0; writing; i++) await sync(i % 2 ? a.origin : b.origin);
  })();
  await Promise.all(
    [a, b, a, b].map(async (s, w) => {
      for (let i = 0; i < 25; i++) {
        const url = `https://two.example/${(i * 3 + w) % 30}.xml`;
        const r = await call(s.origin, 'POST', '/v1/subscriptions', auth, { subscriptions: [{ feed_url: url }] });
        expect(r.status).toBe(200);
        if ((i + w) % 4 === 0) {
          const p = await call(s.origin, 'PATCH', `/v1/subscriptions/${r.body.success[0].guid}`, auth, {
            is_subscribed: false,
          });
          expect(p.status).toBe(200);
        }
      }
    }),
  );
  writing = false;
  await reader;
  await sync(a.origin);
  const truth = (await call(b.origin, 'GET', '/v1/subscriptions?per_page=500', auth)).body.subscriptions as Rec[];
  expect(new Map(truth.map((s) => [s.feed_url, s.is_subscribed]))).toEqual(state);
  expect(new Set(truth.map((s) => s.feed_url)).size).toBe(truth.length);
});

test('a session from one instance works on the other; a logout on one is honoured by the other at once', async () => {
  const login = await call(a.origin, 'POST', '/v1/auth/login', undefined, {
    username: 'ivy',
    password: 'ivy-password',
  });
  const bearer = `Bearer ${login.body.access_token}`;
  expect((await call(b.origin, 'GET', '/v1/subscriptions', bearer)).status).toBe(200);
  const refreshed = await call(b.origin, 'POST', '/v1/auth/refresh', undefined, {
    refresh_token: login.body.refresh_token,
  });
  expect(refreshed.status).toBe(200);
  const fresh = `Bearer ${refreshed.body.access_token}`;
  expect((await call(a.origin, 'GET', '/v1/subscriptions', fresh)).status).toBe(200);
  expect((await call(b.origin, 'GET', '/v1/subscriptions', fresh)).status).toBe(200);
  expect((await call(a.origin, 'POST', '/v1/auth/logout', fresh)).status).toBe(204);
  let status = 200;
  for (let i = 0; i < 20 && status === 200; i++) {
    status = (await call(b.origin, 'GET', '/v1/subscriptions', fresh)).status;
    if (status === 200) await new Promise((r) => setTimeout(r, 50));
  }
  expect(status).toBe(401);
  // The refresh token spent on one instance is refused by the other.
  expect(
    (await call(a.origin, 'POST', '/v1/auth/refresh', undefined, { refresh_token: login.body.refresh_token })).status,
  ).toBe(401);
});

/** The value of a cookie an answer set. */
const setCookie = (r: Response, name: string): string =>
  r.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith(`${name}=`))!
    .slice(name.length + 1);
const formToken = (html: string): string => /name="_csrf" value="([^"]*)"/.exec(html)![1]!;
const form = (cookie: string, fields: Record<string, string>): RequestInit => ({
  method: 'POST',
  redirect: 'manual',
  headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields),
});

/** Signs in to the web page: the browser session's cookie. */
async function webSignIn(origin: string, username: string, password: string): Promise<string> {
  const page = await fetch(`${origin}/`);
  const fields = { _csrf: formToken(await page.text()), username, password };
  const r = await fetch(`${origin}/web/sign-in`, form(`castsync_csrf=${setCookie(page, 'castsync_csrf')}`, fields));
  expect(r.status).toBe(303);
  return `castsync_web=${setCookie(r, 'castsync_web')}`;
}

/** What the web page answers a browser session (303: to the sign-in page) and the gpodder API a sessionid. */
const webStatus = async (origin: string, cookie: string) =>
  (await fetch(`${origin}/web/account`, { headers: { cookie }, redirect: 'manual' })).status;
const gpodderStatus = async (origin: string, sessionid: string) =>
  (await fetch(`${origin}/api/2/devices/jude.json`, { headers: { cookie: `sessionid=${sessionid}` } })).status;

test("an administrator's password reset (CLI or web page) ends the user's sessions on both instances", async () => {
  const env = { DATABASE_URL: database.url };
  expect(cli(['user', 'add', 'jude', '--password-stdin'], env, 'jude-password-0\n').status).toBe(0);
  expect(cli(['user', 'add', 'boss', '--admin', '--password-stdin'], env, 'boss-password\n').status).toBe(0);
  const viaCli = (password: string) =>
    expect(cli(['user', 'passwd', 'jude', '--password-stdin'], env, `${password}\n`).status).toBe(0);
  const viaPage = async (password: string) => {
    const boss = await webSignIn(a.origin, 'boss', 'boss-password');
    const page = await fetch(`${a.origin}/web/admin/users`, { headers: { cookie: boss } });
    const r = await fetch(
      `${a.origin}/web/admin/users/jude/password`,
      form(boss, { _csrf: formToken(await page.text()), password }),
    );
    expect(r.status).toBe(200);
  };
  let password = 'jude-password-0';
  for (const [i, reset] of [viaCli, viaPage].entries()) {
    const web = await webSignIn(a.origin, 'jude', password);
    const login = await fetch(`${b.origin}/api/2/auth/jude/login.json`, {
      method: 'POST',
      headers: { authorization: basicAuth('jude', password) },
    });
    const sessionid = setCookie(login, 'sessionid');
    // Used on both instances, so that both have them in their credential caches.
    for (const s of [a, b]) {
      expect(await webStatus(s.origin, web)).toBe(200);
      expect(await gpodderStatus(s.origin, sessionid)).toBe(200);
    }
    password = `jude-password-${i + 1}`;
    await reset(password);
    for (const s of [a, b]) {
      expect(await settles(() => webStatus(s.origin, web), 303)).toBe(303);
      expect(await settles(() => gpodderStatus(s.origin, sessionid), 401)).toBe(401);
    }
  }
});

test('once one instance has limited an account, the other answers 429 too, to the right password as well', async () => {
  const env = { DATABASE_URL: database.url };
  expect(cli(['user', 'add', 'kit', '--password-stdin'], env, 'kit-password\n').status).toBe(0);
  const get = (s: ServerProcess, password: string) => async () =>
    (await call(s.origin, 'GET', '/v1/subscriptions', basicAuth('kit', password))).status;
  expect(await get(b, 'kit-password')()).toBe(200);
  // AUTH_FAILURE_RATE_LIMIT (20) refusals on one instance.
  for (let i = 0; i < 20; i++) expect(await get(a, `guess-${i}`)()).toBe(401);
  expect(await get(a, 'kit-password')()).toBe(429);
  expect(await settles(get(b, 'kit-password'), 429)).toBe(429);
  expect(await get(b, 'another-guess')()).toBe(429);
  // LOGIN_RATE_LIMIT (10) failed logins, half on each instance.
  const login = (s: ServerProcess, password: string) => async () =>
    (await call(s.origin, 'POST', '/v1/auth/login', undefined, { username: 'kit', password })).status;
  for (let i = 0; i < 10; i++) expect(await login(i % 2 ? a : b, `guess-${i}`)()).toBe(401);
  expect(await settles(login(a, 'kit-password'), 429)).toBe(429);
  expect(await settles(login(b, 'kit-password'), 429)).toBe(429);
});

test('a deletion accepted by the instance without a worker is done by the one with it', async () => {
  const list = await call(b.origin, 'GET', '/v1/subscriptions', auth);
  const guid = (list.body.subscriptions as Rec[]).find((s) => s.is_subscribed)!.guid;
  const d = await call(b.origin, 'DELETE', `/v1/subscriptions/${guid}`, auth);
  expect(d.status).toBe(202);
  expect(await deletionOutcome(a.origin, auth, d.body.deletion_id)).toBe('SUCCESS');
});

test('requests the HTTP parser refuses still get the error body', async () => {
  const r = await call(a.origin, 'GET', '/v1/subscriptions', 'Bearer ' + 'x'.repeat(100_000));
  expect({ status: r.status, body: r.body }).toEqual({
    status: 431,
    body: { code: '431', message: 'Request headers too large' },
  });
});
