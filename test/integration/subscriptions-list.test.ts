import request from 'supertest';
import { ISO_MS, as, expectError, sleep, testApp, type TestApp } from '../helpers/app';

let t: TestApp;
afterAll(() => t.close());
beforeAll(async () => {
  t = await testApp();
});

let n = 0;
const feed = () => `https://list.example.org/${++n}.xml`;
type Client = ReturnType<typeof as>;
async function userWith(count: number): Promise<{ client: Client; urls: string[] }> {
  const client = as(t, await t.user('lister'));
  const urls = Array.from({ length: count }, feed);
  const r = await client.post('/v1/subscriptions', { subscriptions: urls.map((feed_url) => ({ feed_url })) });
  expect(r.body.success).toHaveLength(count);
  return { client, urls };
}

describe('GET /v1/subscriptions', () => {
  test('the envelope with defaults; records carry only the spec fields, never null', async () => {
    const { client, urls } = await userWith(7);
    const r = await client.get('/v1/subscriptions');
    expect(r.status).toBe(200);
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.headers['sync-timestamp']).toMatch(ISO_MS);
    expect(r.body).toEqual({
      total: 7,
      page: 1,
      per_page: 50,
      subscriptions: urls.map((feed_url) => ({
        feed_url,
        guid: expect.any(String),
        is_subscribed: true,
        subscription_changed: expect.stringMatching(ISO_MS),
      })),
    });
  });

  test('a user with no subscriptions gets an empty page', async () => {
    const r = await as(t, await t.user('empty')).get('/v1/subscriptions');
    expect(r.body).toEqual({ total: 0, page: 1, per_page: 50, subscriptions: [] });
    expect(r.headers['sync-timestamp']).toMatch(ISO_MS);
  });

  test('paging: total counts all; next and previous are absolute and keep since and per_page', async () => {
    const { client, urls } = await userWith(7);
    const since = '2000-01-01T00:00:00.000Z';
    const r1 = await client.get(`/v1/subscriptions?per_page=3&since=${encodeURIComponent(since)}`);
    expect(r1.body).toMatchObject({ total: 7, page: 1, per_page: 3 });
    expect(r1.body.previous).toBeUndefined();
    const next = new URL(r1.body.next);
    expect(next.protocol).toBe('http:');
    expect(Object.fromEntries(next.searchParams)).toEqual({ since, page: '2', per_page: '3' });
    const r2 = await client.get(next.pathname + next.search);
    expect(new URL(r2.body.previous).searchParams.get('page')).toBe('1');
    const r3 = await client.get(new URL(r2.body.next).pathname + new URL(r2.body.next).search);
    expect(r3.body.subscriptions).toHaveLength(1);
    expect(r3.body.next).toBeUndefined();
    expect(r3.body.previous).toBeDefined();
    const seen = [...r1.body.subscriptions, ...r2.body.subscriptions, ...r3.body.subscriptions].map((s) => s.feed_url);
    expect(seen).toEqual(urls);
    const beyond = await client.get('/v1/subscriptions?page=9&per_page=3');
    expect(beyond.body).toEqual({ total: 7, page: 9, per_page: 3, subscriptions: [] });
  });

  test('paging without since lists every record once, in creation order, whatever ids lie between them', async () => {
    // Two users add feeds in turns, so one user's ids are far apart; a merge then removes a record.
    const a = as(t, await t.user('pager'));
    const b = as(t, await t.user('pager'));
    const urls: string[] = [];
    for (let i = 0; i < 9; i++) {
      urls.push(feed());
      await a.post('/v1/subscriptions', { subscriptions: [{ feed_url: urls[i] }] });
      await b.post('/v1/subscriptions', { subscriptions: [{ feed_url: feed() }] });
    }
    const before = (await a.get('/v1/subscriptions')).body.subscriptions;
    const merged = await a.patch(`/v1/subscriptions/${before[3].guid}`, { new_guid: before[4].guid });
    expect(merged.status).toBe(200);

    const seen: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const r = await a.get(`/v1/subscriptions?page=${page}&per_page=3`);
      expect(r.body).toMatchObject({ total: 8, page, per_page: 3 });
      expect(r.body.subscriptions).toHaveLength(page < 3 ? 3 : 2);
      seen.push(...r.body.subscriptions.map((s: { feed_url: string }) => s.feed_url));
    }
    expect(seen).toEqual(urls.filter((_, i) => i !== 3));
    expect((await a.get('/v1/subscriptions?page=4&per_page=3')).body.subscriptions).toEqual([]);
  });

  test('links honour X-Forwarded-* only with TRUST_PROXY, and PUBLIC_URL above all', async () => {
    const proxied = await testApp({ TRUST_PROXY: 'true' });
    const fixed = await testApp({ PUBLIC_URL: 'https://sync.example.com/castsync/' });
    try {
      for (const [app, expected] of [
        [t, 'http://127.0.0.1'],
        [proxied, 'https://podcasts.example.net'],
        [fixed, 'https://sync.example.com/castsync'],
      ] as const) {
        const u = await app.user('linker');
        await as(app, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed() }, { feed_url: feed() }] });
        const r = await request(app.app)
          .get('/v1/subscriptions?per_page=1')
          .set('Authorization', u.basic)
          .set('X-Forwarded-Proto', 'https')
          .set('X-Forwarded-Host', 'podcasts.example.net');
        expect(r.body.next).toMatch(
          new RegExp(`^${expected.replace(/\./g, '\\.')}(:\\d+)?/v1/subscriptions\\?page=2&per_page=1$`),
        );
      }
    } finally {
      await proxied.close();
      await fixed.close();
    }
  });

  test('per_page above 500 is clamped and the envelope says 500', async () => {
    const { client } = await userWith(1);
    for (const v of ['501', '100000', '99999999999999999999999']) {
      const r = await client.get(`/v1/subscriptions?per_page=${v}`);
      expect(r.status).toBe(200);
      expect(r.body.per_page).toBe(500);
    }
  });

  test.each([
    'since=yesterday',
    'since=2024-13-45T00:00:00Z',
    'since=2026-11-22',
    'since=',
    'page=0',
    'page=abc',
    'page=1.5',
    'page=-1',
    'page=1e3',
    'page=99999999999999999999',
    'per_page=0',
    'per_page=-5',
    'per_page=ten',
    'page=1&page=2',
    'since=2026-01-01T00:00:00Z&since=2026-01-02T00:00:00Z',
  ])('400 for a bad query parameter, naming it: %s', async (q) => {
    const { client } = await userWith(1);
    const r = await client.get(`/v1/subscriptions?${q}`);
    expectError(r, 400, /^Invalid (since|page|per_page)/);
    expect(r.body.message).toContain(q.split('=')[0]);
  });

  test('since is strictly later, accepts offsets and any fraction, and returns only later changes', async () => {
    const { client, urls } = await userWith(3);
    const first = (await client.get('/v1/subscriptions')).body.subscriptions[0];
    const same = await client.get(`/v1/subscriptions?since=${encodeURIComponent(first.subscription_changed)}`);
    expect(same.body.subscriptions).toEqual([]);
    const mark = (await client.get('/v1/subscriptions')).headers['sync-timestamp'] as string;
    await sleep(3);
    await client.post('/v1/subscriptions', { subscriptions: [{ feed_url: urls[1] }] });
    const later = await client.get(`/v1/subscriptions?since=${encodeURIComponent(mark)}`);
    expect(later.body.subscriptions.map((s: { feed_url: string }) => s.feed_url)).toEqual([urls[1]]);
    expect(later.body.total).toBe(1);
    const d = new Date(mark);
    const plusTwo = new Date(d.getTime() + 2 * 3600_000).toISOString().replace('Z', '123+02:00');
    expect((await client.get(`/v1/subscriptions?since=${encodeURIComponent(plusTwo)}`)).body.total).toBe(1);
    // An unencoded "+" arrives as a space; it is still read as the offset sign.
    expect((await client.get(`/v1/subscriptions?since=${mark.replace('Z', '+00:00')}`)).body.total).toBe(1);
  });

  test('unsubscribed and deleted records are listed without since, with is_subscribed false', async () => {
    const { client, urls } = await userWith(2);
    const g = (await client.get('/v1/subscriptions')).body.subscriptions[1].guid;
    await client.patch(`/v1/subscriptions/${g}`, { is_subscribed: false });
    const r = await client.get('/v1/subscriptions');
    expect(
      r.body.subscriptions.map((s: { feed_url: string; is_subscribed: boolean }) => [s.feed_url, s.is_subscribed]),
    ).toEqual([
      [urls[0], true],
      [urls[1], false],
    ]);
  });

  test('order is creation order: a record that changes keeps its place', async () => {
    const { client, urls } = await userWith(5);
    await client.post('/v1/subscriptions', { subscriptions: [{ feed_url: urls[0] }] });
    const r = await client.get('/v1/subscriptions');
    expect(r.body.subscriptions.map((s: { feed_url: string }) => s.feed_url)).toEqual(urls);
  });

  test("another user's records are never listed", async () => {
    const a = await userWith(2);
    const b = await userWith(1);
    const r = await b.client.get('/v1/subscriptions');
    expect(r.body.total).toBe(1);
    expect(r.body.subscriptions.map((s: { feed_url: string }) => s.feed_url)).toEqual(b.urls);
    expect(JSON.stringify(r.body)).not.toContain(a.urls[0]);
  });
});

describe('lossless incremental sync', () => {
  test('a reader that follows Sync-Timestamp while writers run ends with exactly the final state', async () => {
    const user = await t.user('synced');
    const writers = Array.from({ length: 4 }, () => as(t, user));
    const reader = as(t, user);
    const urls = Array.from({ length: 40 }, feed);
    const state = new Map<string, { guid: string; is_subscribed: boolean }>();
    let since: string | undefined;
    const sync = async () => {
      const first = await reader.get(
        `/v1/subscriptions?per_page=7${since ? `&since=${encodeURIComponent(since)}` : ''}`,
      );
      const stamp = first.headers['sync-timestamp'] as string;
      let page = first;
      for (;;) {
        for (const s of page.body.subscriptions)
          state.set(s.feed_url, { guid: s.new_guid ?? s.guid, is_subscribed: s.is_subscribed });
        if (!page.body.next) break;
        const next = new URL(page.body.next);
        page = await reader.get(next.pathname + next.search);
      }
      since = stamp;
    };
    let writing = true;
    const readerLoop = (async () => {
      while (writing) {
        await sync();
        await sleep(1);
      }
    })();
    await Promise.all(
      writers.map(async (w, wi) => {
        for (let i = 0; i < 30; i++) {
          const u = urls[(i * 7 + wi * 13) % urls.length]!;
          const r = await w.post('/v1/subscriptions', {
            subscriptions: [{ feed_url: u }, { feed_url: urls[(i + wi) % urls.length] }],
          });
          expect(r.status).toBe(200);
          if (i % 3 === wi % 3) {
            const p = await w.patch(`/v1/subscriptions/${r.body.success[0].guid}`, { is_subscribed: false });
            expect(p.status).toBe(200);
          }
        }
      }),
    );
    writing = false;
    await readerLoop;
    await sync();
    const truth = (await reader.get('/v1/subscriptions?per_page=500')).body.subscriptions as {
      feed_url: string;
      guid: string;
      is_subscribed: boolean;
    }[];
    expect(new Map(truth.map((s) => [s.feed_url, { guid: s.guid, is_subscribed: s.is_subscribed }]))).toEqual(state);
  });

  test('stamps of one user strictly increase in commit order, even within the same millisecond', async () => {
    const user = await t.user('stamps');
    const c = as(t, user);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        c.post('/v1/subscriptions', { subscriptions: [{ feed_url: `https://stamps.example.org/${i}` }] }),
      ),
    );
    const stamps = results.map((r) => r.body.success[0].subscription_changed as string);
    expect(new Set(stamps).size).toBe(20);
  });
});
