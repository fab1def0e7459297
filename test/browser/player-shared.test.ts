import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as } from '../helpers/app';
import { audio, wav } from '../helpers/audio';
import { browserWorld, submit } from '../helpers/browser';
import { feedServer, xml } from '../helpers/feed-server';

// The player in a browser that more than one person uses, or while it plays on between pages.

const world = browserWorld();
let server: Awaited<ReturnType<typeof feedServer>>;

const feed = () => `<?xml version="1.0"?><rss version="2.0">
  <channel><title>Shared Radio</title>
    <item><guid>s-2</guid><title>Second</title><pubDate>Tue, 02 Jan 2024 10:00:00 GMT</pubDate>
      <enclosure url="${server.url('/second.wav')}" type="audio/wav"/></item>
    <item><guid>s-1</guid><title>First</title><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
      <enclosure url="${server.url('/first.wav')}" type="audio/wav"/></item>
  </channel></rss>`;

beforeAll(async () => {
  server = await feedServer({
    '/first.wav': audio(wav(20)),
    '/second.wav': audio(wav(20)),
    '/feed': (req, res) => xml(feed())(req, res),
  });
});
afterAll(() => server?.close());

/** The user subscribes to the feed, and it is fetched (once: after that it is not due). */
async function subscribe(api: ReturnType<typeof as>) {
  await api.post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/feed') }] });
  await fetchDueFeeds(
    { db: world.t.db, logger: pino({ level: 'silent' }) },
    fetcherSettings(loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.1/32' }, { dotenvFile: false })),
  );
}

const itemId = async (title: string) =>
  (await world.t.db.query<{ id: string }>('SELECT id::text AS id FROM feed_items WHERE title = $1', [title])).rows[0]!
    .id;

test('a position kept offline by one person is never written into the account of the next one to sign in on that browser', async () => {
  const { t, origin } = world;
  const alice = await t.user('shared-a');
  const bob = await t.user('shared-b');
  await subscribe(as(t, alice));
  await subscribe(as(t, bob));
  const [first, second] = [await itemId('First'), await itemId('Second')];

  // Alice plays First offline: the position waits in the browser.
  const page = await world.newPage();
  await world.signIn(page, alice, `/web/episodes/${first}`);
  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  await page.evaluate('document.getElementById("player").currentTime = 5');
  await page.setOfflineMode(true);
  await page.evaluate('document.getElementById("player").play()');
  await page.waitForFunction('document.getElementById("player").currentTime >= 6.5', { timeout: 15_000 });
  await page.evaluate('document.getElementById("player").pause()');
  await page.waitForFunction('document.getElementById("player-status").textContent.includes("kept in this browser")');
  // She leaves the player page before the browser is back online, then signs out elsewhere.
  await page.goto('about:blank');
  await page.setOfflineMode(false);
  await page.goto(`${origin}/web/account`);
  expect(await submit(page, 'form[action="/web/sign-out"] button')).toBe(200);

  // Bob signs in on the same browser and opens an episode of the same feed.
  await world.signIn(page, bob, `/web/episodes/${second}`);
  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  await new Promise((r) => setTimeout(r, 1500));
  const bobs = (await as(t, bob).get(`/api/2/episodes/${bob.name}.json?since=0`)).body.actions as unknown[];
  expect(bobs).toEqual([]);

  // Alice, back on this browser, gets her position after all.
  await page.goto(`${origin}/web/account`);
  await submit(page, 'form[action="/web/sign-out"] button');
  await world.signIn(page, alice, `/web/episodes/${second}`);
  await page.waitForFunction('JSON.parse(localStorage.getItem("castsync-pending-positions") ?? "[]").length === 0', {
    timeout: 10_000,
  });
  const alices = (await as(t, alice).get(`/api/2/episodes/${alice.name}.json?since=0`)).body.actions as {
    episode: string;
    position: number;
  }[];
  expect(alices.map((a) => a.episode)).toEqual([server.url('/first.wav')]);
  expect(alices[0]!.position).toBeGreaterThanOrEqual(6);
}, 60_000);

/** The user's page of First, playing; then Subscriptions, loaded in place with the player in its bar. */
async function playingOnSubscriptions(name: string) {
  const { t } = world;
  const u = await t.user(name);
  const api = as(t, u);
  await subscribe(api);
  const page = await world.newPage();
  await world.signIn(page, u, `/web/episodes/${await itemId('First')}`);
  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  await page.evaluate('document.getElementById("player").play()');
  await page.waitForFunction('document.getElementById("player").currentTime > 0.5');
  await page.click('nav a[href="/web/subscriptions"]');
  await page.waitForFunction('document.querySelector("main h1").textContent === "Subscriptions"');
  expect(await page.$('#now-playing')).not.toBeNull();
  return { api, page };
}

test('while an episode plays on between pages, unsubscribing from a feed with episodes in Up next asks about them', async () => {
  const { api, page } = await playingOnSubscriptions('wander-unsubscribe');
  await api.post('/v1/queue/items', { podcast_url: server.url('/feed'), enclosure_url: server.url('/second.wav') });
  await page.click('button[aria-label="Unsubscribe from Shared Radio"]');
  await page.waitForFunction('document.querySelector("main h1")?.textContent === "Keep its episodes in Up next?"', {
    timeout: 5_000,
  });
  const subscribed = (await api.get('/v1/subscriptions')).body.subscriptions as { is_subscribed: boolean }[];
  expect(subscribed.map((s) => s.is_subscribed)).toEqual([false]);
}, 60_000);

test('while an episode plays on between pages, an OPML file imported on Subscriptions is imported', async () => {
  const { api, page } = await playingOnSubscriptions('wander-opml');
  const file = path.join(tmpdir(), `castsync-wander-${process.pid}.opml`);
  writeFileSync(
    file,
    '<?xml version="1.0"?><opml version="2.0"><head/><body><outline type="rss" text="Other" xmlUrl="https://example.org/other.xml"/></body></opml>',
  );
  const input = await page.$('#opml');
  await (input as unknown as { uploadFile: (f: string) => Promise<void> }).uploadFile(file);
  await page.click('form[action="/web/opml"] button');
  await page.waitForFunction(
    '[...document.querySelectorAll("main .notice")].some((n) => n.textContent === "Imported 1 of 1 feeds.")',
    { timeout: 5_000 },
  );
  const urls = ((await api.get('/v1/subscriptions')).body.subscriptions as { feed_url: string }[]).map(
    (s) => s.feed_url,
  );
  expect(urls).toContain('https://example.org/other.xml');
}, 60_000);

test('"Mark played" on an episode opened with Play does not start it again from the beginning', async () => {
  const { t } = world;
  const u = await t.user('mark-after-play');
  await subscribe(as(t, u));
  const first = await itemId('First');
  const page = await world.newPage();
  await world.signIn(page, u, `/web/episodes/${first}?play=1`);
  await page.waitForFunction(
    '!document.getElementById("player").paused && document.getElementById("player").currentTime > 0.5',
  );
  await page.evaluate('document.getElementById("player").pause()');
  expect(await submit(page, `form[action="/web/episodes/${first}/played"] button`)).toBe(200);
  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  await new Promise((r) => setTimeout(r, 1500));
  expect(await page.evaluate('document.getElementById("player").paused')).toBe(true);
  expect(await page.$(`form[action="/web/episodes/${first}/played"]`)).toBeNull();
  expect(new URL(page.url()).pathname).toBe(`/web/episodes/${first}`);
}, 60_000);
