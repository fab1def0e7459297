import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import http from 'node:http';
import type net from 'node:net';
import request from 'supertest';
import { as, testApp, type TestApp } from '../helpers/app';
import { fakeDirectory, KEY, SECRET, signedByTestKey, type Mode } from '../helpers/directory';
import { capturedLogger } from '../helpers/logs';
import { csrfOf, signedInAgent } from '../helpers/web';

// Searching a directory, previewing a feed and subscribing in one click, against a podcast directory on
// loopback (allowed as a home network would be); the gpodder.net search and toplist for gpodder clients.

const feed = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Weekly Show</title><description><![CDATA[<p>News <b>every</b> week</p>]]></description>
<item><title>Week 2</title><pubDate>Tue, 09 Jan 2024 10:00:00 GMT</pubDate><enclosure url="https://media.example/2.mp3"/></item>
<item><title>Week 1</title><pubDate>Tue, 02 Jan 2024 10:00:00 GMT</pubDate><enclosure url="https://media.example/1.mp3"/></item>
</channel></rss>`;

let dir: Awaited<ReturnType<typeof fakeDirectory>>;
const captured = capturedLogger('warn');
const apps: TestApp[] = [];
async function appWith(env: Record<string, string>) {
  const t = await testApp({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8', DIRECTORY_TIMEOUT: '1', ...env }, captured.logger);
  apps.push(t);
  return t;
}
let itunes: TestApp;
let pi: TestApp;
beforeAll(async () => {
  dir = await fakeDirectory({ '/feeds/weekly.xml': feed, '/feeds/broken.xml': 'not a feed' });
  itunes = await appWith({ DIRECTORY: 'itunes', DIRECTORY_URL: dir.url('/itunes') });
  pi = await appWith({
    DIRECTORY: 'podcastindex',
    DIRECTORY_URL: dir.url('/pi'),
    PODCASTINDEX_KEY: KEY,
    PODCASTINDEX_SECRET: SECRET,
  });
});
afterAll(async () => {
  await Promise.all(apps.map((t) => t.close()));
  await dir.close();
});
beforeEach(() => {
  dir.state.mode = 'ok';
});

async function searchPage(t: TestApp, q: string) {
  const u = await t.user();
  const web = await signedInAgent(t.app, u.name, u.password);
  return { web, u, page: await web.agent.get(`/web/search?${new URLSearchParams({ q })}`) };
}

describe('search on the web page', () => {
  test('iTunes: title, author, artwork and feed URL of each podcast with a feed', async () => {
    const { page } = await searchPage(itunes, 'Tech');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Tech Weekly');
    expect(page.text).toContain('Weekly Host');
    expect(page.text).toContain('src="https://art.example/weekly.jpg"');
    expect(page.text).toContain('https://feeds.example/weekly.xml');
    expect(page.text).not.toContain('Apple only');
    expect(page.text).toContain('1 podcast found');
    const asked = dir.requests.filter((r) => r.path === '/itunes/search').pop()!;
    expect(asked.headers['user-agent']).toMatch(/castsync/);
  });

  test('Podcast Index: each request signed with the key, the secret and the time', async () => {
    const { page } = await searchPage(pi, 'Tech');
    expect(page.text).toContain('Tech Daily');
    expect(page.text).toContain('Daily Host');
    const asked = dir.requests.filter((r) => r.path === '/pi/search/byterm').pop()!;
    expect(signedByTestKey(asked.headers)).toBe(true);
    // The fake refuses a request signed with another secret: the check above is not one that takes anything.
    expect(signedByTestKey({ ...asked.headers, authorization: 'f'.repeat(40) })).toBe(false);
  });

  const failures: [Mode, RegExp, string][] = [
    ['slow', /did not answer within 1 s/, 'timeout'],
    ['error', /answered HTTP 503/, 'http_error'],
    ['not-json', /answer was not JSON/, 'malformed'],
    ['wrong-shape', /not in the shape expected/, 'malformed'],
    ['refuse-key', /refused the configured key \(HTTP 401\)/, 'refused_key'],
  ];
  test.each(failures)(
    'a directory that fails (%s) is a message on the page, logged and counted',
    async (mode, message, outcome) => {
      for (const [t, provider] of [
        [itunes, 'itunes'],
        [pi, 'podcastindex'],
      ] as const) {
        dir.state.mode = mode;
        const before = captured.lines.length;
        const { page } = await searchPage(t, 'Tech');
        expect(page.status).toBe(200);
        expect(page.text).toMatch(/<p class="notice error" role="alert">The podcast directory could not be searched: /);
        expect(page.text).toMatch(message);
        expect(captured.lines.slice(before)).toContainEqual(
          expect.objectContaining({ msg: 'directory search failed', provider, outcome }),
        );
        const metrics = (await request(t.app).get('/metrics')).text;
        expect(metrics).toMatch(
          new RegExp(`castsync_directory_searches_total\\{provider="${provider}",outcome="${outcome}"\\} [1-9]`),
        );
      }
    },
  );

  test('a directory that is down, or at an address the policy refuses: a message', async () => {
    const down = await appWith({ DIRECTORY: 'itunes', DIRECTORY_URL: 'http://127.0.0.1:9/itunes' });
    expect((await searchPage(down, 'Tech')).page.text).toMatch(/could not be searched: it could not be reached/);
    const strict = await testApp({ DIRECTORY: 'itunes', DIRECTORY_URL: dir.url('/itunes') });
    apps.push(strict);
    expect((await searchPage(strict, 'Tech')).page.text).toMatch(/its address is not allowed/);
  });

  test('no directory configured: the page says so, and /search.json finds nothing', async () => {
    const none = await appWith({ DIRECTORY: 'none' });
    expect((await searchPage(none, 'Tech')).page.text).toContain('Searching a podcast directory is turned off');
    const r = await request(none.app).get('/search.json?q=Tech');
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
  });
});

describe('preview and subscribe', () => {
  test("the feed's description and latest episodes, then one click subscribes", async () => {
    const u = await itunes.user();
    const web = await signedInAgent(itunes.app, u.name, u.password);
    const url = dir.url('/feeds/weekly.xml');
    const page = await web.agent.get(`/web/search/preview?${new URLSearchParams({ url, q: 'Tech' })}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Weekly Show</h1>');
    expect(page.text).toContain('News every week');
    expect(page.text.indexOf('Week 2')).toBeLessThan(page.text.indexOf('Week 1'));
    const subscribed = await web.agent
      .post('/web/subscriptions')
      .type('form')
      .send({ _csrf: csrfOf(page.text), feed_url: url });
    expect(subscribed.text).toContain(`Subscribed to ${url}`);
    const list = await as(itunes, u).get('/v1/subscriptions');
    expect(list.body.subscriptions.map((s: { feed_url: string }) => s.feed_url)).toEqual([url]);
  });

  test('a feed that fails, or is not a feed, or an invalid URL: a message, never a 500', async () => {
    const u = await itunes.user();
    const web = await signedInAgent(itunes.app, u.name, u.password);
    const show = (url: string) => web.agent.get(`/web/search/preview?${new URLSearchParams({ url })}`);
    expect((await show(dir.url('/feeds/missing.xml'))).text).toContain('The feed could not be previewed: HTTP 404.');
    expect((await show(dir.url('/feeds/broken.xml'))).text).toContain('could not be previewed: it is not a feed.');
    const bad = await show('feeds.example/no-scheme.xml');
    expect(bad.status).toBe(200);
    expect(bad.text).toContain('feeds.example/no-scheme.xml: No protocol present');
  });
});

describe('gpodder.net search', () => {
  test("/search.json in mygpo's podcast shape; .opml, .xml and .txt", async () => {
    const json = await request(itunes.app).get('/search.json?q=Tech');
    expect(json.status).toBe(200);
    expect(json.body).toEqual([
      {
        url: 'https://feeds.example/weekly.xml',
        title: 'Tech Weekly',
        author: 'Weekly Host',
        description: '',
        subscribers: 0,
        subscribers_last_week: 0,
        logo_url: 'https://art.example/weekly.jpg',
        scaled_logo_url: 'https://art.example/weekly.jpg',
        website: null,
        mygpo_link: expect.stringMatching(/\/web\/search\/preview\?url=https%3A%2F%2Ffeeds\.example%2Fweekly\.xml$/),
      },
    ]);
    const opml = await request(itunes.app).get('/search.opml?q=Tech');
    expect(opml.text).toContain(
      '<outline type="rss" text="Tech Weekly" title="Tech Weekly" xmlUrl="https://feeds.example/weekly.xml"/>',
    );
    const xml = await request(itunes.app).get('/search.xml?q=Tech');
    expect(xml.headers['content-type']).toMatch(/^application\/xml/);
    expect(xml.text).toContain('<podcast>\n  <url>https://feeds.example/weekly.xml</url>');
    expect((await request(itunes.app).get('/search.txt?q=Tech')).text).toBe('https://feeds.example/weekly.xml\n');
  });

  test('no query, a format mygpo does not serve, a directory that fails: clear errors, never a 500', async () => {
    expect((await request(itunes.app).get('/search.json')).status).toBe(400);
    expect((await request(itunes.app).get('/search.pdf?q=x')).status).toBe(400);
    dir.state.mode = 'error';
    const failed = await request(itunes.app).get('/search.json?q=Tech');
    expect(failed.status).toBe(502);
    expect(failed.body.message).toMatch(/could not be searched: it answered HTTP 503/);
  });
});

test('searches without credentials: a client address gets 30 a minute, then 429', async () => {
  const t = await appWith({ DIRECTORY: 'none' });
  for (let i = 0; i < 30; i++) expect((await request(t.app).get('/search.json?q=x')).status).toBe(200);
  const refused = await request(t.app).get('/search.json?q=x');
  expect(refused.status).toBe(429);
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  // The toplist costs no directory request: not limited.
  expect((await request(t.app).get('/toplist/5.json')).status).toBe(200);
});

describe("the toplist of this server's users", () => {
  test('lists only feeds with at least TOPLIST_MIN_SUBSCRIBERS subscribers, most first', async () => {
    const t = await appWith({ DIRECTORY: 'none', TOPLIST_MIN_SUBSCRIBERS: '3' });
    const subscribe = async (urls: string[]) => {
      const u = await t.user();
      await as(t, u).post('/v1/subscriptions', { subscriptions: urls.map((feed_url) => ({ feed_url })) });
      return u;
    };
    const [A, B, C] = ['https://top.example/a.xml', 'https://top.example/b.xml', 'https://top.example/c.xml'];
    for (let i = 0; i < 4; i++) await subscribe(i < 3 ? [A, B] : [A]);
    // Under the threshold: two subscribers.
    await subscribe([C]);
    await subscribe([C]);
    // Unsubscribed: not counted (B would have 4).
    const leaving = await subscribe([B]);
    const guid = (await as(t, leaving).get('/v1/subscriptions')).body.subscriptions[0].guid as string;
    await as(t, leaving).patch(`/v1/subscriptions/${guid}`, { is_subscribed: false });
    const top = await request(t.app).get('/toplist/10.json');
    expect(top.status).toBe(200);
    expect(top.body.map((p: { url: string; subscribers: number }) => [p.url, p.subscribers])).toEqual([
      [A, 4],
      [B, 3],
    ]);
    expect((await request(t.app).get('/toplist/1.txt')).text).toBe(`${A}\n`);
    // 1 to 100, as gpodder.net: fewer is 1, more is 100, however many digits.
    expect((await request(t.app).get('/toplist/0.txt')).text).toBe(`${A}\n`);
    expect((await request(t.app).get('/toplist/1000000.json')).body).toHaveLength(2);
    expect((await request(t.app).get(`/toplist/${'9'.repeat(40)}.json`)).body).toHaveLength(2);
    // Counted again only after ten minutes: a third subscriber of C does not show at once.
    await subscribe([C]);
    expect((await request(t.app).get('/toplist.json')).body).toHaveLength(2);
    // Unless configured, a feed needs five subscribers.
    const below = await appWith({ DIRECTORY: 'none' });
    expect(below.config.toplistMinSubscribers).toBe(5);
  });

  test('a feed URL with a user name or password in it is never listed: the toplist needs no credentials', async () => {
    const t = await appWith({ DIRECTORY: 'none', TOPLIST_MIN_SUBSCRIBERS: '2' });
    const shared = 'https://top.example/public.xml';
    const members = 'https://member:s3cret@top.example/members.xml';
    const named = 'https://member@top.example/named.xml';
    for (let i = 0; i < 2; i++) {
      const u = await t.user();
      const subscriptions = [shared, members, named].map((feed_url) => ({ feed_url }));
      expect((await as(t, u).post('/v1/subscriptions', { subscriptions })).body.failure).toEqual([]);
    }
    const top = await request(t.app).get('/toplist/10.json');
    expect(top.body.map((p: { url: string; subscribers: number }) => [p.url, p.subscribers])).toEqual([[shared, 2]]);
    for (const format of ['txt', 'opml', 'xml']) {
      expect((await request(t.app).get(`/toplist/10.${format}`)).text).not.toContain('member');
    }
  });
});

describe("mygpoclient's public client", () => {
  test('searches and reads the toplist', async () => {
    const t = await appWith({ DIRECTORY: 'itunes', DIRECTORY_URL: dir.url('/itunes'), TOPLIST_MIN_SUBSCRIBERS: '2' });
    for (let i = 0; i < 2; i++) {
      const u = await t.user();
      await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://top.example/shared.xml' }] });
    }
    const lonely = await t.user();
    await as(t, lonely).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://top.example/mine.xml' }] });
    const server = http.createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    try {
      const script = `
import json, sys
from mygpoclient import public
client = public.PublicClient(sys.argv[1])
print(json.dumps({
  'search': [[p.url, p.title, p.logo_url] for p in client.search_podcasts('Tech')],
  'toplist': [[p.url, p.subscribers] for p in client.get_toplist(10)],
}))`;
      // Not spawnSync: the server answers from this process.
      const run = await promisify(execFile)('/usr/bin/python3', ['-c', script, origin], { timeout: 60_000 });
      expect(JSON.parse(run.stdout)).toEqual({
        search: [['https://feeds.example/weekly.xml', 'Tech Weekly', 'https://art.example/weekly.jpg']],
        toplist: [['https://top.example/shared.xml', 2]],
      });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
