import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { discoverNewFeeds } from '../../src/feeds/discover';
import { as, testApp, type TestApp } from '../helpers/app';
import { sentStatements } from '../helpers/statements';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

/** Statements sent to PostgreSQL while fn runs. */
const statements = async (fn: () => Promise<unknown>): Promise<number> => (await sentStatements(fn)).length;

const feeds = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ feed_url: `https://rt.example/${tag}/${i}.xml` }));

describe('a POST costs a constant number of statements, whatever its size', () => {
  test('new feeds: one statement for 1, 100 or 1,000; the feed fetcher finds them afterwards', async () => {
    const c = as(t, await t.user('rt'));
    await c.get('/v1/subscriptions'); // authenticated once, so the credential is cached
    const counts = [];
    for (const n of [1, 100, 1000]) {
      counts.push(
        await statements(() => c.post('/v1/subscriptions', { subscriptions: feeds(`new${n}`, n) }).expect(200)),
      );
    }
    expect(counts).toEqual([1, 1, 1]);
    const before = await t.db.query(
      `SELECT count(*)::int AS n FROM feeds WHERE feed_url LIKE 'https://rt.example/new%'`,
    );
    expect(before.rows[0].n).toBe(0);
    expect(await discoverNewFeeds(t.db)).toBeGreaterThanOrEqual(1101);
    const noted = await t.db.query(
      `SELECT count(*)::int AS n FROM feeds WHERE feed_url LIKE 'https://rt.example/new%'`,
    );
    expect(noted.rows[0].n).toBe(1101);
  });

  test('feeds the user has: three statements for 1, 100 or 1,000', async () => {
    const c = as(t, await t.user('rt'));
    await c.get('/v1/subscriptions');
    const counts = [];
    for (const n of [1, 100, 1000]) {
      await c.post('/v1/subscriptions', { subscriptions: feeds(`old${n}`, n) }).expect(200);
      counts.push(
        await statements(() => c.post('/v1/subscriptions', { subscriptions: feeds(`old${n}`, n) }).expect(200)),
      );
    }
    expect(counts).toEqual([3, 3, 3]);
  });
});

describe('episode actions: one statement per batch', () => {
  test('a batch of 1, 30 (AntennaPod) or 100 (gPodder) actions is one statement', async () => {
    const u = await t.user('rt');
    const c = as(t, u);
    await c.get(`/api/2/episodes/${u.name}.json`); // credentials cached, session given
    // The session given again is checked to be live once while the credentials stay cached (the hourly
    // clean-up may have removed it): a statement once a minute, not per request.
    await c.get(`/api/2/episodes/${u.name}.json`);
    const counts = [];
    for (const n of [1, 30, 100]) {
      const batch = Array.from({ length: n }, (_, i) => ({
        podcast: 'https://rt.example/feed.xml',
        episode: `https://rt.example/${n}/${i}.mp3`,
        action: 'play',
        timestamp: '2026-11-20T10:00:00',
        position: i,
        device: 'phone',
      }));
      counts.push(await statements(() => c.post(`/api/2/episodes/${u.name}.json`, batch).expect(200)));
    }
    expect(counts).toEqual([1, 1, 1]);
  });
});

describe('the sync draft: a constant number of statements per batch', () => {
  const subscribes = (tag: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      type: 'subscription',
      action: 'subscribe',
      action_id: randomUUID(),
      occurred_at: new Date(Date.UTC(2026, 10, 20, 10, 0, i)).toISOString(),
      data: { feed_url: `https://rt.example/sync/${tag}/${i}.xml` },
    }));

  test('a batch of 1, 10 or 30 subscribes of new feeds is one statement; of feeds the user has, nine', async () => {
    const u = await t.user('rt');
    const post = (requests: unknown[]) =>
      request(t.app).post('/api/v1/sync').set('Authorization', u.basic).send({ requests }).expect(200);
    await post(subscribes('warm', 1)); // authenticated once, so the credential is cached
    const counts = [];
    for (const n of [1, 10, 30]) counts.push(await statements(() => post(subscribes(`new${n}`, n))));
    expect(counts).toEqual([1, 1, 1]);
    // Subscribed again after an unsubscribe through another door: the one statement finds them and writes
    // nothing; then BEGIN, the user's lock, the action ids seen, what the subscribes name (their matches
    // and the records shown, one read), the write, the note (which returns the records as answered), the
    // action ids, COMMIT.
    const later = Date.now() + 1000;
    for (const n of [1, 10, 30]) {
      const again = subscribes(`new${n}`, n).map((a, i) => ({ ...a, occurred_at: new Date(later + i).toISOString() }));
      await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, {
        add: [],
        remove: again.map((a) => a.data.feed_url),
      });
      const results = await sentStatements(() => post(again));
      expect(results).toHaveLength(9);
    }
  });
});
