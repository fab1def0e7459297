import sharp from 'sharp';
import request from 'supertest';
import type http from 'node:http';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { MAX_ARTWORK_BYTES } from '../../src/feeds/artwork';
import { as, testApp, type TestApp } from '../helpers/app';
import { feedServer, xml } from '../helpers/feed-server';
import { capturedLogger } from '../helpers/logs';
import { signedInAgent } from '../helpers/web';

// Artwork thumbnails: the web page shows a feed's artwork through castsync, which fetches an artwork URL a
// feed or item names (no other) once, under the fetcher's address policy and a size cap, resizes it to a
// few widths as WebP and keeps them in the database; what cannot be had is answered by a redirect to the
// artwork itself. A loopback server serves the artwork, allowed as a home network would be, and counts
// the requests; a second app, with the default policy, shows loopback refused.

const LOOPBACK = { FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' };
const captured = capturedLogger('warn');

let t: TestApp;
let art: Awaited<ReturnType<typeof feedServer>>;
let show: Awaited<ReturnType<typeof feedServer>>;
let web: Awaited<ReturnType<typeof signedInAgent>>;
let png: Buffer;

const image =
  (body: Buffer, type = 'image/png') =>
  (_req: http.IncomingMessage, res: http.ServerResponse) =>
    res.writeHead(200, { 'content-type': type }).end(body);
const served = (path: string) => art.requests.filter((r) => r.path === path).length;
/** The artwork at `path` named by a feed in another app's database: its URL. */
async function knownIn(app: TestApp, path: string): Promise<string> {
  const url = art.url(path);
  await app.db.query(`INSERT INTO feeds (url_hash, feed_url, artwork_url) VALUES (gen_random_uuid(), $1, $2)`, [
    `https://example.org/feed${path}`,
    url,
  ]);
  return url;
}
const thumb = (url: string, w: number) => `/web/artwork?u=${encodeURIComponent(url)}&w=${w}`;

const feed = (a: (p: string) => string) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Pictured</title>
<itunes:image href="${a('/show.png')}"/>
${['episode', 'page', 'huge', 'declared', 'broken', 'far']
  .map(
    (n) => `<item><guid>${n}</guid><title>${n}</title><itunes:image href="${a(`/${n}.png`)}"/>
      <enclosure url="https://media.example.org/${n}.mp3" type="audio/mpeg"/></item>`,
  )
  .join('\n')}
<item><guid>plain</guid><title>plain</title><enclosure url="https://media.example.org/plain.mp3" type="audio/mpeg"/></item>
</channel></rss>`;

beforeAll(async () => {
  png = await sharp({ create: { width: 1400, height: 1400, channels: 3, background: { r: 200, g: 40, b: 90 } } })
    .png()
    .toBuffer();
  t = await testApp(LOOPBACK);
  art = await feedServer({
    '/show.png': image(png),
    '/episode.png': image(png, 'image/jpeg; charset=binary'),
    '/page.png': image(Buffer.from('<html><body>Not found</body></html>'), 'text/html'),
    '/huge.png': image(Buffer.alloc(MAX_ARTWORK_BYTES + 1)),
    '/declared.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png', 'content-length': 1e9 }).end(),
    '/broken.png': image(png.subarray(0, 200)),
    '/other.png': image(png),
  });
  show = await feedServer({ '/feed': xml(feed(art.url)) });
  const u = await t.user('viewer');
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: show.url('/feed') }] });
  await fetchDueFeeds(
    { db: t.db, logger: captured.logger },
    fetcherSettings(loadConfig(LOOPBACK, { dotenvFile: false })),
  );
  web = await signedInAgent(t.app, u.name, u.password);
});

afterAll(async () => {
  await art.close();
  await show.close();
  await t.close();
});

describe('a known artwork URL', () => {
  it('becomes a WebP of the width asked for, fetched once and then served from the database', async () => {
    const url = art.url('/show.png');
    const r = await web.agent.get(thumb(url, 320)).buffer(true);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('image/webp');
    expect(r.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
    expect(r.headers.etag).toMatch(/^"[\w-]+"$/);
    const meta = await sharp(r.body as Buffer).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 320, 320]);
    expect(served('/show.png')).toBe(1);

    // Another width was made from the same fetch; the same width again is the same image.
    const small = await web.agent.get(thumb(url, 112)).buffer(true);
    expect((await sharp(small.body as Buffer).metadata()).width).toBe(112);
    const again = await web.agent.get(thumb(url, 320)).buffer(true);
    expect(Buffer.compare(again.body as Buffer, r.body as Buffer)).toBe(0);
    expect(again.headers.etag).toBe(r.headers.etag);
    expect(served('/show.png')).toBe(1);
    const rows = await t.db.query('SELECT width FROM artwork_thumbnails WHERE url = $1 ORDER BY width', [url]);
    expect(rows.rows.map((x) => x.width)).toEqual([56, 112, 160, 320]);
  });

  it('is not sent again to a browser that has it (If-None-Match)', async () => {
    const url = art.url('/show.png');
    const first = await web.agent.get(thumb(url, 56));
    const r = await web.agent.get(thumb(url, 56)).set('If-None-Match', first.headers.etag!);
    expect(r.status).toBe(304);
    // Nor to a cache that revalidates for a reload (Cache-Control: no-cache), with its tag weak or in a list.
    for (const inm of [first.headers.etag!, `W/${first.headers.etag}`, `"other", ${first.headers.etag}`]) {
      const again = await web.agent.get(thumb(url, 56)).set('If-None-Match', inm).set('Cache-Control', 'no-cache');
      expect({ inm, status: again.status }).toEqual({ inm, status: 304 });
    }
  });

  it("an item's artwork too, whatever parameters its type has", async () => {
    const r = await web.agent.get(thumb(art.url('/episode.png'), 160)).buffer(true);
    expect(r.status).toBe(200);
    expect((await sharp(r.body as Buffer).metadata()).width).toBe(160);
  });

  it('is asked for only at the widths made (400)', async () => {
    const r = await web.agent.get(thumb(art.url('/show.png'), 1000));
    expect(r.status).toBe(400);
  });

  it('is shown only to a signed-in browser', async () => {
    const r = await request(t.app)
      .get(thumb(art.url('/show.png'), 56))
      .redirects(0);
    expect(r.status).not.toBe(200);
    expect(r.headers['content-type']).not.toBe('image/webp');
  });

  it('is kept by no shared cache when its answer signs the browser in (a trusted proxy)', async () => {
    const proxied = await testApp({
      ...LOOPBACK,
      TRUSTED_AUTH_HEADER: 'Remote-User',
      TRUSTED_PROXIES: '127.0.0.1, ::1',
    });
    try {
      const u = await proxied.user('proxied');
      const url = await knownIn(proxied, '/show.png');
      const r = await request(proxied.app).get(thumb(url, 56)).set('Remote-User', u.name);
      expect(r.status).toBe(200);
      expect(r.headers['set-cookie']).toBeDefined();
      expect(r.headers['cache-control']).toMatch(/^private, /);
    } finally {
      await proxied.close();
    }
  });
});

describe('what castsync does not fetch', () => {
  it('an address no feed or item names: 404, never fetched', async () => {
    const r = await web.agent.get(thumb(art.url('/other.png'), 112));
    expect(r.status).toBe(404);
    expect(served('/other.png')).toBe(0);
    expect((await web.agent.get(thumb('javascript:alert(1)', 112))).status).toBe(404);
  });

  it('a private address when the policy refuses it: the artwork itself instead, never fetched', async () => {
    const strict = await testApp();
    try {
      const u = await strict.user('strict');
      const url = await knownIn(strict, '/other.png');
      const agent = (await signedInAgent(strict.app, u.name, u.password)).agent;
      const r = await agent.get(thumb(url, 112)).redirects(0);
      expect(r.status).toBe(302);
      expect(r.headers.location).toBe(url);
      expect(served('/other.png')).toBe(0);
      const kept = await strict.db.query('SELECT DISTINCT error FROM artwork_thumbnails WHERE url = $1', [url]);
      expect(kept.rows).toEqual([{ error: expect.stringMatching(/^refused address: loopback address 127\.0\.0\.1/) }]);
    } finally {
      await strict.close();
    }
  });
});

describe('artwork that cannot be had: a redirect to the artwork itself, kept so that it is not fetched again at once', () => {
  it.each([
    ['a page, not an image', '/page.png'],
    ['a body over the size cap', '/huge.png'],
    ['a body declared over the size cap', '/declared.png'],
    ['an image that cannot be read', '/broken.png'],
  ])('%s', async (_what, path) => {
    const url = art.url(path);
    for (const w of [320, 56]) {
      const r = await web.agent.get(thumb(url, w)).redirects(0);
      expect(r.status).toBe(302);
      expect(r.headers.location).toBe(url);
    }
    expect(served(path)).toBe(1);
  });

  it('a navigation to it (a link someone sent, not an image of a page) is not sent on to the artwork: 404', async () => {
    const url = art.url('/page.png');
    const asImage = await web.agent.get(thumb(url, 56)).set('Sec-Fetch-Mode', 'no-cors').redirects(0);
    expect(asImage.status).toBe(302);
    const opened = await web.agent
      .get(thumb(url, 56))
      .set({ 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document' })
      .redirects(0);
    expect(opened.status).toBe(404);
    expect(opened.headers.location).toBeUndefined();
  });
});

describe('the pages', () => {
  it("show the thumbnails: the episode's page at 160 px with 320 for 2x, the rows at 56 with 112", async () => {
    const id = (await t.db.query(`SELECT id::text FROM feed_items WHERE guid = 'episode'`)).rows[0].id as string;
    const page = (await web.agent.get(`/web/episodes/${id}`)).text;
    const url = art.url('/episode.png');
    const escaped = (s: string) => s.replace(/&/g, '&amp;');
    expect(page).toContain(
      `src="${escaped(thumb(url, 160))}" srcset="${escaped(thumb(url, 160))} 1x, ${escaped(thumb(url, 320))} 2x"`,
    );
    expect(page).not.toContain(`src="${url}"`);

    const list = (await web.agent.get('/web/subscriptions')).text;
    expect(list).toContain(`src="${escaped(thumb(art.url('/show.png'), 56))}"`);
    expect(list).toContain(`${escaped(thumb(art.url('/show.png'), 112))} 2x`);
  });
});
