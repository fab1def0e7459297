import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { signedInAgent } from '../helpers/web';

// No write path uses a failed statement as control flow on a pooled connection: node-postgres destroys a
// pooled client whose query failed, and the next request pays a new PostgreSQL session (a fork and a
// SCRAM handshake). Counted by PostgreSQL itself (pg_stat_database.sessions of the test's database).

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

/** The pool's size in the test app (helpers/app.ts). */
const POOL_MAX = 10;

/** Sessions PostgreSQL has counted for this database (each backend counts itself after its first statement). */
async function sessions(): Promise<number> {
  const r = await t.db.query<{ n: number }>(
    'SELECT sessions::int AS n FROM pg_stat_database WHERE datname = current_database()',
  );
  return r.rows[0]!.n;
}

/**
 * Every connection the pool may hold, busy at once: after this the pool holds POOL_MAX connections, and
 * one that a request made the pool throw away is replaced here, by a new session.
 */
async function fillPool(): Promise<void> {
  await Promise.all(Array.from({ length: POOL_MAX }, () => t.db.query('SELECT pg_sleep(0.02)')));
}

const sync = (u: TestUser, requests: unknown[]) =>
  request(t.app).post('/api/v1/sync').set('Authorization', u.basic).send({ requests });
const syncAction = (action: string, at: string, data: Record<string, unknown>) => ({
  type: 'subscription',
  action,
  action_id: randomUUID(),
  occurred_at: at,
  data,
});

/** One of every write path, each twice: a feed added, removed and added again through each door. */
async function burst(u: TestUser, web: Awaited<ReturnType<typeof signedInAgent>>, round: number) {
  const api = as(t, u);
  const feed = (door: string) => `https://burst.example/${door}/${round}.xml`;
  const ok = (r: request.Response) => {
    if (r.status >= 400) throw new Error(`${r.status}: ${r.text.slice(0, 300)}`);
  };
  for (let again = 0; again < 2; again++) {
    // /v1: subscribe, remove, subscribe again (a record the person has: the optimistic insert fails).
    ok(await api.post('/v1/subscriptions', { subscriptions: [{ feed_url: feed('v1') }] }));
    const guid = (await api.get('/v1/subscriptions?per_page=500')).body.subscriptions.find(
      (s: { feed_url: string }) => s.feed_url === feed('v1'),
    ).guid as string;
    ok(await api.patch(`/v1/subscriptions/${guid}`, { is_subscribed: false }));
    ok(await api.post('/v1/subscriptions', { subscriptions: [{ feed_url: feed('v1') }] }));
    ok(
      await api.post('/v1/episodes', [
        {
          podcast_guid: guid,
          enclosure_url: `https://burst.example/v1/${round}.mp3`,
          favorite_status: { value: again === 0, timestamp: `2026-10-01T10:0${round}:0${again}Z` },
        },
      ]),
    );
    // gpodder.net v2: a push that adds, one that removes, one that adds again; episode actions.
    const push = `/api/2/subscriptions/${u.name}/phone.json`;
    ok(await api.post(push, { add: [feed('gpodder')], remove: [] }));
    ok(await api.post(push, { add: [], remove: [feed('gpodder')] }));
    ok(await api.post(push, { add: [feed('gpodder')], remove: [] }));
    ok(
      await api.post(`/api/2/episodes/${u.name}.json`, [
        { podcast: feed('gpodder'), episode: `https://burst.example/e/${round}.mp3`, action: 'download' },
      ]),
    );
    // Nextcloud gpoddersync: the same, and its episode actions.
    const nc = '/index.php/apps/gpoddersync';
    ok(await api.post(`${nc}/subscription_change/create`, { add: [feed('nc')], remove: [] }));
    ok(await api.post(`${nc}/subscription_change/create`, { add: [], remove: [feed('nc')] }));
    ok(await api.post(`${nc}/subscription_change/create`, { add: [feed('nc')], remove: [] }));
    ok(
      await api.post(`${nc}/episode_action/create`, [
        {
          podcast: feed('nc'),
          episode: `https://burst.example/nc/${round}.mp3`,
          action: 'PLAY',
          timestamp: `2026-10-01T10:0${round}:0${again}`,
          position: 10,
          started: 0,
          total: 100,
        },
      ]),
    );
    // The sync draft: subscribe, unsubscribe, subscribe again.
    const at = (s: number) => `2026-10-0${1 + again}T1${round}:00:0${s}Z`;
    const subscribed = await sync(u, [syncAction('subscribe', at(1), { feed_url: feed('sync') })]);
    ok(subscribed);
    const syncId = subscribed.body.results[0].data.sync_id as string;
    ok(await sync(u, [syncAction('unsubscribe', at(2), { sync_id: syncId })]));
    ok(await sync(u, [syncAction('subscribe', at(3), { feed_url: feed('sync') })]));
    // The web page's forms: subscribe, unsubscribe, subscribe again by URL, resubscribe.
    const form = (path: string, fields: Record<string, string> = {}) =>
      web.agent
        .post(path)
        .type('form')
        .send({ _csrf: web.csrf, ...fields });
    ok(await form('/web/subscriptions', { feed_url: feed('web') }));
    const webGuid = (await api.get('/v1/subscriptions?per_page=500')).body.subscriptions.find(
      (s: { feed_url: string }) => s.feed_url === feed('web'),
    ).guid as string;
    ok(await form(`/web/subscriptions/${webGuid}/unsubscribe`));
    ok(await form('/web/subscriptions', { feed_url: feed('web') }));
    ok(await form(`/web/subscriptions/${webGuid}/unsubscribe`));
    ok(await form(`/web/subscriptions/${webGuid}/resubscribe`));
  }
}

test('a burst of every write path opens no PostgreSQL session once the pool is warm', async () => {
  const u = await t.user('burst');
  const web = await signedInAgent(t.app, u.name, u.password);
  // Warm: every statement prepared once, credentials cached, the pool at its size.
  await burst(u, web, 1);
  await fillPool();
  const before = await sessions();
  await burst(u, web, 2);
  await fillPool();
  expect((await sessions()) - before).toBe(0);
});
