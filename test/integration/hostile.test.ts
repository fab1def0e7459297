import fc from 'fast-check';
import request from 'supertest';
import { as, expectError, testApp, type TestApp, type TestUser } from '../helpers/app';

let t: TestApp;
let mallory: TestUser;
beforeAll(async () => {
  t = await testApp({ AUTH_FAILURE_RATE_LIMIT: '100000' });
  mallory = await t.user('mallory');
});
afterAll(() => t.close());

const postRaw = (body: string | Buffer, type = 'application/json') =>
  request(t.app).post('/v1/subscriptions').set('Authorization', mallory.basic).set('Content-Type', type).send(body);

describe('any input, never a 500', () => {
  test('any JSON value as a POST body gives 200, 405 or 413, with the error body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (value) => {
        const r = await postRaw(JSON.stringify(value));
        expect([200, 405, 413]).toContain(r.status);
        if (r.status !== 200) expect(r.body).toEqual({ code: String(r.status), message: expect.any(String) });
      }),
      { numRuns: 150 },
    );
  });

  test('any list of items gives 200 with exactly one success or failure per item, in order', async () => {
    const item = fc.record(
      {
        feed_url: fc.oneof(
          fc.webUrl({ withQueryParameters: true, withFragments: true }),
          fc.string(),
          fc.constant('itpc://x.example/a'),
        ),
        guid: fc.oneof(fc.uuid(), fc.string({ maxLength: 40 })),
      },
      { requiredKeys: ['feed_url'] },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(item, { maxLength: 30 }), async (items) => {
        const r = await as(t, mallory).post('/v1/subscriptions', { subscriptions: items });
        expect(r.status).toBe(200);
        expect(r.body.success.length + r.body.failure.length).toBe(items.length);
        for (const f of r.body.failure) expect(items.map((i) => i.feed_url)).toContain(f.feed_url);
      }),
      { numRuns: 60 },
    );
  });

  test('any query string on GET gives 200 or 400', async () => {
    const param = fc.constantFrom('since', 'page', 'per_page', 'other');
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(param, fc.string({ maxLength: 30 })), { maxLength: 4 }), async (pairs) => {
        const q = new URLSearchParams(pairs).toString();
        const r = await as(t, mallory).get(`/v1/subscriptions?${q}`);
        expect([200, 400]).toContain(r.status);
      }),
      { numRuns: 100 },
    );
  });

  test('any path segment as a guid gives 404 or 405, and any deletion id 404 or 405', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 60 }), async (s) => {
        const seg = encodeURIComponent(s);
        expect([404, 405]).toContain((await as(t, mallory).get(`/v1/subscriptions/${seg}`)).status);
        expect([404, 405]).toContain((await as(t, mallory).get(`/v1/deletions/${seg}`)).status);
      }),
      { numRuns: 80 },
    );
  });
});

describe('hostile input over HTTP', () => {
  test('invalid UTF-8 in a JSON body is refused or stored as replacement characters, never a 500', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"subscriptions":[{"feed_url":"https://utf8.example/'),
      Buffer.from([0xc3, 0x28, 0xff, 0xfe]),
      Buffer.from('.xml"}]}'),
    ]);
    const r = await postRaw(bytes);
    expect([200, 405]).toContain(r.status);
  });

  test('a body of 2 MB: 413 before it is parsed', async () => {
    expectError(await postRaw('{"subscriptions":["' + 'x'.repeat(2_000_000) + '"]}'), 413);
  });

  test('huge numbers in the query string: clamped or refused, never a 500', async () => {
    for (const q of ['page=1e400', 'per_page=1e400', 'page=' + '9'.repeat(400), 'per_page=' + '9'.repeat(400)]) {
      expect([200, 400]).toContain((await as(t, mallory).get(`/v1/subscriptions?${q}`)).status);
    }
  });

  test('a charset other than UTF-8 is 415', async () => {
    expectError(await postRaw('{"subscriptions":[]}', 'application/json; charset=latin1'), 415);
  });

  test('an absurd Authorization header is 401', async () => {
    for (const h of ['Basic ' + 'A'.repeat(12_000), 'Bearer ' + 'x'.repeat(12_000), 'Basic !!!', 'Bearer', '']) {
      expectError(await request(t.app).get('/v1/subscriptions').set('Authorization', h), 401);
    }
  });
});

describe("isolation: another user's data is not found, for every endpoint", () => {
  test('no read, change, delete or existence leak of subscriptions and deletions', async () => {
    const owner = as(t, await t.user('owner'));
    const other = as(t, await t.user('other'));
    const url = 'https://private.example/feed.xml';
    const g = (await owner.post('/v1/subscriptions', { subscriptions: [{ feed_url: url }] })).body.success[0].guid;
    const d = (await owner.del(`/v1/subscriptions/${g}`)).body.deletion_id as number;
    const g2 = (await owner.post('/v1/subscriptions', { subscriptions: [{ feed_url: url + '?2' }] })).body.success[0]
      .guid;
    const before = (await owner.get('/v1/subscriptions')).body;

    expectError(await other.get(`/v1/subscriptions/${g2}`), 404, 'Resource not found');
    expectError(await other.patch(`/v1/subscriptions/${g2}`, { is_subscribed: false }), 404);
    expectError(
      await other.patch(`/v1/subscriptions/${g2}`, { new_guid: '00000000-0000-4000-8000-00000000000a' }),
      404,
    );
    expectError(await other.del(`/v1/subscriptions/${g2}`), 404);
    expectError(await other.get(`/v1/deletions/${d}`), 404);
    // The same answer as for a guid nobody has: nothing tells that the record exists.
    const unknown = await other.get('/v1/subscriptions/7e57c0de-0000-4000-8000-000000000000');
    expect((await other.get(`/v1/subscriptions/${g2}`)).body).toEqual(unknown.body);
    // A merge cannot reach into another user's records.
    const mine = (await other.post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://mine.example/x' }] }))
      .body.success[0].guid;
    expect((await other.patch(`/v1/subscriptions/${mine}`, { new_guid: g2 })).status).toBe(200);
    expect((await other.get('/v1/subscriptions')).body.total).toBe(1);
    expect((await owner.get('/v1/subscriptions')).body).toEqual(before);
  });
});
