import Ajv2020 from 'ajv/dist/2020';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import pino from 'pino';
import request from 'supertest';
import type { Db } from '../../src/db/pool';
import { performDeletion } from '../../src/deletions/service';
import { changes as syncChanges } from '../../src/sync/service';
import { as, expectError, ISO_MS, testApp, type TestApp, type TestUser } from '../helpers/app';
import { sub, unsub, update } from '../helpers/sync-actions';

// The Open Podcast API's sync draft under /api/v1 (experimental): actions, last write wins, retries,
// Client-ID, paging, and the same store as /v1 and gpodder.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

type Result = { type?: string; action?: string; action_id?: string; status: string; reason?: string; data?: Sub };
type Sub = { sync_id: string; guid: string; feed_url: string; subscribed_at: string; unsubscribed_at?: string };

const CLIENT_A = 'cca4ad10-dc35-4572-8f11-125dc465428a';
const CLIENT_B = '550e8400-e29b-41d4-a716-446655440000';

async function post(u: TestUser, requests: unknown[], client?: string) {
  const req = request(t.app).post('/api/v1/sync').set('Authorization', u.basic);
  if (client) req.set('Client-ID', client);
  return req.send({ requests });
}
async function sync(u: TestUser, requests: unknown[], client?: string): Promise<Result[]> {
  const r = await post(u, requests, client);
  expect(r.status).toBe(200);
  return r.body.results as Result[];
}
async function pull(u: TestUser, query = '', client?: string) {
  const req = request(t.app).get(`/api/v1/sync${query}`).set('Authorization', u.basic);
  if (client) req.set('Client-ID', client);
  const r = await req;
  expect(r.status).toBe(200);
  return r.body as {
    results: {
      type: string;
      action: string;
      action_id: string;
      occurred_at: string;
      last_updated: string;
      data: Sub;
    }[];
    has_more: boolean;
    has_next: boolean;
    next_since: string;
    previous_since?: string;
  };
}
/** The error body of this door: /v1's `{code, message}` and the draft's `{error, description}`. */
function expectSyncError(res: request.Response, status: number, message: RegExp | string) {
  const { error, description, ...v1 } = res.body as Record<string, unknown>;
  expect({ error, description }).toEqual({ error: STATUS_CODES[status], description: v1.message });
  expectError({ ...res, body: v1 } as request.Response, status, message);
}
const one = async (u: TestUser, syncId: string) => (await as(t, u).get(`/api/v1/subscriptions/${syncId}`)).body as Sub;
const gpodderPull = async (u: TestUser, since = 0) =>
  (await as(t, u).get(`/api/2/subscriptions/${u.name}/phone.json?since=${since}`)).body as {
    add: string[];
    remove: string[];
  };

describe('subscription actions', () => {
  test('a subscribe creates the subscription with a sync_id and subscribed_at at the action time', async () => {
    const u = await t.user();
    const [r] = await sync(u, [sub('https://a.example/feed', '2026-07-11T15:30:00.1Z')]);
    expect(r).toMatchObject({ type: 'subscription', action: 'subscribe', status: 'applied' });
    expect(r!.data).toEqual({
      sync_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      guid: expect.any(String),
      feed_url: 'https://a.example/feed',
      subscribed_at: '2026-07-11T15:30:00.100Z',
    });
    expect((r as Record<string, unknown>).entity).toEqual(r!.data);
    expect(await one(u, r!.data!.sync_id)).toEqual(r!.data);
  });

  test('last write wins by occurred_at: strictly later applies, equal or earlier is ignored', async () => {
    const u = await t.user();
    const [s] = await sync(u, [sub('https://lww.example/feed', '2026-07-11T10:00:00Z')]);
    const id = s!.data!.sync_id;
    const [early] = await sync(u, [unsub(id, '2026-07-11T09:00:00Z')]);
    expect(early).toMatchObject({ status: 'ignored', data: { sync_id: id } });
    expect(early!.data!.unsubscribed_at).toBeUndefined();
    const [equal] = await sync(u, [unsub(id, '2026-07-11T10:00:00.000Z')]);
    expect(equal!.status).toBe('ignored');
    const [later] = await sync(u, [unsub(id, '2026-07-11T10:00:00.001Z')]);
    expect(later).toMatchObject({ status: 'applied', data: { unsubscribed_at: '2026-07-11T10:00:00.001Z' } });
    // A subscribe older than the unsubscribe is ignored; a later one subscribes again.
    const [stale] = await sync(u, [sub('https://lww.example/feed', '2026-07-11T10:00:00Z')]);
    expect(stale).toMatchObject({ status: 'ignored', data: { sync_id: id, unsubscribed_at: expect.any(String) } });
    const [again] = await sync(u, [sub('https://lww.example/feed', '2026-07-12T00:00:00Z')]);
    expect(again!.data).toEqual({ ...s!.data, subscribed_at: '2026-07-12T00:00:00.000Z' });
    // Subscribing to what is subscribed changes nothing.
    expect((await sync(u, [sub('https://lww.example/feed', '2026-07-13T00:00:00Z')]))[0]!.status).toBe('ignored');
  });

  test("a batch's actions apply in the order of their times, not of the array", async () => {
    const u = await t.user();
    const [s] = await sync(u, [sub('https://order.example/feed', '2026-07-11T10:00:00Z')]);
    const id = s!.data!.sync_id;
    // In array order the update (11:00) would come after the unsubscribe (12:00) and be ignored.
    const results = await sync(u, [
      unsub(id, '2026-07-11T12:00:00Z'),
      update(id, '2026-07-11T11:00:00Z', { feed_url: 'https://order.example/moved' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['applied', 'applied']);
    // Every answer shows the state once the batch is done.
    expect(results[0]!.data).toEqual(results[1]!.data);
    expect(await one(u, id)).toMatchObject({
      feed_url: 'https://order.example/moved',
      unsubscribed_at: '2026-07-11T12:00:00.000Z',
    });
  });

  test('every answer of a mixed batch shows its record once the batch is done, as a GET does', async () => {
    const u = await t.user();
    const at = (m: number) => new Date(Date.UTC(2026, 6, 11, 10, m)).toISOString();
    const feed = (x: string) => `https://mixed.example/${x}`;
    const [b, c, e] = await sync(u, [sub(feed('b'), at(0)), sub(feed('c'), at(0)), sub(feed('e'), at(0))]);
    await sync(u, [unsub(c!.data!.sync_id, at(1))]);
    const results = await sync(u, [
      sub(feed('a'), at(10)), // new: applied
      sub(feed('b'), at(11)), // subscribed: ignored, and b is unsubscribed and subscribed again later
      sub(feed('e'), at(11)), // subscribed: ignored, and e is unsubscribed later
      sub(feed('c'), at(12)), // unsubscribed earlier: subscribed again
      unsub(b!.data!.sync_id, at(13)),
      unsub(e!.data!.sync_id, at(13)),
      sub(feed('d'), at(14)),
      sub(feed('a'), at(15)), // subscribed by the first: ignored
      sub(feed('b'), at(16)), // unsubscribed at 13: subscribed again
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'applied',
      'ignored',
      'ignored',
      'applied',
      'applied',
      'applied',
      'applied',
      'ignored',
      'applied',
    ]);
    for (const r of results) expect(r.data).toEqual(await one(u, r.data!.sync_id));
    expect(results[1]!.data).toEqual({ ...b!.data, subscribed_at: at(16) });
    expect(results[2]!.data).toEqual({ ...e!.data, unsubscribed_at: at(13) });
    expect(results[0]!.data).toEqual(results[7]!.data);
  });

  test('a batch of new feeds, written in one statement, answers and keeps what the general way does', async () => {
    // The same three subscribes (out of time order) for two people: alone, they are one statement; with a
    // rejected action beside them, the batch takes the general way. Everything either door shows agrees.
    const at = (s: number) => new Date(Date.UTC(2026, 6, 11, 10, 0, s)).toISOString();
    const batch = () => [
      sub('https://one-statement.example/b', at(2)),
      sub('https://one-statement.example/a', at(1), { guid: 'E0A5B6D8-4F0D-4C57-8A58-9AF6E5D0B7C1' }),
      sub('https://one-statement.example/c', at(3)),
    ];
    const bad = { ...sub('ftp://one-statement.example/x', at(4)) };
    const [fast, general] = [await t.user(), await t.user()];
    const first = await sync(fast, batch(), CLIENT_A);
    const second = (await sync(general, [...batch(), bad], CLIENT_A)).slice(0, 3);
    const shown = (results: Result[]) =>
      results.map(({ action_id: _, data, ...r }) => ({ ...r, entity: undefined, data: { ...data, sync_id: '' } }));
    expect(shown(first)).toEqual(shown(second));
    expect(first.map((r) => r.status)).toEqual(['applied', 'applied', 'applied']);
    expect(first[1]!.data!.guid).toBe('e0a5b6d8-4f0d-4c57-8a58-9af6e5d0b7c1');
    for (const r of first) expect(r.data).toEqual(await one(fast, r.data!.sync_id));
    // The changes (each at its own stamp): none for the client itself, all three (in the order of their
    // times) for another.
    const changes = async (u: TestUser, client: string) =>
      (await pull(u, '', client)).results.map(({ action_id: _, last_updated: _at, data, ...r }) => ({
        ...r,
        data: data.feed_url,
      }));
    expect(await changes(fast, CLIENT_A)).toEqual(await changes(general, CLIENT_A));
    expect(await changes(fast, CLIENT_A)).toEqual([]);
    expect(await changes(fast, CLIENT_B)).toEqual(await changes(general, CLIENT_B));
    expect((await changes(fast, CLIENT_B)).map((c) => c.data)).toEqual(
      ['a', 'b', 'c'].map((x) => `https://one-statement.example/${x}`),
    );
    // The other doors see the same, and the action ids were kept: a retry is answered the same.
    const gpodder = async (u: TestUser) => {
      const { add, remove } = await gpodderPull(u); // without the server's time of the pull
      return { add, remove };
    };
    expect(await gpodder(fast)).toEqual(await gpodder(general));
    type Listed = { feed_url: string; guid: string; is_subscribed: boolean };
    const v1 = async (u: TestUser) =>
      ((await as(t, u).get('/v1/subscriptions')).body.subscriptions as Listed[]).map(
        ({ feed_url, guid, is_subscribed }) => ({ feed_url, guid, is_subscribed }),
      );
    expect(await v1(fast)).toHaveLength(3);
    expect(await v1(fast)).toEqual(await v1(general));
    const sent = batch().map((a, i) => ({ ...a, action_id: first[i]!.action_id }));
    expect(await sync(fast, sent, CLIENT_A)).toEqual(first);
  });

  test('a retried batch is answered the same and applied once', async () => {
    const u = await t.user();
    const batch = [
      sub('https://retry.example/a', '2026-07-11T10:00:00Z'),
      sub('https://retry.example/b', '2026-07-11T10:00:01Z'),
    ];
    const first = await sync(u, batch);
    const sinceOf = (link: string) => new URL(link).searchParams.get('since');
    const stamp = sinceOf((await pull(u)).next_since);
    const again = await sync(u, batch);
    expect(again).toEqual(first);
    expect(sinceOf((await pull(u)).next_since)).toBe(stamp); // nothing was written
    // Replayed after the subscription changed: the same status, the current state, and not applied again.
    const id = first[0]!.data!.sync_id;
    await sync(u, [unsub(id, '2026-07-11T11:00:00Z')]);
    const third = await sync(u, [batch[0]]);
    expect(third[0]).toMatchObject({ status: 'applied', action_id: batch[0]!.action_id });
    expect(third[0]!.data!.unsubscribed_at).toBe('2026-07-11T11:00:00.000Z');
    // The same action_id twice in one batch: applied once, answered the same.
    const twice = sub('https://retry.example/c', '2026-07-11T12:00:00Z');
    const [x, y] = await sync(u, [twice, twice]);
    expect(y).toEqual(x);
    expect((await as(t, u).get('/api/v1/subscriptions')).body.results).toHaveLength(2);
  });

  test('two batches at once that subscribe the same feed make one subscription', async () => {
    const u = await t.user();
    const [a, b] = await Promise.all([
      sync(u, [sub('https://race.example/feed', '2026-07-11T10:00:00Z')], CLIENT_A),
      sync(u, [sub('https://race.example/feed', '2026-07-11T10:00:01Z')], CLIENT_B),
    ]);
    expect([a[0]!.status, b[0]!.status].sort()).toEqual(['applied', 'ignored']);
    expect(a[0]!.data!.sync_id).toBe(b[0]!.data!.sync_id);
    expect((await as(t, u).get('/api/v1/subscriptions')).body.results).toHaveLength(1);
  });

  test('a subscribe whose guid names an unsubscribed one and whose URL a subscribed one is ignored', async () => {
    const u = await t.user();
    const guid = randomUUID();
    const [a, b] = await sync(u, [
      sub('https://both.example/a', '2026-07-11T10:00:00Z', { guid }),
      sub('https://both.example/b', '2026-07-11T10:00:00Z'),
    ]);
    await sync(u, [unsub(a!.data!.sync_id, '2026-07-11T11:00:00Z')]);
    const [r] = await sync(u, [sub('https://both.example/b', '2026-07-11T12:00:00Z', { guid })]);
    expect(r).toMatchObject({ status: 'ignored', data: { sync_id: b!.data!.sync_id } });
    expect((await one(u, a!.data!.sync_id)).unsubscribed_at).toBe('2026-07-11T11:00:00.000Z');
  });

  test('an update changes the guid and feed URL, never into another subscription', async () => {
    const u = await t.user();
    const [a, b] = await sync(u, [
      sub('https://upd.example/a', '2026-07-11T10:00:00Z'),
      sub('https://upd.example/b', '2026-07-11T10:00:00Z'),
    ]);
    const id = a!.data!.sync_id;
    const taken = await sync(u, [
      update(id, '2026-07-11T11:00:00Z', { guid: b!.data!.guid }),
      update(id, '2026-07-11T11:00:01Z', { feed_url: 'https://upd.example/b' }),
    ]);
    expect(taken.map((r) => [r.status, r.reason])).toEqual([
      ['rejected', 'Another subscription has this guid'],
      ['rejected', 'Another subscription has this feed_url'],
    ]);
    const guid = randomUUID();
    const [ok] = await sync(u, [update(id, '2026-07-11T12:00:00Z', { guid, feed_url: 'https://upd.example/a2' })]);
    expect(ok).toMatchObject({ status: 'applied', data: { sync_id: id, guid, feed_url: 'https://upd.example/a2' } });
    // Both are still there, each as it was.
    const list = (await as(t, u).get('/v1/subscriptions')).body.subscriptions as { feed_url: string }[];
    expect(list.map((x) => x.feed_url).sort()).toEqual(['https://upd.example/a2', 'https://upd.example/b']);
  });
});

describe('bad input', () => {
  test('each bad action is rejected with a reason and the rest applied', async () => {
    const u = await t.user();
    const good = sub('https://good.example/feed', '2026-07-11T10:00:00Z');
    const cases: [unknown, RegExp][] = [
      [{ ...good, action_id: randomUUID(), type: 'podcast' }, /^Unknown type: podcast/],
      [{ ...good, action_id: randomUUID(), action: 'follow' }, /^Unknown action for type subscription: follow/],
      [{ ...good, action_id: 'not-a-uuid' }, /^Invalid action_id: not a UUID/],
      [{ ...good, action_id: randomUUID(), occurred_at: 'yesterday' }, /^Invalid occurred_at/],
      [{ ...good, action_id: randomUUID(), occurred_at: '2026-07-11T10:00:00' }, /^Invalid occurred_at/],
      [{ ...good, action_id: randomUUID(), data: {} }, /^Missing data.feed_url/],
      [
        { ...good, action_id: randomUUID(), data: { feed_url: 'ftp://x.example/' } },
        /^Invalid data.feed_url: Unsupported protocol/,
      ],
      [
        { ...good, action_id: randomUUID(), data: { feed_url: 'https://x.example/\u0000' } },
        /^Invalid data.feed_url: contains U\+0000/,
      ],
      [
        { ...good, action_id: randomUUID(), data: { feed_url: 'https://x.example/\uD800' } },
        /^Invalid data.feed_url: .*lone surrogate/,
      ],
      [
        { ...good, action_id: randomUUID(), data: { feed_url: 'https://x.example/', guid: 'nope' } },
        /^Invalid data.guid/,
      ],
      [unsub('not-a-uuid', '2026-07-11T10:00:00Z'), /^Invalid data.sync_id: not a UUID/],
      [update(randomUUID(), '2026-07-11T10:00:00Z', {}), /^Missing data.guid or data.feed_url/],
      [{ type: 'subscription' }, /^Missing action/],
      ['a string', /must be an object/],
    ];
    const results = await sync(u, [...cases.map(([a]) => a), good]);
    cases.forEach(([, reason], i) => {
      expect(results[i]).toMatchObject({ status: 'rejected', reason: expect.stringMatching(reason) });
    });
    expect(results[2]!.action_id).toBe('not-a-uuid');
    expect(results.at(-1)).toMatchObject({ status: 'applied', action_id: good.action_id });
    expect((await as(t, u).get('/api/v1/subscriptions')).body.results).toHaveLength(1);
  });

  test('more than 30 actions: 400 and nothing applied; a body without requests: 400', async () => {
    const u = await t.user();
    const many = Array.from({ length: 31 }, (_, i) => sub(`https://many.example/${i}`, '2026-07-11T10:00:00Z'));
    expectSyncError(await post(u, many), 400, 'At most 30 actions in one request');
    expect((await as(t, u).get('/api/v1/subscriptions')).body.results).toEqual([]);
    expect((await post(u, many.slice(0, 30))).status).toBe(200);
    const r = await request(t.app).post('/api/v1/sync').set('Authorization', u.basic).send({ actions: [] });
    expectSyncError(r, 400, /^Invalid body/);
    const notJson = await request(t.app)
      .post('/api/v1/sync')
      .set('Authorization', u.basic)
      .set('Content-Type', 'application/json')
      .send('{"requests": [');
    expect(notJson.status).toBe(400);
  });

  test("another user's sync_id is not found, by an action and by GET", async () => {
    const owner = await t.user();
    const other = await t.user();
    const [s] = await sync(owner, [sub('https://mine.example/feed', '2026-07-11T10:00:00Z')]);
    const id = s!.data!.sync_id;
    const results = await sync(other, [
      unsub(id, '2026-07-12T00:00:00Z'),
      update(id, '2026-07-12T00:00:00Z', { feed_url: 'https://x.example/' }),
    ]);
    expect(results.map((r) => [r.status, r.reason, r.data])).toEqual([
      ['rejected', 'Entity not found', undefined],
      ['rejected', 'Entity not found', undefined],
    ]);
    expectSyncError(await as(t, other).get(`/api/v1/subscriptions/${id}`), 404, 'Resource not found');
    expectSyncError(await as(t, other).get(`/api/v1/subscriptions/nope`), 400, /^Invalid sync_id/);
    expect((await one(owner, id)).unsubscribed_at).toBeUndefined();
  });

  test('bad query parameters and Client-ID are 400; no credentials 401; a bearer token works', async () => {
    const u = await t.user();
    for (const q of ['?since=yesterday', '?limit=0', '?limit=x', '?include=podcasts', '?include_own=maybe']) {
      expect((await as(t, u).get(`/api/v1/sync${q}`)).status).toBe(400);
    }
    const bad = await request(t.app).get('/api/v1/sync').set('Authorization', u.basic).set('Client-ID', 'me');
    expectSyncError(bad, 400, 'Invalid Client-ID: a UUID');
    expectSyncError(await request(t.app).get('/api/v1/sync'), 401, 'User not authorized');
    const login = await request(t.app).post('/v1/auth/login').send({ username: u.name, password: u.password });
    const r = await request(t.app)
      .get('/api/v1/subscriptions')
      .set('Authorization', `Bearer ${login.body.access_token}`);
    expect(r.status).toBe(200);
  });
});

describe('GET /api/v1/sync', () => {
  test("each result is also the draft schema's ActionObject: create on a first sync, then update or delete", async () => {
    const u = await t.user();
    const [a] = await sync(u, [sub('https://shape.example/a', '2026-07-11T10:00:00.5Z')]);
    await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://shape.example/b' }] });
    const first = await pull(u);
    expect(first.results.map((r) => [r.data.feed_url, r.action])).toEqual([
      ['https://shape.example/a', 'create'],
      ['https://shape.example/b', 'create'],
    ]);
    const [x, y] = first.results;
    // The app's time of the action; for a change through /v1, the server's (the same as last_updated).
    expect(x).toMatchObject({ type: 'subscription', occurred_at: '2026-07-11T10:00:00.500Z' });
    expect(y!.occurred_at).toBe(y!.last_updated);
    expect(x!.action_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(x!.action_id).not.toBe(y!.action_id);
    // Read again, a change keeps its id.
    expect((await pull(u)).results.map((r) => r.action_id)).toEqual([x!.action_id, y!.action_id]);
    // Later: an unsubscribe is an update (with a new id), a record deleted through /v1 a delete.
    const since = `?since=${encodeURIComponent(first.results[1]!.last_updated)}`;
    await sync(u, [unsub(a!.data!.sync_id, '2026-07-12T00:00:00Z')]);
    // The deletion's job, run here (the app queues it for the worker).
    const deletion = await as(t, u).del(`/v1/subscriptions/${y!.data.guid}`);
    await performDeletion(t.db, pino({ level: 'silent' }), deletion.body.deletion_id);
    const later = (await pull(u, since)).results;
    expect(later.map((r) => [r.data.feed_url, r.action])).toEqual([
      ['https://shape.example/a', 'update'],
      ['https://shape.example/b', 'delete'],
    ]);
    expect(later[0]).toMatchObject({
      occurred_at: '2026-07-12T00:00:00.000Z',
      data: { unsubscribed_at: expect.any(String) },
    });
    expect(later[0]!.action_id).not.toBe(x!.action_id);
  });

  test("leaves out the client's own changes unless include_own, and shows them to other clients", async () => {
    const u = await t.user();
    await sync(u, [sub('https://own.example/a', '2026-07-11T10:00:00Z')], CLIENT_A);
    await sync(u, [sub('https://own.example/b', '2026-07-11T10:00:00Z')], CLIENT_B);
    const urls = (p: Awaited<ReturnType<typeof pull>>) => p.results.map((r) => r.data.feed_url);
    expect(urls(await pull(u, '', CLIENT_A))).toEqual(['https://own.example/b']);
    expect(urls(await pull(u, '?include_own=true', CLIENT_A))).toEqual([
      'https://own.example/a',
      'https://own.example/b',
    ]);
    expect(urls(await pull(u, '', CLIENT_B))).toEqual(['https://own.example/a']);
    expect(urls(await pull(u))).toEqual(['https://own.example/a', 'https://own.example/b']);
    // Once another client changes it, it is no longer A's own change.
    const id = (await pull(u)).results[0]!.data.sync_id;
    await sync(u, [unsub(id, '2026-07-12T00:00:00Z')], CLIENT_B);
    expect(urls(await pull(u, '', CLIENT_A))).toEqual(['https://own.example/b', 'https://own.example/a']);
  });

  test('pages by next_since without splitting changes of one stamp, with has_more and has_next', async () => {
    const u = await t.user();
    // Five feeds in one gpodder upload share one change stamp; two more come one by one.
    const five = Array.from({ length: 5 }, (_, i) => `https://tie.example/${i}`);
    await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, { add: five, remove: [] });
    await sync(u, [sub('https://tie.example/x', '2026-07-11T10:00:00Z')]);
    await sync(u, [sub('https://tie.example/y', '2026-07-11T10:00:00Z')]);
    const first = await pull(u, '?limit=3');
    // The limit would split the five: they come whole.
    expect(first.results).toHaveLength(5);
    expect(new Set(first.results.map((r) => r.last_updated)).size).toBe(1);
    expect(first.results[0]!.last_updated).toMatch(ISO_MS);
    expect(first).toMatchObject({ has_more: true, has_next: true });
    expect(first.previous_since).toBeUndefined();
    const next = new URL(first.next_since);
    expect(next.pathname).toBe('/api/v1/sync');
    expect(next.searchParams.get('limit')).toBe('3');
    const second = await pull(u, next.search);
    expect(second.results.map((r) => r.data.feed_url)).toEqual(['https://tie.example/x', 'https://tie.example/y']);
    expect(second).toMatchObject({ has_more: false, has_next: false });
    // previous_since leads to a page that ends where this one starts (here: from the first change).
    expect(new URL(second.previous_since!).searchParams.get('since')).toBeNull();
    // With nothing left, next_since is where to ask later, and that answers nothing until a change.
    const later = await pull(u, new URL(second.next_since).search);
    expect(later.results).toEqual([]);
    await sync(u, [sub('https://tie.example/z', '2026-07-11T10:00:00Z')]);
    expect((await pull(u, new URL(second.next_since).search)).results).toHaveLength(1);
  });

  test('a page ends before a stamp the limit would split, and previous_since pages back', async () => {
    const u = await t.user();
    await sync(u, [sub('https://split.example/a', '2026-07-11T10:00:00Z')]);
    await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, {
      add: ['https://split.example/b', 'https://split.example/c'],
      remove: [],
    });
    await sync(u, [sub('https://split.example/d', '2026-07-11T10:00:00Z')]);
    const first = await pull(u, '?limit=2');
    expect(first.results.map((r) => r.data.feed_url)).toEqual(['https://split.example/a']);
    const second = await pull(u, new URL(first.next_since).search);
    expect(second.results.map((r) => r.data.feed_url)).toEqual(['https://split.example/b', 'https://split.example/c']);
    const back = await pull(u, new URL(second.previous_since!).search);
    expect(back.results[0]!.data.feed_url).toBe('https://split.example/a');
  });

  test('include names the types, singular or plural; episodes alone give no subscriptions', async () => {
    const u = await t.user();
    await sync(u, [sub('https://inc.example/a', '2026-07-11T10:00:00Z')]);
    for (const q of [
      '?include=subscriptions',
      '?include=subscription',
      '?include=all',
      '?include=episodes,subscriptions',
    ]) {
      expect((await pull(u, q)).results).toHaveLength(1);
    }
    expect((await pull(u, '?include=episodes')).results).toEqual([]);
  });

  // A write that commits while a read of changes is under way, between two of its statements: the write is
  // made through the API when the read comes to the statement named `statement`, and the read goes on after.
  const between = (statement: string, write: () => Promise<unknown>): Db => {
    let written: Promise<unknown> | undefined;
    const hooked = <T extends object>(target: T): T =>
      new Proxy(target, {
        get(o, key) {
          if (key === 'connect') return async () => hooked(await (o as Db).connect());
          const value: unknown = Reflect.get(o, key, o);
          if (typeof value !== 'function') return value;
          if (key !== 'query') return value.bind(o);
          return async (...args: unknown[]) => {
            if ((args[0] as { name?: string } | undefined)?.name === statement) await (written ??= write());
            return value.apply(o, args);
          };
        },
      });
    return hooked(t.db);
  };
  const everything = { limit: 50, include: { subscriptions: true, episodes: true } };

  test('a subscribe and a play that commit while a page is read are both read from its next_since', async () => {
    const u = await t.user();
    await sync(u, [sub('https://mid-read.example/a', '2026-07-11T10:00:00Z')]);
    const batch = () =>
      sync(u, [
        sub('https://mid-read.example/b', '2026-07-11T11:00:00Z'),
        {
          type: 'episode',
          action: 'position',
          action_id: randomUUID(),
          occurred_at: '2026-07-11T11:00:01Z',
          data: {
            podcast_url: 'https://mid-read.example/b',
            enclosure_url: 'https://mid-read.example/1.mp3',
            position: 5,
          },
        },
      ]);
    const page = await syncChanges(between('sync-episodes-changed-after', batch), u.id, everything);
    const next = await syncChanges(t.db, u.id, { ...everything, since: page.nextSince });
    const read = [...page.changes, ...next.changes].map((e) =>
      e.type === 'subscription' ? e.subscription.feedUrl : e.episode.enclosureUrl,
    );
    expect(new Set(read)).toEqual(
      new Set(['https://mid-read.example/a', 'https://mid-read.example/b', 'https://mid-read.example/1.mp3']),
    );
  });

  test('a stamp whose changes all change again while its page is read still gives a next_since', async () => {
    const u = await t.user();
    await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, {
      add: ['https://moved-on.example/a', 'https://moved-on.example/b'],
      remove: [],
    });
    const removeBoth = () =>
      as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, {
        add: [],
        remove: ['https://moved-on.example/a', 'https://moved-on.example/b'],
      });
    const page = await syncChanges(between('sync-episodes-changed-after', removeBoth), u.id, {
      ...everything,
      limit: 1,
    });
    expect(page.nextSince).toBeInstanceOf(Date);
    const rest = await syncChanges(t.db, u.id, { ...everything, since: page.nextSince });
    const read = [...page.changes, ...rest.changes].flatMap((e) => (e.type === 'subscription' ? [e.subscription] : []));
    expect(
      read
        .filter((s) => s.unsubscribedAt)
        .map((s) => s.feedUrl)
        .sort(),
    ).toEqual(['https://moved-on.example/a', 'https://moved-on.example/b']);
  });
});

describe('one store, every door', () => {
  test('a feed subscribed through gpodder or /v1 appears in GET /api/v1/sync with a sync_id', async () => {
    const u = await t.user();
    await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, { add: ['https://door.example/gp'], remove: [] });
    await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://door.example/v1' }] });
    const page = await pull(u);
    expect(page.results.map((r) => r.data.feed_url)).toEqual(['https://door.example/gp', 'https://door.example/v1']);
    for (const r of page.results) {
      expect(r.data.sync_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.data.subscribed_at).toBe(r.last_updated); // the server's time, for a change through another door
    }
    // A gpodder removal shows as unsubscribed, after the sync's own subscribe.
    await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, { add: [], remove: ['https://door.example/gp'] });
    const after = await pull(u, new URL(page.next_since).search);
    expect(after.results.map((r) => [r.data.feed_url, typeof r.data.unsubscribed_at])).toEqual([
      ['https://door.example/gp', 'string'],
    ]);
  });

  test("an unsubscribe through /api/v1/sync reaches a gpodder device's next pull as a removal, and /v1", async () => {
    const u = await t.user();
    await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, { add: ['https://door.example/a'], remove: [] });
    const before = await gpodderPull(u);
    expect(before.add).toEqual(['https://door.example/a']);
    const id = (await pull(u)).results[0]!.data.sync_id;
    const [r] = await sync(u, [unsub(id, new Date(Date.now() + 1000).toISOString())]);
    expect(r!.status).toBe('applied');
    const since = (before as unknown as { timestamp: number }).timestamp;
    expect(await gpodderPull(u, since)).toMatchObject({ add: [], remove: ['https://door.example/a'] });
    const v1 = (await as(t, u).get('/v1/subscriptions')).body.subscriptions;
    expect(v1).toEqual([expect.objectContaining({ feed_url: 'https://door.example/a', is_subscribed: false })]);
  });

  test('a /v1 PATCH that unsubscribes shows in GET /api/v1/sync', async () => {
    const u = await t.user();
    const [s] = await sync(u, [sub('https://door.example/patch', '2026-07-11T10:00:00Z')]);
    const first = await pull(u);
    await as(t, u).patch(`/v1/subscriptions/${s!.data!.guid}`, { is_subscribed: false });
    const after = await pull(u, new URL(first.next_since).search);
    expect(after.results.map((r) => r.data.sync_id)).toEqual([s!.data!.sync_id]);
    expect(after.results[0]!.data.unsubscribed_at).toBe(after.results[0]!.last_updated);
    expect(after.results[0]!.data.subscribed_at).toBe('2026-07-11T10:00:00.000Z');
  });

  test('a change through another door after a sync action wins over an older action time', async () => {
    const u = await t.user();
    const [s] = await sync(u, [sub('https://door.example/b', '2030-01-01T00:00:00Z')]);
    await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, { add: [], remove: ['https://door.example/b'] });
    // The gpodder removal counts at the server's time: an action between it and the app's future clock is later.
    const shown = await one(u, s!.data!.sync_id);
    expect(shown.unsubscribed_at).toMatch(ISO_MS);
    const [again] = await sync(u, [sub('https://door.example/b', new Date(Date.now() + 1000).toISOString())]);
    expect(again!.status).toBe('applied');
  });
});

describe('GET /api/v1/subscriptions', () => {
  test('subscribed ones by default, unsubscribed too on request, paged with a cursor', async () => {
    const u = await t.user();
    const results = await sync(u, [
      sub('https://list.example/a', '2026-07-11T10:00:00Z'),
      sub('https://list.example/b', '2026-07-11T10:00:01Z'),
      sub('https://list.example/c', '2026-07-11T10:00:02Z'),
    ]);
    await sync(u, [unsub(results[1]!.data!.sync_id, '2026-07-12T00:00:00Z')]);
    const list = (await as(t, u).get('/api/v1/subscriptions')).body;
    expect(list.results.map((x: Sub) => x.feed_url)).toEqual(['https://list.example/a', 'https://list.example/c']);
    expect(list).toMatchObject({ has_more: false, has_next: false });
    const page1 = (await as(t, u).get('/api/v1/subscriptions?include_unsubscribed=true&limit=2')).body;
    expect(page1.results).toHaveLength(2);
    expect(page1.has_next).toBe(true);
    const page2 = (await as(t, u).get(new URL(page1.next_since).pathname + new URL(page1.next_since).search)).body;
    expect(page2.results.map((x: Sub) => x.feed_url)).toEqual(['https://list.example/c']);
    expect(page1.results[1].unsubscribed_at).toBe('2026-07-12T00:00:00.000Z');
  });
});

describe('episode actions', () => {
  const podcast = 'https://ep.example/feed';
  const episode = (action: string, at: string, data: Record<string, unknown> = {}) => ({
    type: 'episode',
    action,
    action_id: randomUUID(),
    occurred_at: at,
    data: { podcast_url: podcast, enclosure_url: 'https://ep.example/1.mp3', ...data },
  });
  const gpodderActions = async (u: TestUser) =>
    (await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions as Record<string, unknown>[];

  test('a position here is a gpodder play there, and a gpodder play makes an older position stale', async () => {
    const u = await t.user();
    await sync(u, [sub(podcast, '2026-07-11T09:00:00Z')]);
    const [p] = await sync(u, [episode('position', '2026-07-11T10:00:00Z', { position: 120 })]);
    expect(p).toMatchObject({
      type: 'episode',
      status: 'applied',
      data: { enclosure_url: 'https://ep.example/1.mp3' },
    });
    expect(await gpodderActions(u)).toEqual([
      expect.objectContaining({ action: 'play', position: 120, episode: 'https://ep.example/1.mp3' }),
    ]);
    await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
      { podcast, episode: 'https://ep.example/1.mp3', action: 'play', position: 300, timestamp: '2026-07-11T11:00:00' },
    ]);
    const [stale] = await sync(u, [episode('position', '2026-07-11T10:30:00Z', { position: 200 })]);
    expect(stale!.status).toBe('ignored');
    const [later] = await sync(u, [episode('position', '2026-07-11T11:00:01Z', { position: 400 })]);
    expect(later!.status).toBe('applied');
    const v1 = (await as(t, u).get('/v1/episodes')).body.episodes[0];
    expect(v1.playback_position).toEqual({ value: 400, timestamp: '2026-07-11T11:00:01.000Z' });
  });

  test("played is a gpodder play to the length an app's play said, when the feed gives none", async () => {
    const u = await t.user();
    await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
      {
        podcast,
        episode: 'https://ep.example/1.mp3',
        action: 'play',
        timestamp: '2026-07-11T10:00:00',
        started: 0,
        position: 600,
        total: 1800,
        device: 'antennapod',
      },
    ]);
    const [played] = await sync(u, [episode('played', '2026-07-11T11:00:00Z')]);
    expect(played!.status).toBe('applied');
    expect((await gpodderActions(u)).at(-1)).toMatchObject({ started: 1800, position: 1800, total: 1800 });
    const [position] = await sync(u, [episode('position', '2026-07-11T12:00:00Z', { position: 700 })]);
    expect(position!.status).toBe('applied');
    expect((await gpodderActions(u)).at(-1)).toMatchObject({ started: 700, position: 700, total: 1800 });
  });

  test('played and unplayed show in /v1/episodes; create of a known episode is ignored', async () => {
    const u = await t.user();
    await sync(u, [sub(podcast, '2026-07-11T09:00:00Z')]);
    const [created, again] = await sync(u, [
      episode('create', '2026-07-11T10:00:00Z'),
      episode('create', '2026-07-11T10:00:01Z'),
    ]);
    expect([created!.status, again!.status]).toEqual(['applied', 'ignored']);
    await sync(u, [episode('played', '2026-07-11T11:00:00Z')]);
    expect((await as(t, u).get('/v1/episodes')).body.episodes[0].played_status).toEqual({
      value: true,
      timestamp: '2026-07-11T11:00:00.000Z',
    });
    const [unplayed] = await sync(u, [
      episode('unplayed', '2026-07-11T12:00:00Z', { sync_id: created!.data!.sync_id }),
    ]);
    expect(unplayed!.status).toBe('applied');
    expect((await as(t, u).get('/v1/episodes')).body.episodes[0].played_status.value).toBe(false);
    const [bad] = await sync(u, [episode('position', '2026-07-11T13:00:00Z', { position: -1 })]);
    expect(bad).toMatchObject({ status: 'rejected', reason: expect.stringMatching(/^Invalid data.position/) });
    // A time outside years 1 to 9999 (what the store holds): this action is rejected, the batch goes on.
    const [year0, fine] = await sync(u, [
      episode('position', '0000-07-11T13:00:00Z', { position: 41 }),
      episode('position', '2026-07-11T13:00:01Z', { position: 42 }),
    ]);
    expect(year0).toMatchObject({ status: 'rejected', reason: expect.stringMatching(/^Invalid occurred_at/) });
    expect(fine!.status).toBe('applied');
  });

  test('an episode the rules refuse is rejected with a reason that names the field as this draft has it, under data', async () => {
    const u = await t.user();
    const unknown = { podcast_url: undefined, enclosure_url: 'https://ep.example/unknown.mp3' };
    const results = await sync(u, [
      episode('played', '2026-07-11T10:00:00Z', unknown),
      episode('played', '2026-07-11T10:00:00Z', { ...unknown, podcast_guid: randomUUID() }),
      episode('favourite', '2026-07-11T10:00:00Z', unknown),
    ]);
    expect(results.map((r) => [r.status, r.reason])).toEqual([
      ['rejected', 'data.podcast_guid: required'],
      ['rejected', 'Unknown data.podcast_guid: no subscription of this user has it'],
      ['rejected', 'data.podcast_guid: required'],
    ]);
  });

  test("GET /api/v1/sync lists episodes changed through any door, in stamp order, but the client's own", async () => {
    const u = await t.user();
    await sync(u, [sub(podcast, '2026-07-11T09:00:00Z')]);
    const start = new URL((await pull(u)).next_since).search;
    await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
      {
        podcast,
        episode: 'https://ep.example/gp.mp3',
        action: 'play',
        position: 30,
        total: 60,
        timestamp: '2026-07-11T11:00:00',
      },
    ]);
    await sync(u, [sub('https://ep.example/other', '2026-07-11T09:00:00Z')]);
    const [own] = await sync(u, [episode('position', '2026-07-11T12:00:00Z', { position: 50 })], CLIENT_A);
    const page = await pull(u, start);
    expect(
      page.results.map((r) => [
        r.type,
        (r.data as unknown as Record<string, unknown>).enclosure_url ?? r.data.feed_url,
      ]),
    ).toEqual([
      ['episode', 'https://ep.example/gp.mp3'],
      ['subscription', 'https://ep.example/other'],
      ['episode', 'https://ep.example/1.mp3'],
    ]);
    expect(page.results[0]!.data).toEqual({
      sync_id: expect.any(String),
      podcast_guid: expect.any(String),
      podcast_url: podcast,
      enclosure_url: 'https://ep.example/gp.mp3',
      playback_position: { value: 30, timestamp: '2026-07-11T11:00:00.000Z' },
      played_status: { value: false, timestamp: '2026-07-11T11:00:00.000Z' },
    });
    expect(page.results[2]!.data).toEqual(own!.data);
    // Client A's own position is left out of its own pull; B sees it; include=subscriptions leaves episodes out.
    const types = (p: Awaited<ReturnType<typeof pull>>) => p.results.map((r) => r.type);
    expect(types(await pull(u, start, CLIENT_A))).toEqual(['episode', 'subscription']);
    expect(types(await pull(u, start, CLIENT_B))).toEqual(['episode', 'subscription', 'episode']);
    expect(types(await pull(u, `${start}&include=subscriptions`))).toEqual(['subscription']);
    expect(types(await pull(u, `${start}&include=episodes`))).toEqual(['episode', 'episode']);
    // An empty name in the list is left out; naming none at all means all.
    expect(types(await pull(u, `${start}&include=subscriptions,`))).toEqual(['subscription']);
    expect(types(await pull(u, `${start}&include=,episodes`))).toEqual(['episode', 'episode']);
    expect(types(await pull(u, `${start}&include=,`))).toEqual(['episode', 'subscription', 'episode']);
  });

  test('episodes of one gpodder upload share a stamp: a page holds them whole', async () => {
    const u = await t.user();
    const plays = [1, 2, 3, 4].map((k) => ({
      podcast,
      episode: `https://ep.example/tie/${k}.mp3`,
      action: 'play',
      position: k,
      timestamp: '2026-07-11T11:00:00',
    }));
    await as(t, u).post(`/api/2/episodes/${u.name}.json`, plays);
    await sync(u, [sub('https://ep.example/after', '2026-07-11T09:00:00Z')]);
    const first = await pull(u, '?limit=2');
    expect(first.results.map((r) => r.type)).toEqual(['episode', 'episode', 'episode', 'episode']);
    expect(first.has_more).toBe(true);
    const second = await pull(u, new URL(first.next_since).search);
    expect(second.results.map((r) => r.data.feed_url)).toEqual(['https://ep.example/after']);
    expect(new URL(second.previous_since!).searchParams.get('since')).toBeNull();
  });

  test('a retried episode action is answered the same and stored once', async () => {
    const u = await t.user();
    const batch = [episode('position', '2026-07-11T10:00:00Z', { position: 42 })];
    const first = await sync(u, batch);
    expect(first[0]!.status).toBe('applied');
    expect(await sync(u, batch)).toEqual(first);
    expect(await gpodderActions(u)).toHaveLength(1);
  });

  test('a favourite is kept with its time: /v1/episodes and gpodder.net serve it; an older one is ignored', async () => {
    const u = await t.user();
    const [set] = await sync(u, [episode('favourite', '2026-07-11T10:00:00Z', { favourite: true })]);
    expect(set).toMatchObject({ type: 'episode', action: 'favourite', status: 'applied' });
    const [older] = await sync(u, [episode('favourite', '2026-07-11T09:00:00Z', { favourite: false })]);
    expect(older).toMatchObject({ action: 'favourite', status: 'ignored' });
    const records = (await as(t, u).get('/v1/episodes')).body.episodes as Record<string, unknown>[];
    expect(records).toEqual([
      expect.objectContaining({
        enclosure_url: 'https://ep.example/1.mp3',
        favorite_status: { value: true, timestamp: '2026-07-11T10:00:00.000Z' },
      }),
    ]);
    const favorites = (await as(t, u).get(`/api/2/favorites/${u.name}.json`)).body as { url: string }[];
    expect(favorites.map((f) => f.url)).toEqual(['https://ep.example/1.mp3']);
    // A favourite alone is an episode change of the pull, with the favourite; the client's own is left out.
    const [own] = await sync(u, [episode('favourite', '2026-07-11T10:30:00Z', { favourite: true })], CLIENT_A);
    expect(own).toMatchObject({ status: 'applied', entity: { favorite_status: { value: true } } });
    const pulled = await pull(u, '?include=episodes');
    expect(pulled.results.map((r) => r.data)).toEqual([
      expect.objectContaining({
        enclosure_url: 'https://ep.example/1.mp3',
        favorite_status: { value: true, timestamp: '2026-07-11T10:30:00.000Z' },
      }),
    ]);
    expect((await pull(u, '?include=episodes', CLIENT_A)).results).toEqual([]);
    const [cleared] = await sync(u, [episode('favourite', '2026-07-11T11:00:00Z', { favourite: false })]);
    expect(cleared).toMatchObject({ status: 'applied' });
    expect((await as(t, u).get(`/api/2/favorites/${u.name}.json`)).body).toEqual([]);
  });
});

/** The OpenAPI document's schema `name`, compiled with the document's other schemas for its references. */
async function schemaOf(name: string) {
  const doc = (await request(t.app).get('/openapi.json')).body as { components: { schemas: object } };
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: 'castsync', components: doc.components });
  return ajv.getSchema(`castsync#/components/schemas/${name}`)!;
}

describe('discovery', () => {
  test('the answers validate against the documented schemas', async () => {
    const u = await t.user();
    const posted = await post(u, [
      sub('https://schema.example/feed', '2026-07-11T10:00:00Z'),
      {
        type: 'episode',
        action: 'position',
        action_id: randomUUID(),
        occurred_at: '2026-07-11T10:00:00Z',
        data: {
          podcast_url: 'https://schema.example/feed',
          enclosure_url: 'https://schema.example/1.mp3',
          position: 3,
        },
      },
      { type: 'nope' },
    ]);
    const checks: [string, unknown][] = [
      ['SyncResponse', posted.body],
      ['SyncPage', await pull(u, '?since=2020-01-01T00:00:00Z')],
      ['SyncSubscriptionPage', (await as(t, u).get('/api/v1/subscriptions?include_unsubscribed=true')).body],
      ['SyncSubscription', await one(u, posted.body.results[0].data.sync_id)],
    ];
    for (const [name, body] of checks) {
      const validate = await schemaOf(name);
      expect([name, validate(body), validate.errors ?? null]).toEqual([name, true, null]);
    }
    // …and the schemas are not ones that take anything.
    expect((await schemaOf('SyncPage'))({ results: [] })).toBe(false);
  });

  test('capabilities advertise the sync draft as unstable, and the document has the endpoints', async () => {
    const caps = (await request(t.app).get('/v1/capabilities')).body.capabilities;
    expect(caps['urn:opa:sync']).toEqual({ '0.0.0-draft': { status: 'UNSTABLE', root: '/api/v1' } });
    expect(caps['urn:opa:core']).toEqual({ '0.1.0': { status: 'STABLE', root: '/v1' } });
    const doc = (await request(t.app).get('/openapi.json')).body;
    expect(Object.keys(doc.paths['/api/v1/sync']).sort()).toEqual(['get', 'post']);
    expect(doc.paths['/api/v1/sync'].post.description).toMatch(/Experimental/);
    expect(doc.paths['/api/v1/subscriptions/{sync_id}'].get).toBeDefined();
  });
});
