import pino from 'pino';
import request from 'supertest';
import { deletionTasks } from '../../src/deletions/service';
import { startWorker, type Worker } from '../../src/jobs/worker';
import { ISO_MS, as, expectError, sleep, testApp, type TestApp } from '../helpers/app';

let t: TestApp;
let worker: Worker;
beforeAll(async () => {
  t = await testApp();
  const logger = pino({ level: 'silent' });
  worker = await startWorker({ db: t.db, databaseUrl: t.url, logger }, [deletionTasks(t.db, logger)], {
    pollInterval: 100,
  });
});
afterAll(async () => {
  await worker.stop();
  await t.close();
});

type Client = ReturnType<typeof as>;
let n = 0;
const feed = (tag = 'r') => `https://resource.example.org/${tag}-${++n}.xml`;
const client = async () => as(t, await t.user('res'));
async function subscribe(c: Client, feed_url: string, guid?: string): Promise<string> {
  const r = await c.post('/v1/subscriptions', { subscriptions: [{ feed_url, ...(guid && { guid }) }] });
  expect(r.body.success).toHaveLength(1);
  return r.body.success[0].guid;
}
const mark = async (c: Client) => {
  const stamp = (await c.get('/v1/subscriptions?per_page=1')).headers['sync-timestamp'] as string;
  await sleep(3);
  return stamp;
};
async function waitForDeletion(c: Client, id: number) {
  for (let i = 0; i < 200; i++) {
    const r = await c.get(`/v1/deletions/${id}`);
    if (r.body.status !== 'PENDING') return r;
    await sleep(50);
  }
  throw new Error('deletion still pending');
}
const G1 = '10000000-0000-4000-8000-000000000001';
const G2 = '20000000-0000-4000-8000-000000000002';
const G3 = '30000000-0000-4000-8000-000000000003';

describe('GET /v1/subscriptions/{guid}', () => {
  test('returns the record; a guid in upper case resolves too', async () => {
    const c = await client();
    const u = feed();
    const g = await subscribe(c, u);
    const r = await c.get(`/v1/subscriptions/${g.toUpperCase()}`);
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.body).toEqual({
      feed_url: u,
      guid: g,
      is_subscribed: true,
      subscription_changed: expect.stringMatching(ISO_MS),
    });
  });

  test('unknown: 404; not a UUID: 405', async () => {
    const c = await client();
    expectError(await c.get('/v1/subscriptions/00000000-0000-4000-8000-000000000000'), 404, 'Resource not found');
    expectError(await c.get('/v1/subscriptions/not-a-uuid'), 405, /^Input could not be validated/);
  });

  test("another user's guid is 404, never 403", async () => {
    const a = await client();
    const g = await subscribe(a, feed());
    expectError(await (await client()).get(`/v1/subscriptions/${g}`), 404, 'Resource not found');
  });
});

describe('PATCH /v1/subscriptions/{guid}', () => {
  test('is_subscribed false returns only what changed, and shows in a since-sync', async () => {
    const c = await client();
    const u = feed();
    const g = await subscribe(c, u);
    const m = await mark(c);
    const r = await c.patch(`/v1/subscriptions/${g}`, { is_subscribed: false });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ is_subscribed: false, subscription_changed: expect.stringMatching(ISO_MS) });
    const later = await c.get(`/v1/subscriptions?since=${encodeURIComponent(m)}`);
    expect(later.body.subscriptions).toEqual([
      { feed_url: u, guid: g, is_subscribed: false, subscription_changed: r.body.subscription_changed },
    ]);
  });

  test('unchanged values change nothing: an empty answer and no new stamp', async () => {
    const c = await client();
    const u = feed();
    const g = await subscribe(c, u);
    const before = (await c.get(`/v1/subscriptions/${g}`)).body;
    const r = await c.patch(`/v1/subscriptions/${g}`, { is_subscribed: true, new_feed_url: u, new_guid: g });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({});
    expect((await c.get(`/v1/subscriptions/${g}`)).body).toEqual(before);
  });

  test('new_feed_url changes the URL; POSTing the old URL later resolves to the same record', async () => {
    const c = await client();
    const oldUrl = feed('old');
    const newUrl = feed('new');
    const g = await subscribe(c, oldUrl);
    const r = await c.patch(`/v1/subscriptions/${g}`, { new_feed_url: newUrl });
    expect(r.body).toEqual({ new_feed_url: newUrl, subscription_changed: expect.stringMatching(ISO_MS) });
    expect((await c.get(`/v1/subscriptions/${g}`)).body.feed_url).toBe(newUrl);
    const again = await c.post('/v1/subscriptions', { subscriptions: [{ feed_url: oldUrl }] });
    expect(again.body.success[0].guid).toBe(g);
    const list = (await c.get('/v1/subscriptions')).body;
    expect(list.total).toBe(1);
    // The record keeps the URL the client sent last.
    expect(list.subscriptions[0].feed_url).toBe(oldUrl);
  });

  test('new_feed_url is validated like a POSTed URL; a podcast scheme is rewritten', async () => {
    const c = await client();
    const g = await subscribe(c, feed());
    expectError(
      await c.patch(`/v1/subscriptions/${g}`, { new_feed_url: 'example.com/x' }),
      405,
      'Input could not be validated: No protocol present',
    );
    expectError(
      await c.patch(`/v1/subscriptions/${g}`, { new_feed_url: 'ftp://example.com/x' }),
      405,
      /Unsupported protocol/,
    );
    const r = await c.patch(`/v1/subscriptions/${g}`, { new_feed_url: 'itpc://example.com/rewritten.xml' });
    expect(r.body.new_feed_url).toBe('http://example.com/rewritten.xml');
  });

  test.each([
    ['an empty object', {}],
    ['is_subscribed not a boolean', { is_subscribed: 'no' }],
    ['new_guid not a UUID', { new_guid: 'abc' }],
    ['new_feed_url not a string', { new_feed_url: 5 }],
    ['an array', [{ is_subscribed: false }]],
  ])('405 for a body that cannot be validated: %s', async (_name, body) => {
    const c = await client();
    const g = await subscribe(c, feed());
    expectError(await c.patch(`/v1/subscriptions/${g}`, body), 405, /^Input could not be validated/);
  });

  test('unknown guid: 404; another user: 404; not a UUID: 405', async () => {
    const c = await client();
    const g = await subscribe(c, feed());
    expectError(await c.patch('/v1/subscriptions/00000000-0000-4000-8000-000000000000', { is_subscribed: false }), 404);
    expectError(await (await client()).patch(`/v1/subscriptions/${g}`, { is_subscribed: false }), 404);
    expectError(await c.patch('/v1/subscriptions/xyz', { is_subscribed: false }), 405);
    expect((await c.get(`/v1/subscriptions/${g}`)).body.is_subscribed).toBe(true);
  });

  test('new_guid: the old guid resolves to the new one; the list shows one record', async () => {
    const c = await client();
    const u = feed();
    const g = await subscribe(c, u);
    const r = await c.patch(`/v1/subscriptions/${g}`, { new_guid: G2.toUpperCase() });
    expect(r.body).toEqual({ new_guid: G2, guid_changed: expect.stringMatching(ISO_MS) });
    expect((await c.get(`/v1/subscriptions/${g}`)).body).toMatchObject({ guid: g, new_guid: G2, feed_url: u });
    expect((await c.get(`/v1/subscriptions/${G2}`)).body).toEqual({
      feed_url: u,
      guid: G2,
      is_subscribed: true,
      subscription_changed: expect.any(String),
      guid_changed: r.body.guid_changed,
    });
    const list = (await c.get('/v1/subscriptions')).body.subscriptions;
    expect(list).toEqual([expect.objectContaining({ guid: g, new_guid: G2 })]);
    // PATCHing through the old guid applies to the latest record of the chain.
    expect((await c.patch(`/v1/subscriptions/${g}`, { is_subscribed: false })).status).toBe(200);
    expect((await c.get(`/v1/subscriptions/${G2}`)).body.is_subscribed).toBe(false);
  });

  test('the OPA resolution example: a chain of three guids, with and without since', async () => {
    const c = await client();
    const u = feed('chain');
    await subscribe(c, u, G1);
    const beforeFirst = await mark(c);
    const first = await c.patch(`/v1/subscriptions/${G1}`, { new_guid: G2 });
    const between = await mark(c);
    const second = await c.patch(`/v1/subscriptions/${G2}`, { new_guid: G3 });
    const after = await mark(c);

    const withoutSince = (await c.get('/v1/subscriptions')).body.subscriptions;
    expect(withoutSince).toEqual([
      expect.objectContaining({ feed_url: u, guid: G1, new_guid: G3, guid_changed: second.body.guid_changed }),
    ]);
    const sinceBefore = (await c.get(`/v1/subscriptions?since=${encodeURIComponent(beforeFirst)}`)).body.subscriptions;
    expect(sinceBefore).toEqual([expect.objectContaining({ guid: G1, new_guid: G3 })]);
    const sinceBetween = (await c.get(`/v1/subscriptions?since=${encodeURIComponent(between)}`)).body.subscriptions;
    expect(sinceBetween).toEqual([
      expect.objectContaining({ guid: G2, new_guid: G3, guid_changed: second.body.guid_changed }),
    ]);
    expect(first.body.guid_changed < second.body.guid_changed).toBe(true);
    expect((await c.get(`/v1/subscriptions?since=${encodeURIComponent(after)}`)).body.subscriptions).toEqual([]);
    // Every guid of the chain resolves, naming itself and the latest.
    for (const g of [G1, G2])
      expect((await c.get(`/v1/subscriptions/${g}`)).body).toMatchObject({ guid: g, new_guid: G3 });
    expect((await c.get(`/v1/subscriptions/${G3}`)).body.new_guid).toBeUndefined();
    // POSTing old data resolves to the same record and keeps the latest guid.
    const again = await c.post('/v1/subscriptions', { subscriptions: [{ feed_url: u, guid: G1 }] });
    expect(again.body.success[0].guid).toBe(G3);
    expect((await c.get('/v1/subscriptions')).body.total).toBe(1);
  });

  test('new_guid that the user already has merges the two records; the most recently changed state wins', async () => {
    const c = await client();
    const uA = feed('merge-a');
    const uB = feed('merge-b');
    const gA = await subscribe(c, uA);
    const gB = await subscribe(c, uB);
    await sleep(3);
    await c.patch(`/v1/subscriptions/${gA}`, { is_subscribed: false }); // A changed last
    const r = await c.patch(`/v1/subscriptions/${gA}`, { new_guid: gB });
    expect(r.body).toEqual({ new_guid: gB, guid_changed: expect.stringMatching(ISO_MS) });
    const list = (await c.get('/v1/subscriptions')).body;
    expect(list.total).toBe(1);
    const merged = (await c.get(`/v1/subscriptions/${gB}`)).body;
    expect(merged).toMatchObject({ guid: gB, feed_url: uA, is_subscribed: false });
    expect((await c.get(`/v1/subscriptions/${gA}`)).body).toMatchObject({ guid: gA, new_guid: gB });
    // Both URLs now find the merged record.
    const post = await c.post('/v1/subscriptions', { subscriptions: [{ feed_url: uA }, { feed_url: uB }] });
    expect(post.body.success.map((s: { guid: string }) => s.guid)).toEqual([gB, gB]);
    expect((await c.get('/v1/subscriptions')).body.total).toBe(1);
  });

  test('in a merge, the other record wins when it changed more recently', async () => {
    const c = await client();
    const uA = feed('older');
    const uB = feed('newer');
    const gA = await subscribe(c, uA);
    await sleep(3);
    const gB = await subscribe(c, uB);
    await c.patch(`/v1/subscriptions/${gA}`, { new_guid: gB });
    expect((await c.get(`/v1/subscriptions/${gB}`)).body).toMatchObject({ feed_url: uB, is_subscribed: true });
  });
});

describe('DELETE /v1/subscriptions/{guid} and GET /v1/deletions/{id}', () => {
  test('202 with an integer id at once; the job completes; then 410; the list shows it deleted', async () => {
    const c = await client();
    const u = feed('del');
    const g = await subscribe(c, u);
    const m = await mark(c);
    const d = await c.del(`/v1/subscriptions/${g}`);
    expect(d.status).toBe(202);
    expect(d.body).toEqual({
      deletion_id: expect.any(Number),
      message: 'Deletion request was received and will be processed',
    });
    expect(Number.isInteger(d.body.deletion_id)).toBe(true);
    const st = await waitForDeletion(c, d.body.deletion_id);
    expect(st.body).toEqual({ deletion_id: d.body.deletion_id, status: 'SUCCESS', message: expect.any(String) });
    expectError(await c.get(`/v1/subscriptions/${g}`), 410, 'Subscription has been deleted');
    expectError(await c.patch(`/v1/subscriptions/${g}`, { is_subscribed: true }), 410);
    expectError(await c.del(`/v1/subscriptions/${g}`), 410);
    const later = (await c.get(`/v1/subscriptions?since=${encodeURIComponent(m)}`)).body.subscriptions;
    expect(later).toEqual([
      {
        feed_url: u,
        guid: g,
        is_subscribed: false,
        subscription_changed: expect.stringMatching(ISO_MS),
        deleted: expect.stringMatching(ISO_MS),
      },
    ]);
    expect(later[0].deleted).toBe(later[0].subscription_changed);
  });

  test('posting a deleted feed again reinstates it', async () => {
    const c = await client();
    const u = feed('back');
    const g = await subscribe(c, u);
    await waitForDeletion(c, (await c.del(`/v1/subscriptions/${g}`)).body.deletion_id);
    const r = await c.post('/v1/subscriptions', { subscriptions: [{ feed_url: u }] });
    expect(r.body.success[0]).toMatchObject({ guid: g, is_subscribed: true });
    const rec = (await c.get(`/v1/subscriptions/${g}`)).body;
    expect(rec.is_subscribed).toBe(true);
    expect(rec.deleted).toBeUndefined();
  });

  test('unknown guid: 404; not a UUID: 405; another user: 404 and nothing happens', async () => {
    const c = await client();
    const g = await subscribe(c, feed());
    expectError(await c.del('/v1/subscriptions/00000000-0000-4000-8000-000000000000'), 404);
    expectError(await c.del('/v1/subscriptions/nope'), 405);
    expectError(await (await client()).del(`/v1/subscriptions/${g}`), 404);
    await sleep(300);
    expect((await c.get(`/v1/subscriptions/${g}`)).status).toBe(200);
  });

  test("deletion ids: another user's is 404; unknown is 404; not a number is 405", async () => {
    const c = await client();
    const g = await subscribe(c, feed());
    const id = (await c.del(`/v1/subscriptions/${g}`)).body.deletion_id;
    expectError(await (await client()).get(`/v1/deletions/${id}`), 404, 'Resource not found');
    expectError(await c.get('/v1/deletions/999999999'), 404);
    expectError(await c.get('/v1/deletions/abc'), 405);
  });

  test('a second DELETE while the first is pending returns the same deletion', async () => {
    const c = await client();
    const g = await subscribe(c, feed());
    const [a, b] = await Promise.all([c.del(`/v1/subscriptions/${g}`), c.del(`/v1/subscriptions/${g}`)]);
    const ids = [a, b].filter((r) => r.status === 202).map((r) => r.body.deletion_id);
    expect(ids.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(1);
    expect((await waitForDeletion(c, ids[0])).body.status).toBe('SUCCESS');
  });

  test('a deletion that fails is rolled back and reported as FAILURE', async () => {
    const c = await client();
    const u = feed('fail-me');
    const g = await subscribe(c, u);
    await t.db.query(`CREATE OR REPLACE FUNCTION test_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by test'; END $$`);
    await t.db.query(`CREATE TRIGGER test_refuse_delete BEFORE UPDATE ON subscriptions FOR EACH ROW
      WHEN (NEW.deleted IS NOT NULL AND NEW.feed_url LIKE '%fail-me%') EXECUTE FUNCTION test_refuse_delete()`);
    try {
      const d = await c.del(`/v1/subscriptions/${g}`);
      const st = await waitForDeletion(c, d.body.deletion_id);
      expect(st.body).toEqual({
        deletion_id: d.body.deletion_id,
        status: 'FAILURE',
        message: expect.stringMatching(/failed/i),
      });
      const rec = (await c.get(`/v1/subscriptions/${g}`)).body;
      expect(rec).toMatchObject({ is_subscribed: true });
      expect(rec.deleted).toBeUndefined();
    } finally {
      await t.db.query('DROP TRIGGER test_refuse_delete ON subscriptions');
    }
  });
});

describe('service endpoints of the resource', () => {
  test('capabilities without authentication', async () => {
    const r = await request(t.app).get('/v1/capabilities');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      capabilities: {
        'urn:opa:core': { '0.1.0': { status: 'STABLE', root: '/v1' } },
        'urn:opa:episodes': { '0.0.0-draft': { status: 'UNSTABLE', root: '/v1' } },
        'urn:opa:sync': { '0.0.0-draft': { status: 'UNSTABLE', root: '/api/v1' } },
        'urn:castsync:stats': { '0.0.0-draft': { status: 'UNSTABLE', root: '/v1' } },
        'urn:castsync:queue': { '0.0.0-draft': { status: 'UNSTABLE', root: '/v1' } },
        'urn:castsync:account-settings': { '0.0.0-draft': { status: 'UNSTABLE', root: '/v1' } },
      },
    });
  });

  test('a wrong method on a known path: 405 with Allow', async () => {
    const u = await t.user('methods');
    const r2 = await request(t.app).put('/v1/subscriptions').set('Authorization', u.basic).send({});
    expectError(r2, 405, 'Method not allowed');
    expect(r2.headers.allow).toBe('GET, POST, HEAD');
    const r3 = await request(t.app).post(`/v1/subscriptions/${G1}`).set('Authorization', u.basic).send({});
    expectError(r3, 405, 'Method not allowed');
    expect(r3.headers.allow).toBe('GET, PATCH, DELETE, HEAD');
  });
});
