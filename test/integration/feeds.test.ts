import http from 'node:http';
import type net from 'node:net';
import { loadConfig } from '../../src/config';
import { discoverNewFeeds, pacedLooks } from '../../src/feeds/discover';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { podcastGuid } from '../../src/subscriptions/urls';
import { atom, bomb, feedServer, gzipped, redirect, rss, xml } from '../helpers/feed-server';
import { as, expectError, testApp, type TestApp } from '../helpers/app';
import { capturedLogger } from '../helpers/logs';

// The feed fetcher against a feed server on loopback, allowed by FEED_FETCH_ALLOW_CIDRS as a home
// network would be. Each test subscribes through the APIs and runs the fetcher's loop directly.

const DECLARED = '917393e3-1b1e-5cef-ace4-edaa54e1f810';
let t: TestApp;
let fixture: Awaited<ReturnType<typeof feedServer>>;
const captured = capturedLogger('info');
const allowLoopback = fetcherSettings(
  loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8', FEED_FETCH_TIMEOUT: '1' }, { dotenvFile: false }),
);
const fetchAll = (settings = allowLoopback) => fetchDueFeeds({ db: t.db, logger: captured.logger }, settings);
let etagHits = 0;

beforeAll(async () => {
  t = await testApp();
  fixture = await feedServer({
    '/rss': xml(rss({ title: 'Plain &lt;b&gt;RSS&lt;/b&gt; &amp; more' })),
    '/followed': xml(rss({ title: 'Followed' })),
    '/atom': xml(atom, { 'content-type': 'application/atom+xml' }),
    '/gzip': gzipped(rss({ title: 'Compressed' })),
    '/declares-guid': xml(rss({ title: 'Declares a guid', guid: DECLARED })),
    '/r301': redirect(301, '/r308'),
    '/r308': redirect(308, '/moved-here'),
    '/moved-here': xml(rss({ title: 'Moved feed' })),
    '/temporary': redirect(302, '/rss'),
    '/announces-move': xml(rss({ title: 'Old home', newFeedUrl: 'https://new-home.example.org/feed.xml' })),
    '/etag': (req, res) => {
      etagHits++;
      if (req.headers['if-none-match'] === '"v1"') return res.writeHead(304).end();
      res.writeHead(200, { etag: '"v1"', 'content-type': 'application/rss+xml' }).end(rss({ title: 'Tagged' }));
    },
    '/big': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/rss+xml' });
      const chunk = Buffer.alloc(1024 * 1024, 'a');
      let sent = 0;
      const more = () => {
        while (sent < 11 && res.write(chunk)) sent++;
        if (sent < 11) res.once('drain', more);
        else res.end();
      };
      res.write('<rss><channel><title>');
      more();
    },
    '/slow': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/rss+xml' });
      res.write('<rss><channel>');
      // Never finishes: the fetcher's deadline (1 s here) must end it.
    },
    '/malformed': xml('<rss><channel><title>Unclosed</channel></rss>'),
    '/bomb': xml(bomb),
    '/to-metadata': redirect(302, 'http://169.254.169.254/latest/meta-data/'),
    '/to-private': redirect(301, 'http://10.1.2.3/feed.xml'),
    '/not-found': (_req, res) => res.writeHead(404).end(),
    '/far-ahead': xml(rss({ title: 'Far ahead' })),
    '/tomorrow': xml(rss({ title: 'Tomorrow' })),
    '/busy': (_req, res) => res.writeHead(429, { 'retry-after': '7200' }).end(),
    '/busy-for-a-year': (_req, res) => res.writeHead(429, { 'retry-after': String(365 * 24 * 3600) }).end(),
    '/busy-briefly': (_req, res) => res.writeHead(429, { 'retry-after': '5' }).end(),
    // A host whose clock is years behind: its date is three hours after its own Date.
    '/unavailable': (_req, res) =>
      res
        .writeHead(503, { date: 'Wed, 21 Oct 2015 07:28:00 GMT', 'retry-after': 'Wed, 21 Oct 2015 10:28:00 GMT' })
        .end(),
  });
});
afterAll(async () => {
  await fixture.close();
  await t.close();
});

async function subscribed(paths: string[]) {
  const u = await t.user('feeds');
  const api = as(t, u);
  const post = await api.post('/v1/subscriptions', { subscriptions: paths.map((p) => ({ feed_url: fixture.url(p) })) });
  expect(post.status).toBe(200);
  const guids = Object.fromEntries(
    (post.body.success as { feed_url: string; guid: string }[]).map((s) => [s.feed_url, s.guid]),
  );
  return {
    u,
    api,
    guidOf: (p: string) => guids[fixture.url(p)]!,
    since: post.body.success[0].subscription_changed as string,
  };
}

const feedRow = async (path: string) =>
  (await t.db.query('SELECT * FROM feeds WHERE feed_url = $1', [fixture.url(path)])).rows[0] as Record<string, unknown>;

describe('fetching feeds', () => {
  test('RSS, Atom and gzip feeds: title, link, artwork, author, language are stored and shown', async () => {
    const { api, guidOf } = await subscribed(['/rss', '/atom', '/gzip']);
    const counts = await fetchAll();
    expect(counts.fetched).toBeGreaterThanOrEqual(3);
    const r = await api.get(`/v1/feeds/${guidOf('/rss')}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      guid: guidOf('/rss'),
      feed_url: fixture.url('/rss'),
      title: 'Plain <b>RSS</b> & more',
      description: 'About the show',
      link: 'https://example.org/show',
      artwork_url: 'https://example.org/art.jpg',
      author: 'The Host',
      language: 'en',
      podcast_guid: null,
      last_fetch: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const a = await api.get(`/v1/feeds/${guidOf('/atom')}`);
    expect(a.body).toMatchObject({
      title: 'Atom & Co',
      description: 'An Atom podcast',
      link: 'https://atom.example.org/',
      artwork_url: 'https://atom.example.org/logo.png',
      author: 'Atom Author',
      language: 'de',
    });
    expect((await api.get(`/v1/feeds/${guidOf('/gzip')}`)).body.title).toBe('Compressed');
  });

  test('one fetch per feed, however many users subscribe to it', async () => {
    const before = fixture.requests.filter((r) => r.path === '/rss').length;
    await subscribed(['/rss']);
    await subscribed(['/rss']);
    await fetchAll();
    // One fetch for both new subscribers (what was fetched before them is not theirs to see), and no more.
    expect(fixture.requests.filter((r) => r.path === '/rss').length).toBe(before + 1);
    await fetchAll();
    expect(fixture.requests.filter((r) => r.path === '/rss').length).toBe(before + 1);
    const feeds = await t.db.query('SELECT count(*)::int AS n FROM feeds WHERE feed_url = $1', [fixture.url('/rss')]);
    expect(feeds.rows[0].n).toBe(1);
  });

  test('a feed not fetched yet answers with its URL and nulls; another user and unknown guids are 404, a deleted record 410', async () => {
    const { api, guidOf, u } = await subscribed(['/never-fetched', '/deleted']);
    // As the deletion job leaves it (the job itself is tested with DELETE).
    await t.db.query('UPDATE subscriptions SET deleted = now() WHERE user_id = $1 AND feed_url = $2', [
      u.id,
      fixture.url('/deleted'),
    ]);
    expectError(await api.get(`/v1/feeds/${guidOf('/deleted')}`), 410, 'Subscription has been deleted');
    const r = await api.get(`/v1/feeds/${guidOf('/never-fetched')}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ feed_url: fixture.url('/never-fetched'), title: null, last_fetch: null });
    const other = await t.user('other');
    expect((await as(t, other).get(`/v1/feeds/${guidOf('/never-fetched')}`)).status).toBe(404);
    expect((await api.get('/v1/feeds/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await api.get('/v1/feeds/not-a-guid')).status).toBe(405);
    expect(u.name).toMatch(/^feeds/);
    await fetchAll();
  });

  test("a person is shown what was fetched for them, never what another's earlier fetch learnt", async () => {
    const first = await subscribed(['/followed']);
    await fetchAll();
    expect((await first.api.get(`/v1/feeds/${first.guidOf('/followed')}`)).body.title).toBe('Followed');
    const fetched = fixture.requests.filter((r) => r.path === '/followed').length;
    // Right after subscribing, the second person is answered as for a feed not fetched yet.
    const second = await subscribed(['/followed']);
    const guid = second.guidOf('/followed');
    const nothingYet = {
      guid,
      feed_url: fixture.url('/followed'),
      title: null,
      description: null,
      link: null,
      artwork_url: null,
      author: null,
      language: null,
      podcast_guid: null,
      last_fetch: null,
    };
    expect((await second.api.get(`/v1/feeds/${guid}`)).body).toEqual(nothingYet);
    expect((await second.api.get('/v1/subscriptions.opml')).text).not.toContain('Followed');
    expect((await second.api.get(`/subscriptions/${second.u.name}.opml`)).text).not.toContain('Followed');
    expect((await first.api.get(`/v1/feeds/${first.guidOf('/followed')}`)).body.title).toBe('Followed');
    // The fetcher fetches the feed for them, as it would a feed nobody had; then they see what it learnt.
    await fetchAll();
    expect(fixture.requests.filter((r) => r.path === '/followed').length).toBe(fetched + 1);
    const theirs = (await second.api.get(`/v1/feeds/${guid}`)).body;
    expect(theirs.title).toBe('Followed');
    expect(Date.parse(theirs.last_fetch)).toBeGreaterThanOrEqual(Date.parse(second.since));
    expect((await second.api.get('/v1/subscriptions.opml')).text).toContain('title="Followed"');
  });

  test('a declared podcast:guid becomes the newest guid of the chain, visible with since', async () => {
    const { api, guidOf, since } = await subscribed(['/declares-guid']);
    const first = guidOf('/declares-guid');
    expect(first).toBe(podcastGuid(fixture.url('/declares-guid')));
    await fetchAll();
    const changed = await api.get(`/v1/subscriptions?since=${encodeURIComponent(since)}`);
    expect(changed.body.subscriptions).toEqual([
      expect.objectContaining({ guid: first, new_guid: DECLARED, guid_changed: expect.any(String) }),
    ]);
    // Fetching again changes nothing.
    await t.db.query('UPDATE feeds SET next_fetch_at = now()');
    await fetchAll();
    const after = await api.get(`/v1/subscriptions/${DECLARED}`);
    expect(after.body).toMatchObject({ guid: DECLARED, feed_url: fixture.url('/declares-guid') });
    expect(after.body.new_guid).toBeUndefined();
  });

  test('a guid the client sent is not replaced by the declared one', async () => {
    const u = await t.user('explicit');
    const mine = '3b5e6f1c-0d8a-4c52-9d0e-2f1a3b4c5d6e';
    await as(t, u).post('/v1/subscriptions', {
      subscriptions: [{ feed_url: fixture.url('/declares-guid'), guid: mine }],
    });
    await t.db.query('UPDATE feeds SET next_fetch_at = now()');
    await fetchAll();
    const r = await as(t, u).get(`/v1/subscriptions/${mine}`);
    expect(r.body.guid).toBe(mine);
    expect(r.body.new_guid).toBeUndefined();
  });

  test('a 301 then 308 chain moves the record: OPA sees the new URL, gpodder adds it and removes the old', async () => {
    const { u, api, guidOf, since } = await subscribed(['/r301']);
    const pulled = await api.get(`/api/2/subscriptions/${u.name}/phone.json?since=0`);
    expect(pulled.body.add).toEqual([fixture.url('/r301')]);
    await fetchAll();
    const record = await api.get(`/v1/subscriptions/${guidOf('/r301')}`);
    expect(record.body.feed_url).toBe(fixture.url('/moved-here'));
    const changed = await api.get(`/v1/subscriptions?since=${encodeURIComponent(since)}`);
    expect(changed.body.subscriptions).toEqual([expect.objectContaining({ feed_url: fixture.url('/moved-here') })]);
    const gp = await api.get(`/api/2/subscriptions/${u.name}/phone.json?since=${pulled.body.timestamp}`);
    expect(gp.body.add).toEqual([fixture.url('/moved-here')]);
    expect(gp.body.remove).toEqual([fixture.url('/r301')]);
    // The old URL still names the record.
    const again = await api.post('/v1/subscriptions', { subscriptions: [{ feed_url: fixture.url('/r301') }] });
    expect(again.body.success[0].guid).toBe(guidOf('/r301'));
    // The new home is a feed of its own, fetched in turn.
    await fetchAll();
    expect((await feedRow('/moved-here')).title).toBe('Moved feed');
  });

  test('itunes:new-feed-url moves the record; a temporary redirect does not', async () => {
    const { api, guidOf } = await subscribed(['/announces-move', '/temporary']);
    await fetchAll();
    const moved = await api.get(`/v1/subscriptions/${guidOf('/announces-move')}`);
    expect(moved.body.feed_url).toBe('https://new-home.example.org/feed.xml');
    const stayed = await api.get(`/v1/subscriptions/${guidOf('/temporary')}`);
    expect(stayed.body.feed_url).toBe(fixture.url('/temporary'));
    expect((await feedRow('/temporary')).title).toBe('Plain <b>RSS</b> & more');
  });

  test('an unchanged feed costs a 304: the validators are sent back and what was known stays', async () => {
    await subscribed(['/etag']);
    await fetchAll();
    expect((await feedRow('/etag')).title).toBe('Tagged');
    await t.db.query('UPDATE feeds SET next_fetch_at = now() WHERE feed_url = $1', [fixture.url('/etag')]);
    const hits = etagHits;
    const counts = await fetchAll();
    expect(etagHits).toBe(hits + 1);
    expect(counts.not_modified).toBe(1);
    const last = fixture.requests.filter((r) => r.path === '/etag').at(-1)!;
    expect(last.headers['if-none-match']).toBe('"v1"');
    expect(await feedRow('/etag')).toMatchObject({ title: 'Tagged', failures: 0 });
  });

  test('hostile and broken feeds are refused and recorded, and the other feeds of the batch are fetched', async () => {
    const bad = ['/big', '/slow', '/malformed', '/bomb', '/to-metadata', '/to-private', '/not-found'];
    await subscribed([...bad, '/atom']);
    await t.db.query('UPDATE feeds SET next_fetch_at = now() WHERE feed_url = $1', [fixture.url('/atom')]);
    const lines = captured.lines.length;
    const counts = await fetchAll();
    expect(counts.fetched).toBe(1);
    const errors = Object.fromEntries(
      await Promise.all(bad.map(async (p) => [p, (await feedRow(p)).last_error] as const)),
    );
    expect(errors).toEqual({
      '/big': expect.stringMatching(/over the limit of 10485760 bytes/),
      '/slow': expect.stringMatching(/no complete answer within 1000 ms/),
      '/malformed': expect.stringMatching(/not well-formed XML/),
      '/bomb': 'entity declarations are refused',
      '/to-metadata': expect.stringMatching(/refused address: linkLocal address 169\.254\.169\.254/),
      '/to-private': expect.stringMatching(/refused address: private address 10\.1\.2\.3/),
      '/not-found': 'HTTP 404',
    });
    for (const p of bad) {
      const row = await feedRow(p);
      expect(row).toMatchObject({ failures: 1, title: null });
      expect((row.next_fetch_at as Date).getTime()).toBeGreaterThan(Date.now() + 9 * 60_000);
    }
    const logged = captured.lines.slice(lines).filter((l) => l.msg === 'feed fetch failed');
    expect(logged.map((l) => l.feedUrl).sort()).toEqual(bad.map((p) => fixture.url(p)).sort());
    expect(logged.find((l) => l.feedUrl === fixture.url('/to-metadata'))).toMatchObject({ outcome: 'refused' });
  });

  test("a host's Retry-After is waited for (seconds, or a date by the host's own clock), at most a week", async () => {
    const paths = ['/busy', '/busy-for-a-year', '/busy-briefly', '/unavailable'];
    await subscribed(paths);
    await fetchAll();
    const waits = await t.db.query<{ feed_url: string; failures: number; last_error: string; wait: number }>(
      `SELECT feed_url, failures, last_error, extract(epoch FROM next_fetch_at - now())::int AS wait
         FROM feeds WHERE feed_url = ANY ($1)`,
      [paths.map((p) => fixture.url(p))],
    );
    const waitOf = (p: string) => waits.rows.find((r) => r.feed_url === fixture.url(p))!;
    expect(waitOf('/busy')).toMatchObject({ failures: 1, last_error: 'HTTP 429' });
    expect(waitOf('/busy').wait).toBeGreaterThan(7200 - 60);
    expect(waitOf('/busy').wait).toBeLessThanOrEqual(7200);
    expect(waitOf('/unavailable')).toMatchObject({ failures: 1, last_error: 'HTTP 503' });
    expect(waitOf('/unavailable').wait).toBeGreaterThan(3 * 3600 - 60);
    expect(waitOf('/unavailable').wait).toBeLessThanOrEqual(3 * 3600);
    // Never longer than the longest back-off; never shorter than the back-off either.
    expect(waitOf('/busy-for-a-year').wait).toBeLessThanOrEqual(7 * 24 * 3600);
    expect(waitOf('/busy-for-a-year').wait).toBeGreaterThan(7 * 24 * 3600 - 60);
    expect(waitOf('/busy-briefly').wait).toBeGreaterThan(540);
    expect(waitOf('/busy-briefly').wait).toBeLessThanOrEqual(600);
  });

  test('a feed scheduled later than the schedule ever sets (a clock that was ahead, a longer interval) is due again', async () => {
    await subscribed(['/far-ahead', '/tomorrow']);
    await fetchAll();
    // Fetched while the database's clock ran five years ahead; and one a day's refresh will fetch tomorrow.
    await t.db.query(`UPDATE feeds SET next_fetch_at = now() + interval '5 years' WHERE feed_url = $1`, [
      fixture.url('/far-ahead'),
    ]);
    await t.db.query(`UPDATE feeds SET next_fetch_at = now() + interval '20 hours' WHERE feed_url = $1`, [
      fixture.url('/tomorrow'),
    ]);
    const asked = (p: string) => fixture.requests.filter((r) => r.path === p).length;
    const [farBefore, tomorrowBefore] = [asked('/far-ahead'), asked('/tomorrow')];
    await fetchAll();
    expect(asked('/far-ahead')).toBe(farBefore + 1);
    expect(asked('/tomorrow')).toBe(tomorrowBefore);
    const next = await t.db.query<{ feed_url: string; wait: number }>(
      `SELECT feed_url, extract(epoch FROM next_fetch_at - now())::int AS wait FROM feeds WHERE feed_url = ANY ($1)`,
      [[fixture.url('/far-ahead'), fixture.url('/tomorrow')]],
    );
    const waitOf = (p: string) => next.rows.find((r) => r.feed_url === fixture.url(p))!.wait;
    expect(waitOf('/far-ahead')).toBeLessThanOrEqual(24 * 3600);
    expect(waitOf('/far-ahead')).toBeGreaterThan(23 * 3600);
    expect(waitOf('/tomorrow')).toBeLessThanOrEqual(20 * 3600);
    expect(waitOf('/tomorrow')).toBeGreaterThan(19 * 3600);
  });

  test("a private feed's password and token stay out of the fetcher's log, whether it fails or moves", async () => {
    const u = await t.user('private');
    const secretly = (p: string) =>
      fixture.url(p).replace('http://', 'http://listener:hunter2-pass@') + '?token=tok-42';
    const post = await as(t, u).post('/v1/subscriptions', {
      subscriptions: ['/not-found', '/r301'].map((p) => ({ feed_url: secretly(p) })),
    });
    expect(post.body.success).toHaveLength(2);
    const lines = captured.lines.length;
    await fetchAll();
    const written = captured.raw.slice(lines);
    const failed = captured.lines.slice(lines).find((l) => l.msg === 'feed fetch failed');
    const moved = captured.lines.slice(lines).find((l) => l.msg === 'feed moved');
    expect(failed?.feedUrl).toBe(fixture.url('/not-found').replace('http://', 'http://[redacted]@') + '?[redacted]');
    expect(moved?.movedTo).toBe(fixture.url('/moved-here').replace('http://', 'http://[redacted]@'));
    for (const secret of ['hunter2', 'listener', 'tok-42']) expect(written.join('\n')).not.toContain(secret);
  });

  test('OPML exports carry the titles and web pages the fetcher learnt, the URL where none is known', async () => {
    const { u, api } = await subscribed(['/rss', '/no-such-feed']);
    await fetchAll();
    for (const path of ['/v1/subscriptions.opml', `/subscriptions/${u.name}.opml`]) {
      const r = await api.get(path);
      expect(r.status).toBe(200);
      const text = r.text;
      expect(text).toContain(
        `<outline type="rss" text="Plain &lt;b&gt;RSS&lt;/b&gt; &amp; more" title="Plain &lt;b&gt;RSS&lt;/b&gt; &amp; more" xmlUrl="${fixture.url('/rss')}" htmlUrl="https://example.org/show"/>`,
      );
      const unknown = fixture.url('/no-such-feed');
      expect(text).toContain(`<outline type="rss" text="${unknown}" title="${unknown}" xmlUrl="${unknown}"/>`);
    }
  });
});

describe('finding new feeds after the requests', () => {
  const known = async (urls: string[]) =>
    (
      await t.db.query<{ feed_url: string }>('SELECT feed_url FROM feeds WHERE feed_url = ANY ($1::text[])', [urls])
    ).rows
      .map((r) => r.feed_url)
      .sort();

  test('a subscription writes nothing for the fetcher; its look finds the feed, and a PATCHed URL too', async () => {
    const { api, guidOf } = await subscribed(['/found-later']);
    expect(await known([fixture.url('/found-later')])).toEqual([]);
    expect(await discoverNewFeeds(t.db)).toBeGreaterThanOrEqual(1);
    expect(await known([fixture.url('/found-later')])).toEqual([fixture.url('/found-later')]);
    await api.patch(`/v1/subscriptions/${guidOf('/found-later')}`, { new_feed_url: fixture.url('/patched') });
    await discoverNewFeeds(t.db);
    expect(await known([fixture.url('/patched')])).toEqual([fixture.url('/patched')]);
    // Nothing changed since: a look finds nothing and writes nothing.
    await discoverNewFeeds(t.db);
    expect(await discoverNewFeeds(t.db)).toBe(0);
  });

  test('the looks keep their pace however often the fetcher asks: the first looks, then not before its time', async () => {
    // A pace of a minute, and the clock moved on by hand: however slow the machine, "at once" is within it.
    const look = pacedLooks(t.db, 60_000);
    await subscribed(['/paced-1']);
    await look();
    expect(await known([fixture.url('/paced-1')])).toEqual([fixture.url('/paced-1')]);
    await subscribed(['/paced-2']);
    // Asked again at once (as between the batches of a run): no look.
    await look();
    expect(await known([fixture.url('/paced-2')])).toEqual([]);
    const later = Date.now() + 61_000;
    const clock = jest.spyOn(Date, 'now').mockReturnValue(later);
    try {
      await look();
    } finally {
      clock.mockRestore();
    }
    expect(await known([fixture.url('/paced-2')])).toEqual([fixture.url('/paced-2')]);
  });

  test('nothing is missed while writers and looks interleave', async () => {
    const users = await Promise.all([t.user('w'), t.user('w'), t.user('w')]);
    const sent: string[] = [];
    let writing = true;
    const writers = users.map(async (u, w) => {
      for (let k = 0; k < 15; k++) {
        const urls = [0, 1].map((j) => `https://interleave.example/${w}/${k}/${j}.xml`);
        sent.push(...urls);
        await as(t, u).post('/v1/subscriptions', { subscriptions: urls.map((feed_url) => ({ feed_url })) });
      }
    });
    const looks = (async () => {
      while (writing) await discoverNewFeeds(t.db);
    })();
    await Promise.all(writers);
    writing = false;
    await looks;
    await discoverNewFeeds(t.db);
    expect(await known(sent)).toEqual([...sent].sort());
  });
});

describe('politeness', () => {
  test('a user with many subscriptions on one host gets at most the per-host limit of fetches at once', async () => {
    const slow = await feedServer({ '/many/*': xml(rss({ title: 'One of many' })) }, { delayMs: 15 });
    try {
      const u = await t.user('many');
      const feeds = Array.from({ length: 120 }, (_, i) => ({ feed_url: slow.url(`/many/${i}.xml`) }));
      expect((await as(t, u).post('/v1/subscriptions', { subscriptions: feeds })).status).toBe(200);
      const settings = { ...allowLoopback, concurrency: 8, perHost: 2 };
      const counts = await fetchAll(settings);
      expect(counts.fetched).toBe(120);
      expect(slow.mostOpen()).toBe(2);
    } finally {
      await slow.close();
    }
  });
});

describe('requests come first', () => {
  test('while requests keep the server busy, one fetch starts per turn; when they pause, the rest go', async () => {
    const server = http.createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const feeds = await feedServer({ '/busy/*': xml(rss({ title: 'Waits its turn' })) });
    let held: http.ClientRequest | undefined;
    try {
      const u = await t.user('busy');
      const urls = Array.from({ length: 6 }, (_, i) => ({ feed_url: feeds.url(`/busy/${i}.xml`) }));
      expect((await as(t, u).post('/v1/subscriptions', { subscriptions: urls })).status).toBe(200);
      // A request that stays in flight: its body never ends until the test sends the rest.
      const port = (server.address() as net.AddressInfo).port;
      held = http.request({
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/v1/subscriptions',
        headers: { authorization: u.basic, 'content-type': 'application/json', 'content-length': '20' },
      });
      const answered = new Promise<number>((resolve) => held!.on('response', (r) => resolve(r.statusCode!)));
      held.write('{"subscriptions"');
      await new Promise((r) => setTimeout(r, 1100));
      expect(t.foreground.busy()).toBe(true);

      const fetching = fetchDueFeeds({ db: t.db, logger: captured.logger }, allowLoopback, {
        foreground: t.foreground,
      });
      // The first turn starts one fetch; the next comes 2 s later.
      const until = Date.now() + 6000;
      while (feeds.requests.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 1000));
      expect(feeds.requests).toHaveLength(1);

      held.end(':[]}');
      expect(await answered).toBe(200);
      expect((await fetching).fetched).toBe(6);
      expect(feeds.requests).toHaveLength(6);
    } finally {
      held?.destroy();
      await feeds.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('the default configuration', () => {
  test('never connects to a loopback or private address, however the URL spells it', async () => {
    const watched = await feedServer({ '/*': xml(rss({ title: 'Should never be read' })) });
    try {
      const u = await t.user('ssrf');
      const port = watched.port;
      const urls = [
        `http://127.0.0.1:${port}/feed`,
        `http://localhost:${port}/feed`,
        `http://[::1]:${port}/feed`,
        `http://[::ffff:127.0.0.1]:${port}/feed`,
        `http://2130706433:${port}/feed`,
        `http://0177.0.0.1:${port}/feed`,
        `http://0x7f000001:${port}/feed`,
        `http://127.1:${port}/feed`,
        `http://0.0.0.0:${port}/feed`,
        `http://10.0.0.1:${port}/feed`,
        `http://192.168.1.1:${port}/feed`,
        `http://169.254.169.254/latest/meta-data/`,
      ];
      const post = await as(t, u).post('/v1/subscriptions', { subscriptions: urls.map((feed_url) => ({ feed_url })) });
      expect(post.body.success).toHaveLength(urls.length);
      // The decimal, octal, hex and short spellings of 127.0.0.1 are one feed (URLs match by their parsed host).
      const distinct = 8;
      const defaults = fetcherSettings(loadConfig({}, { dotenvFile: false }));
      const counts = await fetchAll(defaults);
      expect(counts).toEqual({ refused: distinct });
      expect(watched.connections()).toBe(0);
      const rows = await t.db.query<{ last_error: string }>(
        'SELECT last_error FROM feeds WHERE feed_url = ANY ($1::text[])',
        [urls],
      );
      expect(rows.rows.map((r) => r.last_error)).toEqual(
        Array.from({ length: distinct }, () => expect.stringMatching(/^refused address: /)),
      );
    } finally {
      await watched.close();
    }
  });
});

describe('finding new feeds in bounded steps', () => {
  test('a user who imported thousands of feeds in one write is looked at in steps, and every feed is found', async () => {
    const u = await t.user('import');
    const urls = Array.from({ length: 4500 }, (_, k) => `https://steps.example/${k}.xml`);
    for (let i = 0; i < urls.length; i += 1000) {
      const r = await as(t, u).post('/v1/subscriptions', {
        subscriptions: urls.slice(i, i + 1000).map((feed_url) => ({ feed_url })),
      });
      expect(r.status).toBe(200);
    }
    // One write stamps many records alike: steps of 2,000 cut through a stamp and lose none of it.
    await t.db.query('UPDATE subscriptions SET subscription_changed = $2 WHERE user_id = $1', [u.id, new Date()]);
    await t.db.query('UPDATE users SET last_change = $2 WHERE id = $1', [u.id, new Date(Date.now() + 1000)]);
    let looks = 0;
    for (;;) {
      looks++;
      await discoverNewFeeds(t.db);
      const n = await t.db.query(`SELECT count(*)::int AS n FROM feeds WHERE feed_url LIKE 'https://steps.example/%'`);
      if (n.rows[0].n === urls.length || looks > 5) break;
    }
    expect(looks).toBe(3);
  });
});

describe('hostile items', () => {
  const withItems = (items: string) => rss({ title: 'Hostile items' }).replace(/<item>.*<\/item>/, items);
  const itemsOf = async (url: string) =>
    (
      await t.db.query<{ item_key: string; guid: string | null; published_at: Date | null }>(
        `SELECT i.item_key, i.guid, i.published_at FROM feed_items i JOIN feeds f ON f.url_hash = i.feed_hash
          WHERE f.feed_url = $1 ORDER BY i.ord`,
        [url],
      )
    ).rows;

  /** Serves the feed, subscribes to it and runs the fetcher: its counts, and the feed's row and items. */
  async function fetchedOnce(items: string) {
    const server = await feedServer({ '/feed': xml(withItems(items)) });
    try {
      const u = await t.user('hostile');
      const url = server.url('/feed');
      expect((await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: url }] })).status).toBe(200);
      // This feed alone: the earlier tests' feeds on hosts that do not exist wait.
      await discoverNewFeeds(t.db);
      await t.db.query(
        `UPDATE feeds SET next_fetch_at = now() + interval '1 day' WHERE next_fetch_at <= now() AND feed_url <> $1`,
        [url],
      );
      const counts = await fetchAll();
      const row = (await t.db.query('SELECT * FROM feeds WHERE feed_url = $1', [url])).rows[0];
      return { counts, row, items: await itemsOf(url) };
    } finally {
      await server.close();
    }
  }

  test('an item known by a guid too long to index is known by its enclosure URL; one with no short key is skipped', async () => {
    // 2,000 different CJK characters: 6,000 bytes that do not compress, over a btree entry's 2,704.
    const long = Array.from({ length: 2000 }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 20000))).join('');
    const { counts, row, items } = await fetchedOnce(
      `<item><guid>${long}</guid><enclosure url="https://e.example/long-guid.mp3"/></item>
       <item><guid>${long.slice(1)}</guid></item>
       <item><enclosure url="https://e.example/${long.slice(0, 1500)}.mp3"/></item>
       <item><guid>short</guid></item>`,
    );
    expect(counts).toEqual({ fetched: 1 });
    expect(row).toMatchObject({ title: 'Hostile items', failures: 0 });
    expect(items.map((i) => [i.item_key, i.guid])).toEqual([
      ['https://e.example/long-guid.mp3', long],
      ['short', 'short'],
    ]);
  });

  test('a publication date PostgreSQL cannot store counts as no date: the feed and its other items are kept', async () => {
    const { counts, row, items } = await fetchedOnce(
      `<item><guid>far-future</guid><pubDate>Sat, 01 Jan 10000 00:00:00 GMT</pubDate></item>
       <item><guid>year-zero</guid><pubDate>0000-01-01T00:00:00Z</pubDate></item>
       <item><guid>dated</guid><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate></item>`,
    );
    expect(counts).toEqual({ fetched: 1 });
    expect(row).toMatchObject({ title: 'Hostile items', failures: 0 });
    expect(items.map((i) => [i.item_key, i.published_at?.toISOString() ?? null])).toEqual([
      ['far-future', null],
      ['year-zero', null],
      ['dated', '2024-01-01T00:00:00.000Z'],
    ]);
  });

  test("what the database refuses of a feed (any other such item) is that feed's failure, with its back-off; the run goes on", async () => {
    // A refusal no check foresaw, played by a trigger: PostgreSQL refuses this one item as it would a value
    // out of range.
    await t.db.query(`CREATE FUNCTION refuse_item() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.item_key = 'refused' THEN RAISE EXCEPTION 'value out of range' USING ERRCODE = '22003'; END IF;
        RETURN NEW;
      END $$`);
    await t.db.query(
      'CREATE TRIGGER refuse_item BEFORE INSERT ON feed_items FOR EACH ROW EXECUTE FUNCTION refuse_item()',
    );
    try {
      const { counts, row, items } = await fetchedOnce(`<item><guid>refused</guid></item>`);
      expect(counts).toEqual({ failed: 1 });
      expect(row).toMatchObject({ failures: 1, last_error: 'could not be stored: value out of range' });
      expect(row.next_fetch_at.getTime()).toBeGreaterThan(Date.now() + 60_000);
      expect(items).toEqual([]);
    } finally {
      await t.db.query('DROP TRIGGER refuse_item ON feed_items');
      await t.db.query('DROP FUNCTION refuse_item()');
    }
  });
});
