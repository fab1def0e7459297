import net from 'node:net';
import request from 'supertest';
import { as, testApp, type TestApp } from '../helpers/app';
import { capturedLogger, parseStrictJson } from '../helpers/logs';
import { csrfOf, signedInAgent } from '../helpers/web';

let t: TestApp;
const { logger, raw } = capturedLogger();
/**
 * A loopback port nothing listens on: a feed's address (refused before any connection), and the OpenID
 * provider's, which cannot be used, so that a sign-in fails after the callback is read.
 */
let closed: number;
beforeAll(async () => {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  closed = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  t = await testApp(
    { OIDC_ISSUER: `http://127.0.0.1:${closed}`, OIDC_CLIENT_ID: 'castsync', PUBLIC_URL: 'http://castsync.test' },
    logger,
  );
});
afterAll(() => t.close());

/** The finished-request lines written since `from`, parsed with a parser that refuses a repeated key. */
const finished = (from: number) =>
  raw
    .slice(from)
    .map((l) => parseStrictJson(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'request completed' || l.msg === 'request errored');

test('the strict parser refuses a repeated key (the defect it guards against)', () => {
  expect(() => parseStrictJson('{"route":"unmatched","status":200,"route":"/x","status":405}')).toThrow(/duplicate/);
  expect(parseStrictJson('{"a":{"b":[1,"x\\"y",null]},"c":true}')).toEqual({ a: { b: [1, 'x"y', null] }, c: true });
});

test('each request line has one route, one status and one user id, the right ones; metrics agree', async () => {
  const u = await t.user();
  const from = raw.length;
  expect((await as(t, u).get('/v1/subscriptions')).status).toBe(200);
  expect((await request(t.app).get('/v1/subscriptions')).status).toBe(401);
  const wrong = await request(t.app).get('/v1/auth/login');
  expect(wrong.status).toBe(405);
  expect(wrong.headers.allow).toBe('POST');
  expect(wrong.body).toEqual({ code: '405', message: 'Method not allowed' });
  // A statement that fails for a reason that is not the database being away: a 500.
  await t.db.query('ALTER TABLE deletions RENAME TO deletions_away');
  try {
    const r = await as(t, u).get('/v1/deletions/1');
    expect(r.status).toBe(500);
  } finally {
    await t.db.query('ALTER TABLE deletions_away RENAME TO deletions');
  }
  const lines = finished(from);
  expect(lines.map((l) => [l.route, l.status, l.userId])).toEqual([
    ['/v1/subscriptions', 200, u.id],
    ['/v1/subscriptions', 401, undefined],
    ['/v1/auth/login', 405, undefined],
    ['/v1/deletions/:id', 500, u.id],
  ]);
  // The 500 is logged once, on its request's line, with the error.
  const errors = raw.slice(from).filter((l) => l.includes('deletions_away') || l.includes('"level":50'));
  expect(errors).toHaveLength(1);
  expect(lines[3]).toMatchObject({ level: 50, err: { type: 'DatabaseError' } });

  const metrics = (await request(t.app).get('/metrics')).text;
  expect(metrics).toMatch(
    /http_request_duration_seconds_count\{method="GET",route="\/v1\/deletions\/:id",status="500"\} 1/,
  );
  expect(metrics).toMatch(
    /http_request_duration_seconds_count\{method="GET",route="\/v1\/auth\/login",status="405"\} 1/,
  );
  expect(metrics).toMatch(
    /http_request_duration_seconds_count\{method="GET",route="\/v1\/subscriptions",status="401"\} 1/,
  );
  expect(metrics).not.toMatch(/route="\/deletions\/:id"/);
});

/** Every log line written since `from`, as written. */
const written = (from: number) => raw.slice(from).join('\n');

test("the log after a login flow holds no approval code, neither the page's path nor a `next` leading to it", async () => {
  const u = await t.user();
  const from = raw.length;
  const start = await request(t.app).post('/index.php/login/v2').set('User-Agent', 'AntennaPod/3.5').expect(200);
  const path = new URL(start.body.login as string).pathname;
  const code = decodeURIComponent(path.split('/').pop()!);
  // Signed out, the page sends the browser to sign in first, and back.
  const agent = request.agent(t.app);
  const away = await agent.get(path).expect(303);
  const signIn = await agent.get(away.headers.location!).expect(200);
  const back = await agent
    .post('/web/sign-in')
    .type('form')
    .send({ _csrf: csrfOf(signIn.text), username: u.name, password: u.password, next: path })
    .expect(303);
  expect(back.headers.location).toBe(path);
  const page = await agent.get(path).expect(200);
  await agent.get(`${path}/`).expect(200);
  const allowed = await agent
    .post(path)
    .type('form')
    .send({ _csrf: csrfOf(page.text) });
  expect(allowed.text).toContain('can now sync as');
  const lines = finished(from);
  expect(lines.filter((l) => String((l.req as { url: string }).url).startsWith('/login/flow/'))).toHaveLength(4);
  expect(lines.map((l) => (l.req as { url: string }).url)).toContain('/login/flow/[redacted]');
  const log = written(from);
  expect(log).not.toContain(code);
  expect(log).not.toContain(encodeURIComponent(code));
});

test('the log after an OpenID Connect callback holds neither its code nor its state', async () => {
  // The sign-in this browser started, as castsync keeps it in its cookie (the flow end to end, with a real
  // provider: test/process/oidc.test.ts).
  const state = 'the-state-castsync-chose-for-this-sign-in';
  const flow = { state, nonce: 'a-nonce', verifier: 'a-verifier', next: '/web/subscriptions' };
  const cookie = `castsync_oidc=${Buffer.from(JSON.stringify(flow)).toString('base64url')}`;
  const code = 'the-providers-authorization-code';
  const from = raw.length;
  // The provider cannot be used here: the callback fails after it has read the answer.
  const answer = await request(t.app)
    .get(
      `/web/sign-in/oidc/callback?code=${code}&state=${state}&iss=${encodeURIComponent(`http://127.0.0.1:${closed}`)}`,
    )
    .set('Cookie', cookie);
  expect(answer.status).toBe(502);
  // An answer without its sign-in, and one at a path that does not expect it, are kept out too.
  await request(t.app).get(`/web/sign-in/oidc/callback/?state=${state}&code=${code}`).expect(400);
  await request(t.app).get(`/somewhere?code=${code}`).expect(404);
  const urls = finished(from).map((l) => (l.req as { url: string }).url);
  expect(urls).toEqual([
    '/web/sign-in/oidc/callback?code=[redacted]&state=[redacted]&iss=[redacted]',
    '/web/sign-in/oidc/callback/?state=[redacted]&code=[redacted]',
    '/somewhere?code=[redacted]',
  ]);
  const log = written(from);
  expect(log).not.toContain(code);
  expect(log).not.toContain(state);
});

test('a feed URL with a token and a user and password leaves neither in the log', async () => {
  const u = await t.user();
  const feed = `http://listener:hunter2-pass@127.0.0.1:${closed}/private/feed.xml?token=tok-secret-42&format=rss`;
  const q = encodeURIComponent(feed);
  const from = raw.length;
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  await agent.get(`/web/search/preview?url=${q}`).expect(200);
  await as(t, u).get(`/api/2/episodes/${u.name}.json?podcast=${q}`).expect(200);
  await as(t, u).get(`/api/2/data/podcast.json?url=${q}`).expect(404);
  await as(t, u).get(`/v1/subscriptions?feed_url=${q}`).expect(200);
  // Sent unencoded, the feed's own query runs on into the request's.
  await as(t, u).get(`/api/2/data/podcast.json?url=${feed}`).expect(404);
  await as(t, u).get(`/v1/episodes/${q}`).expect(404);
  const urls = finished(from).map((l) => (l.req as { url: string }).url);
  expect(urls).toContain(
    `/api/2/data/podcast.json?url=http://[redacted]@127.0.0.1:${closed}/private/feed.xml?[redacted]`,
  );
  expect(urls.filter((url) => url.includes(`127.0.0.1:${closed}/private/feed.xml`))).toHaveLength(6);
  const log = written(from);
  for (const secret of ['tok-secret-42', 'hunter2', 'listener']) expect(log).not.toContain(secret);
});
