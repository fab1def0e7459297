import { freshDatabase } from '../helpers/db';
import { basicAuth, call, cli, deletionOutcome, startServer, stopServer, type ServerProcess } from '../helpers/process';

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
