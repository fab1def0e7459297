import pino from 'pino';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as } from '../helpers/app';
import { audio, wav } from '../helpers/audio';
import { browserWorld, check, submit, text } from '../helpers/browser';
import { feedServer, xml } from '../helpers/feed-server';

// Chapters and a transcript in Chromium, on a phone's width and at a desk: the chapter list jumps and
// names the chapter on the lock screen, the transcript follows playback and is searched; the skip lengths
// chosen on the account page are the player's. The documents come from a loopback server through castsync.

const LOOPBACK = { FEED_FETCH_ALLOW_CIDRS: '127.0.0.1/32' };
const world = browserWorld(() => LOOPBACK);
let server: Awaited<ReturnType<typeof feedServer>>;

const CHAPTERS = {
  version: '1.2.0',
  chapters: [
    { startTime: 0, title: 'Welcome' },
    { startTime: 20, title: 'The interview', url: 'https://example.org/guest' },
    { startTime: 40, title: 'Goodbye' },
  ],
};
const VTT = `WEBVTT

00:00:00.000 --> 00:00:10.000
<v Host>Welcome to the show.

00:00:10.000 --> 00:00:25.000
<v Guest>Thanks for having me on the show.

00:00:25.000 --> 00:00:40.000
<v Host>Tell us about gardening.

00:00:40.000 --> 00:01:00.000
<v Host>Goodbye, and thanks.
`;

const feed = () => `<?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0">
  <channel><title>Talk Radio</title>
    <item><guid>t-1</guid><title>With chapters</title><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
      <enclosure url="${server.url('/talk.wav')}" type="audio/wav"/>
      <podcast:chapters url="${server.url('/chapters.json')}" type="application/json+chapters"/>
      <podcast:transcript url="${server.url('/talk.vtt')}" type="text/vtt"/></item>
  </channel></rss>`;

beforeAll(async () => {
  server = await feedServer({
    '/talk.wav': audio(wav(60)),
    '/chapters.json': xml(JSON.stringify(CHAPTERS), { 'content-type': 'application/json+chapters' }),
    '/talk.vtt': xml(VTT, { 'content-type': 'text/vtt' }),
    '/feed': (req, res) => xml(feed())(req, res),
  });
});
afterAll(() => server?.close());

const time = 'Math.round(document.getElementById("player").currentTime)';

test('chapters jump and name the chapter on the lock screen; the transcript follows playback and is searched', async () => {
  const { t } = world;
  const u = await t.user('follower');
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/feed') }] });
  await fetchDueFeeds(
    { db: t.db, logger: pino({ level: 'silent' }) },
    fetcherSettings(loadConfig(LOOPBACK, { dotenvFile: false })),
  );
  const id = (await t.db.query("SELECT id::text AS id FROM feed_items WHERE title = 'With chapters'")).rows[0].id;

  const page = await world.newPage();
  await page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true });
  await world.signIn(page, u, `/web/episodes/${id}`);
  await page.waitForSelector('#chapters li:nth-child(3)');
  expect(await text(page, '#chapters li button')).toEqual(['0:00 Welcome', '0:20 The interview', '0:40 Goodbye']);
  await page.waitForSelector('#transcript .cues p:nth-child(4)');
  expect(await text(page, '#transcript .cues p strong')).toEqual(['Host:', 'Guest:', 'Host:', 'Host:']);
  await check(page, 'chapters-transcript-phone');

  // A chapter: playback jumps to it, the list marks it, the lock screen names it.
  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  await page.click('#chapters li:nth-child(2) button');
  await page.waitForFunction('!document.getElementById("player").paused');
  await page.evaluate('document.getElementById("player").pause()');
  expect(await page.evaluate(time)).toBeGreaterThanOrEqual(20);
  await page.waitForFunction('navigator.mediaSession.metadata.artist === "The interview"');
  expect(await page.evaluate('navigator.mediaSession.metadata.title')).toBe('With chapters');
  expect(await text(page, '#chapters button[aria-current="true"]')).toEqual(['0:20 The interview']);
  // The transcript's cue of that time is the current one.
  await page.waitForFunction(
    'document.querySelector("#transcript p.current")?.textContent.includes("Thanks for having me")',
  );

  // A cue's time jumps there too.
  await page.click('#transcript .cues p:nth-child(3) button');
  await page.waitForFunction('document.querySelector("#transcript p.current")?.textContent.includes("gardening")');
  await page.evaluate('document.getElementById("player").pause()');
  expect(await page.evaluate(time)).toBeGreaterThanOrEqual(25);

  // Search: only the cues with the words, the words marked.
  await page.type('#transcript-search', 'the show');
  expect(await text(page, '#transcript .cues p:not([hidden]) mark')).toEqual(['the show', 'the show']);
  expect(await text(page, '#transcript [role="status"]')).toEqual(['2 places hold “the show”.']);
  await page.setViewport({ width: 1280, height: 900 });
  await check(page, 'chapters-transcript');
});

test("the speed and skip lengths chosen on the account page are the player's speed, buttons, keys and lock-screen skips", async () => {
  const { t } = world;
  const u = await t.user('skipper');
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/feed') }] });
  const id = (await t.db.query("SELECT id::text AS id FROM feed_items WHERE title = 'With chapters'")).rows[0].id;
  const page = await world.newPage();
  await world.signIn(page, u, '/web/account');
  await page.select('#skip-back', '15');
  await page.select('#skip-forward', '45');
  await page.select('#player-speed', '1.5');
  expect(await submit(page, '#player-heading ~ form button[type="submit"]')).toBe(200);
  expect(await text(page, '.notice')).toContain('Your player settings were saved.');
  await check(page, 'account-player');

  await page.goto(`${world.origin}/web/episodes/${id}`);
  expect(await text(page, '#player-controls button[data-skip]')).toEqual(['Back 15 s', 'Forward 45 s']);
  // The person's own speed: this podcast has none of its own.
  expect(await page.evaluate('document.getElementById("player").playbackRate')).toBe(1.5);
  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  await page.evaluate('document.getElementById("player").currentTime = 30');
  await page.evaluate('document.activeElement.blur()');
  await page.keyboard.press('j');
  expect(await page.evaluate(time)).toBe(15);
  await page.keyboard.press('l');
  expect(await page.evaluate(time)).toBe(60);
});
