import pino from 'pino';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as } from '../helpers/app';
import { audio, wav } from '../helpers/audio';
import { browserWorld, check } from '../helpers/browser';
import { feedServer, xml } from '../helpers/feed-server';

// Show notes in Chromium: a feed's hostile markup runs nothing (no dialog opens, no handler is left), and
// a time in the notes seeks the player.

const LOOPBACK = { FEED_FETCH_ALLOW_CIDRS: '127.0.0.1/32' };
const world = browserWorld(() => LOOPBACK);
let server: Awaited<ReturnType<typeof feedServer>>;

const NOTES = `<h2>About this episode</h2><p>Hello listeners.</p><script>alert(1)</script>
  <img src=x onerror=alert(1)><p><a href="javascript:alert(1)">x</a> and <a href="https://example.org/guest">our guest</a>.</p>
  <ul><li>0:42 The interview</li><li>0:50 Goodbye</li></ul>`;
const feed = () => `<?xml version="1.0"?><rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
  <channel><title>Notes Radio</title>
    <item><guid>n-1</guid><title>With notes</title><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
      <enclosure url="${server.url('/talk.wav')}" type="audio/wav"/>
      <content:encoded><![CDATA[${NOTES}]]></content:encoded></item>
  </channel></rss>`;

beforeAll(async () => {
  server = await feedServer({ '/talk.wav': audio(wav(60)), '/feed': (req, res) => xml(feed())(req, res) });
});
afterAll(() => server?.close());

test("the notes' hostile markup runs nothing; a time in them seeks the player", async () => {
  const { t } = world;
  const u = await t.user('notes-listener');
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/feed') }] });
  await fetchDueFeeds(
    { db: t.db, logger: pino({ level: 'silent' }) },
    fetcherSettings(loadConfig(LOOPBACK, { dotenvFile: false })),
  );
  const id = (await t.db.query("SELECT id::text AS id FROM feed_items WHERE title = 'With notes'")).rows[0].id;

  const page = await world.newPage();
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
  await world.signIn(page, u, `/web/episodes/${id}`);
  await page.waitForSelector('#notes a.seek');
  expect(await page.$eval('#notes', (s) => s.querySelectorAll('script, [onerror], [href^="javascript:"]').length)).toBe(
    0,
  );
  expect(await page.$eval('#notes a[href="https://example.org/guest"]', (a) => a.getAttribute('rel'))).toBe(
    'noopener nofollow ugc',
  );
  await check(page, 'show-notes-phone');

  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  await page.click('#notes a.seek[data-seek="42"]');
  await page.waitForFunction('Math.round(document.getElementById("player").currentTime) >= 42');
  // The link's default (a fragment) was not followed: the script seeks instead.
  expect(await page.evaluate('location.hash')).toBe('');
  expect(dialogs).toEqual([]);
});
