import request from 'supertest';
import { podcastGuid } from '../../src/subscriptions/urls';
import { ISO_MS, as, expectError, sleep, testApp, type TestApp, type TestUser } from '../helpers/app';

let t: TestApp;
let alice: TestUser;
let A: ReturnType<typeof as>;

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  A = as(t, alice);
});
afterAll(() => t.close());

const post = (client: ReturnType<typeof as>, subscriptions: unknown[]) =>
  client.post('/v1/subscriptions', { subscriptions });
const all = async (client: ReturnType<typeof as>) =>
  (await client.get('/v1/subscriptions?per_page=500')).body.subscriptions as Record<string, unknown>[];
let n = 0;
const feed = (name = 'show') => `https://feeds.example.org/${name}-${++n}.xml`;

describe('POST /v1/subscriptions', () => {
  test('the documented example: three successes and one failure for the feed without protocol', async () => {
    const urls = [feed(), feed(), feed()];
    const r = await post(A, [
      ...urls.map((feed_url) => ({ feed_url })),
      { feed_url: 'example.com/feed4', guid: '2d8bb39b-8d34-48d4-b223-a0d01eb27d71' },
    ]);
    expect(r.status).toBe(200);
    expect(r.body.failure).toEqual([{ feed_url: 'example.com/feed4', message: 'No protocol present' }]);
    expect(r.body.success).toEqual(
      urls.map((u) => ({
        feed_url: u,
        guid: podcastGuid(u),
        is_subscribed: true,
        subscription_changed: expect.stringMatching(ISO_MS),
      })),
    );
    const stored = await all(A);
    for (const u of urls) expect(stored.filter((s) => s.feed_url === u)).toHaveLength(1);
  });

  test('an empty list gives two empty arrays', async () => {
    const r = await post(A, []);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: [], failure: [] });
  });

  test('per-item failures carry the URL as sent and the exact message, in request order', async () => {
    const long = 'https://example.org/' + 'a'.repeat(2100);
    const ok = feed();
    const r = await post(A, [
      { feed_url: 'ftp://example.org/feed.xml' },
      { feed_url: 'https://' },
      { feed_url: long },
      { feed_url: feed(), guid: 'not-a-uuid' },
      { feed_url: ok },
      { feed_url: 'no-protocol.example/x' },
    ]);
    expect(r.status).toBe(200);
    expect(r.body.failure.map((f: { message: string }) => f.message)).toEqual([
      'Unsupported protocol',
      'Invalid URL',
      'URL too long',
      'Invalid guid',
      'No protocol present',
    ]);
    expect(r.body.failure[2].feed_url).toBe(long);
    expect(r.body.success.map((s: { feed_url: string }) => s.feed_url)).toEqual([ok]);
    // Nothing of the failed items was stored.
    expect((await all(A)).some((s) => String(s.feed_url).includes('not-a-uuid') || s.feed_url === long)).toBe(false);
  });

  test('only failures: 200 with an empty success list and nothing written', async () => {
    const before = (await all(A)).length;
    const r = await post(A, [{ feed_url: 'nope' }]);
    expect(r.body).toEqual({ success: [], failure: [{ feed_url: 'nope', message: 'No protocol present' }] });
    expect((await all(A)).length).toBe(before);
  });

  test('podcast schemes are rewritten to http', async () => {
    const r = await post(A, [
      { feed_url: 'itpc://podcast.example.net/itpc.xml' },
      { feed_url: 'pcast://podcast.example.net/p.xml' },
    ]);
    expect(r.body.success.map((s: { feed_url: string }) => s.feed_url)).toEqual([
      'http://podcast.example.net/itpc.xml',
      'http://podcast.example.net/p.xml',
    ]);
  });

  test('without a guid, the guid is the Podcasting 2.0 UUIDv5 of the URL', async () => {
    const r = await post(A, [{ feed_url: 'https://mp3s.nashownotes.com/pc20rss.xml' }]);
    expect(r.body.success[0].guid).toBe('917393e3-1b1e-5cef-ace4-edaa54e1f810');
  });

  test('a client guid is authoritative and returned lower case; an upper-case one matches the same record', async () => {
    const g = 'A1B2C3D4-E5F6-4711-8899-AABBCCDDEEF0';
    const u = feed();
    const r = await post(A, [{ feed_url: u, guid: g }]);
    expect(r.body.success[0].guid).toBe(g.toLowerCase());
    const again = await post(A, [{ feed_url: feed('moved'), guid: g.toLowerCase() }]);
    expect(again.body.success[0].guid).toBe(g.toLowerCase());
    expect((await all(A)).filter((s) => s.guid === g.toLowerCase())).toHaveLength(1);
  });

  test('the same feed twice in one request makes one record', async () => {
    const u = feed();
    const r = await post(A, [
      { feed_url: u },
      { feed_url: u.replace('https://feeds.example.org', 'HTTPS://FEEDS.example.org:443') },
    ]);
    expect(r.body.success).toHaveLength(2);
    expect(r.body.success[0].guid).toBe(r.body.success[1].guid);
    expect((await all(A)).filter((s) => s.guid === r.body.success[0].guid)).toHaveLength(1);
  });

  test('matching by URL ignores scheme and host case, the default port and the fragment, not the path', async () => {
    const u = 'https://match.example.org/Path/feed.xml?a=1';
    const first = (await post(A, [{ feed_url: u }])).body.success[0];
    const variants = [
      'HTTPS://MATCH.EXAMPLE.ORG/Path/feed.xml?a=1',
      'https://match.example.org:443/Path/feed.xml?a=1#x',
    ];
    for (const v of variants) {
      const r = await post(A, [{ feed_url: v, guid: first.guid }]);
      expect(r.body.success[0].guid).toBe(first.guid);
    }
    const other = await post(A, [{ feed_url: 'https://match.example.org/path/feed.xml?a=1' }]);
    expect(other.body.success[0].guid).not.toBe(first.guid);
    // The stored URL keeps the path and query exactly as last sent.
    const rec = (await all(A)).find((s) => s.guid === first.guid);
    expect(rec?.feed_url).toBe('https://match.example.org:443/Path/feed.xml?a=1#x');
  });

  test('a known guid with a new URL updates the URL; the old URL still finds the record', async () => {
    const g = '0e5e0f6a-3b1c-4c7e-9a39-111111111111';
    const oldUrl = feed('old');
    const newUrl = feed('new');
    await post(A, [{ feed_url: oldUrl, guid: g }]);
    const r = await post(A, [{ feed_url: newUrl, guid: g }]);
    expect(r.body.success[0]).toMatchObject({ feed_url: newUrl, guid: g });
    let recs = (await all(A)).filter((s) => s.guid === g);
    expect(recs).toEqual([expect.objectContaining({ feed_url: newUrl })]);
    // Posting the old URL (with no guid) resolves to the same record.
    const back = await post(A, [{ feed_url: oldUrl }]);
    expect(back.body.success[0].guid).toBe(g);
    recs = (await all(A)).filter((s) => s.guid === g);
    expect(recs).toHaveLength(1);
  });

  test('a client guid for a feed known by URL under another guid becomes its guid', async () => {
    const u = feed();
    const computed = (await post(A, [{ feed_url: u }])).body.success[0].guid;
    const real = '6f1d7c1e-2d1b-4f53-8f0e-222222222222';
    const r = await post(A, [{ feed_url: u, guid: real }]);
    expect(r.body.success[0].guid).toBe(real);
    const rec = (await all(A)).find((s) => s.feed_url === u);
    expect(rec).toMatchObject({ guid: computed, new_guid: real, guid_changed: expect.stringMatching(ISO_MS) });
    // The earlier guid still resolves.
    expect((await A.get(`/v1/subscriptions/${computed}`)).body.new_guid).toBe(real);
  });

  test('posting a subscribed feed again stamps a later subscription_changed', async () => {
    const u = feed();
    const r1 = (await post(A, [{ feed_url: u }])).body.success[0];
    await sleep(3);
    const r2 = (await post(A, [{ feed_url: u }])).body.success[0];
    expect(r2.guid).toBe(r1.guid);
    expect(r2.subscription_changed > r1.subscription_changed).toBe(true);
  });

  test('an unsubscribed feed posted again is subscribed again', async () => {
    const u = feed();
    const g = (await post(A, [{ feed_url: u }])).body.success[0].guid;
    await A.patch(`/v1/subscriptions/${g}`, { is_subscribed: false });
    await post(A, [{ feed_url: u }]);
    expect((await A.get(`/v1/subscriptions/${g}`)).body.is_subscribed).toBe(true);
  });

  test('unknown fields are ignored', async () => {
    const u = feed();
    const r = await A.post('/v1/subscriptions', { subscriptions: [{ feed_url: u, title: 'x' }], extra: true });
    expect(r.status).toBe(200);
    expect(r.body.success).toHaveLength(1);
  });

  test('SQL-looking and unicode strings are stored verbatim', async () => {
    const u = "https://feeds.example.org/x.xml?q=1');DROP/**/TABLE/**/subscriptions;--";
    const uni = 'https://bücher.example/podcast/🎧.xml';
    const r = await post(A, [{ feed_url: u }, { feed_url: uni }]);
    expect(r.body.success.map((s: { feed_url: string }) => s.feed_url)).toEqual([u, uni]);
    const stored = await all(A);
    expect(stored.some((s) => s.feed_url === u)).toBe(true);
    expect(stored.some((s) => s.feed_url === uni)).toBe(true);
  });

  describe('the body as a whole', () => {
    test.each([
      ['not JSON', '{"subscriptions": ['],
      ['no subscriptions key', {}],
      ['subscriptions not an array', { subscriptions: 'https://example.org/a.xml' }],
      ['an item that is not an object', { subscriptions: ['https://example.org/a.xml'] }],
      ['feed_url missing', { subscriptions: [{ guid: '2d8bb39b-8d34-48d4-b223-a0d01eb27d71' }] }],
      ['feed_url not a string', { subscriptions: [{ feed_url: 42 }] }],
      ['guid not a string', { subscriptions: [{ feed_url: 'https://example.org/a.xml', guid: 7 }] }],
      ['guid null', { subscriptions: [{ feed_url: 'https://example.org/a.xml', guid: null }] }],
      ['a JSON array', [{ feed_url: 'https://example.org/a.xml' }]],
      ['a JSON string', '"hello"'],
      ['null', 'null'],
    ])('405 when it cannot be validated: %s', async (_name, body) => {
      const r = await request(t.app)
        .post('/v1/subscriptions')
        .set('Authorization', alice.basic)
        .set('Content-Type', 'application/json')
        .send(typeof body === 'string' ? body : JSON.stringify(body));
      expectError(r, 405, /^Input could not be validated/);
    });

    test('no body at all: 405', async () => {
      expectError(
        await request(t.app).post('/v1/subscriptions').set('Authorization', alice.basic),
        405,
        /^Input could not be validated/,
      );
    });

    test('more than 1,000 items: 413 saying so, and nothing written', async () => {
      const subs = Array.from({ length: 1001 }, (_, i) => ({ feed_url: `https://big.example.org/${i}.xml` }));
      const r = await post(A, subs);
      expectError(r, 413, /1000/);
      expect((await all(A)).some((s) => String(s.feed_url).startsWith('https://big.example.org/'))).toBe(false);
    });

    test('exactly 1,000 items are accepted', async () => {
      const subs = Array.from({ length: 1000 }, (_, i) => ({ feed_url: `https://thousand.example.org/${i}.xml` }));
      const r = await post(as(t, await t.user('bulk')), subs);
      expect(r.status).toBe(200);
      expect(r.body.success).toHaveLength(1000);
    });

    test('a body over 1 MiB: 413', async () => {
      const r = await request(t.app)
        .post('/v1/subscriptions')
        .set('Authorization', alice.basic)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ subscriptions: [{ feed_url: 'https://x.example/' + 'a'.repeat(2 * 1024 * 1024) }] }));
      expectError(r, 413, /1 MiB/);
    });

    test('a body that is not JSON by its content type: 415', async () => {
      const r = await request(t.app)
        .post('/v1/subscriptions')
        .set('Authorization', alice.basic)
        .set('Content-Type', 'text/plain')
        .send('feed_url=https://example.org/x.xml');
      expectError(r, 415, 'Unsupported media type');
    });

    test('deeply nested JSON and __proto__ keys are refused as invalid, and change nothing', async () => {
      const deep = '['.repeat(100_000) + ']'.repeat(100_000);
      const r1 = await request(t.app)
        .post('/v1/subscriptions')
        .set('Authorization', alice.basic)
        .set('Content-Type', 'application/json')
        .send(deep);
      expectError(r1, 405);
      const r2 = await request(t.app)
        .post('/v1/subscriptions')
        .set('Authorization', alice.basic)
        .set('Content-Type', 'application/json')
        .send('{"__proto__": {"subscriptions": []}, "constructor": {"prototype": {"polluted": true}}}');
      expectError(r2, 405);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  test("users never see or match each other's subscriptions", async () => {
    const bob = as(t, await t.user('bob'));
    const u = feed('shared');
    const a = (await post(A, [{ feed_url: u }])).body.success[0];
    const b = (await post(bob, [{ feed_url: u }])).body.success[0];
    expect(b.guid).toBe(a.guid); // the same computed guid, but two separate records
    await bob.patch(`/v1/subscriptions/${b.guid}`, { is_subscribed: false });
    expect((await A.get(`/v1/subscriptions/${a.guid}`)).body.is_subscribed).toBe(true);
    expect((await all(bob)).map((s) => s.feed_url)).toEqual([u]);
  });
});
