import fc from 'fast-check';
import request from 'supertest';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as, testApp, type TestApp } from '../helpers/app';
import { feedServer, rss, xml } from '../helpers/feed-server';
import { hostileString, NUL } from '../helpers/fuzz';
import { capturedLogger } from '../helpers/logs';

// Bounded by its count, not by time; a slow machine (CI's 2 cores, the suite's other worker) may take
// several times a minute, which is no failure.
const FUZZ_TIMEOUT_MS = 300_000;

// Random and hostile XML served on loopback, through the fetcher: a feed's text PostgreSQL cannot store
// loses that character and keeps the rest; nothing a feed holds stops the fetch of the others or the
// server (docs/hostile-input.md). Fixed seed, bounded count.

const SEED = 46;
const FEEDS = 150;
const captured = capturedLogger('info');
let t: TestApp;
let fixture: Awaited<ReturnType<typeof feedServer>>;

/** Text as a feed might hold it: any character, character references of U+0000 and surrogates, the hostile strings. */
const feedText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.constantFrom('A&#0;B', 'A&#x0;B', '&#xD800;', '&#55296;', `A${NUL}B`, '<![CDATA[a\u0000b]]>'),
  hostileString,
);

/** RSS documents with random text in their elements, and documents that are barely XML or not at all. */
const documents = fc.oneof(
  fc
    .record({ title: feedText, items: fc.array(fc.tuple(feedText, feedText), { maxLength: 4 }) })
    .map(({ title, items }) =>
      rss({ title }).replace(
        '</channel>',
        items
          .map(([t, u]) => `<item><title>${t}</title><guid>${u}</guid><enclosure url="https://e.example/${u}"/></item>`)
          .join('') + '</channel>',
      ),
    ),
  fc.string({ unit: 'binary', maxLength: 400 }),
  fc.constantFrom('<rss><channel>'.repeat(2000), '<rss version="2.0"><channel><title>x</title>', ''),
);

beforeAll(async () => {
  t = await testApp();
  const docs = fc.sample(documents, { seed: SEED, numRuns: FEEDS });
  const routes = Object.fromEntries(docs.map((d, i) => [`/f/${i}`, xml(d)]));
  routes['/nul-title'] = xml(rss({ title: `Before${NUL}After` }));
  fixture = await feedServer(routes);
});
afterAll(async () => {
  await fixture.close();
  await t.close();
});

test(
  'random and hostile feeds: every one fetched or refused, the server fine, U+0000 removed from a title',
  async () => {
    const u = await t.user('feeds');
    const paths = [...Array.from({ length: FEEDS }, (_, i) => `/f/${i}`), '/nul-title'];
    const post = await as(t, u).post('/v1/subscriptions', {
      subscriptions: paths.map((p) => ({ feed_url: fixture.url(p) })),
    });
    expect(post.body.success).toHaveLength(paths.length);
    const settings = fetcherSettings(loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, { dotenvFile: false }));
    const counts = await fetchDueFeeds({ db: t.db, logger: captured.logger }, settings);
    expect((counts.fetched ?? 0) + (counts.invalid ?? 0)).toBe(paths.length);
    expect(counts.fetched).toBeGreaterThan(10);
    expect(captured.lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    const guid = post.body.success.at(-1).guid as string;
    expect((await as(t, u).get(`/v1/feeds/${guid}`)).body.title).toBe('BeforeAfter');
    for (const { guid: g } of post.body.success as { guid: string }[]) {
      expect((await as(t, u).get(`/v1/feeds/${g}`)).status).toBe(200);
    }
    expect((await request(t.app).get('/readyz')).status).toBe(200);
  },
  FUZZ_TIMEOUT_MS,
);
