import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { MAX_NOTES } from '../../src/feeds/notes';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { feedServer, xml } from '../helpers/feed-server';
import { capturedLogger } from '../helpers/logs';
import { signedInAgent } from '../helpers/web';

// Show notes: the fetcher keeps each item's (content:encoded, else description, else itunes:summary),
// bounded; the episode page shows them sanitised, its times as links that seek the player, and the
// episode's artwork (else the podcast's).

let t: TestApp;
let server: Awaited<ReturnType<typeof feedServer>>;
const settings = fetcherSettings(loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, { dotenvFile: false }));

const media = (n: string) => `https://media.example.org/${n}.mp3`;
const HOSTILE = `<p>Hello listeners.</p><script>alert(1)</script><img src=x onerror=alert(1)>
  <a href="javascript:alert(1)">x</a> <a href="https://example.org/guest" target="_blank" onclick="alert(1)">Our guest</a>
  <p>At 12:34 the news, at 1:02:03 the end.</p>`;
const item = (guid: string, notes: string, extra = '') =>
  `<item><guid>${guid}</guid><title>${guid}</title><enclosure url="${media(guid)}" type="audio/mpeg"/>${notes}${extra}</item>`;
const feed = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel><title>Notes Show</title><itunes:image href="https://example.org/show.jpg"/>
${item('hostile', `<description>Short</description><content:encoded><![CDATA[${HOSTILE}]]></content:encoded>`)}
${item('escaped', '<description>&lt;p&gt;Escaped &amp;amp; kept a&#0;b&lt;/p&gt;</description>', '<itunes:image href="https://example.org/escaped.jpg"/>')}
${item('summary', '<itunes:summary>Only a summary</itunes:summary>')}
${item('huge', `<description><![CDATA[<p>${'word '.repeat(MAX_NOTES / 2)}</p>]]></description>`)}
${item('none', '')}
</channel></rss>`;

let u: TestUser;
beforeAll(async () => {
  t = await testApp();
  server = await feedServer({ '/feed': xml(feed) });
  u = await t.user('notes-reader');
  const posted = await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/feed') }] });
  expect(posted.status).toBe(200);
  await fetchDueFeeds({ db: t.db, logger: capturedLogger('warn').logger }, settings);
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

const notesOf = async (guid: string) =>
  (
    await t.db.query<{ id: string; notes: string | null }>(
      'SELECT id::text AS id, notes FROM feed_items WHERE guid = $1',
      [guid],
    )
  ).rows[0]!;
const page = async (guid: string) => {
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const res = await agent.get(`/web/episodes/${(await notesOf(guid)).id}`);
  expect(res.status).toBe(200);
  return res.text;
};

test('the fetcher keeps content:encoded, else description (unescaped, cleaned), else itunes:summary', async () => {
  expect((await notesOf('hostile')).notes).toBe(HOSTILE.trim());
  expect((await notesOf('escaped')).notes).toBe('<p>Escaped &amp; kept ab</p>');
  expect((await notesOf('summary')).notes).toBe('Only a summary');
  expect((await notesOf('none')).notes).toBeNull();
});

test('notes longer than the bound are cut to it, between words of markup, and still shown', async () => {
  const { notes } = await notesOf('huge');
  expect(notes!.length).toBeLessThanOrEqual(MAX_NOTES);
  expect(notes!.length).toBeGreaterThan(MAX_NOTES - 10);
  expect(notes!.startsWith('<p>word word')).toBe(true);
  expect(await page('huge')).toMatch(/<section id="notes"[^>]*>[\s\S]*<p>word word/);
});

test('the episode page shows the notes sanitised: text and a safe link, no script, handler or javascript: URL', async () => {
  const html = await page('hostile');
  const notes = /<section id="notes"[\s\S]*?<\/section>/.exec(html)![0];
  expect(notes).toContain('<p>Hello listeners.</p>');
  expect(notes).toContain('<a href="https://example.org/guest" rel="noopener nofollow ugc">Our guest</a>');
  expect(notes).not.toContain('target=');
  expect(notes).not.toContain('src="x"');
  expect(html).not.toMatch(/<script(?! src="\/static\/)/);
  expect(html).not.toMatch(/onerror|onclick|javascript:/i);
  expect(html).not.toContain('alert(1)');
});

test('times in the notes become links that seek the player', async () => {
  const html = await page('hostile');
  expect(html).toContain('<a href="#t=754" class="seek" data-seek="754">12:34</a>');
  expect(html).toContain('<a href="#t=3723" class="seek" data-seek="3723">1:02:03</a>');
});

/** The episode page's <img> of the artwork at `url`: castsync's thumbnail, 160 px and 320 for 2x. */
const artworkImg = (url: string, alt: string) => {
  const thumb = (w: number) => `/web/artwork?u=${encodeURIComponent(url)}&amp;w=${w}`;
  return `<img class="artwork" src="${thumb(160)}" srcset="${thumb(160)} 1x, ${thumb(320)} 2x" alt="${alt}"`;
};

test("the page shows the episode's artwork, else the podcast's, with alt text; no notes, no section", async () => {
  expect(await page('escaped')).toContain(artworkImg('https://example.org/escaped.jpg', 'Artwork of escaped'));
  const html = await page('none');
  expect(html).toContain(artworkImg('https://example.org/show.jpg', 'Artwork of Notes Show'));
  expect(html).not.toContain('id="notes"');
});
