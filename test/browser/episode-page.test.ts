import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import type { Page } from 'puppeteer-core';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as, type TestUser } from '../helpers/app';
import { audio, wav } from '../helpers/audio';
import { browserWorld, check, submit, text } from '../helpers/browser';
import { feedServer, xml } from '../helpers/feed-server';

// The episode page and the lists of episodes in Chromium: the title and the play button on a phone's first
// screen; castsync's own player (play, pause, skip and seek by keys, every control named, the chapters marked
// on the scrubber, the time left); without script the audio element's own controls, and the rows' menus
// still send their forms; no sideways scrolling at 360 px; axe clean at 360 and 1280 px, light and dark.

const LOOPBACK = { FEED_FETCH_ALLOW_CIDRS: '127.0.0.1/32' };
const world = browserWorld(() => LOOPBACK);
let server: Awaited<ReturnType<typeof feedServer>>;
let u: TestUser;
let id: string;
let guid: string;

const CHAPTERS = {
  version: '1.2.0',
  chapters: [
    { startTime: 0, title: 'Welcome' },
    { startTime: 20, title: 'The interview' },
    { startTime: 40, title: 'Goodbye' },
  ],
};
const TITLE = 'A rather long episode title that takes two or three lines on a phone';
const ICON = readFileSync(path.join(__dirname, '../../src/web/static/icon-192.png'));
const feed = () => `<?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"
  xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
  <channel><title>Page Radio</title><itunes:image href="${server.url('/art.png')}"/>
    <item><guid>e-1</guid><title>${TITLE}</title><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
      <itunes:duration>60</itunes:duration>
      <enclosure url="${server.url('/talk.wav')}" type="audio/wav"/>
      <podcast:chapters url="${server.url('/chapters.json')}" type="application/json+chapters"/></item>
    <item><guid>e-0</guid><title>The one before</title><pubDate>Sun, 31 Dec 2023 10:00:00 GMT</pubDate>
      <enclosure url="${server.url('/before.wav')}" type="audio/wav"/></item>
  </channel></rss>`;

beforeAll(async () => {
  server = await feedServer({
    '/talk.wav': audio(wav(60)),
    '/before.wav': audio(wav(20)),
    '/art.png': (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(ICON);
    },
    '/chapters.json': xml(JSON.stringify(CHAPTERS), { 'content-type': 'application/json+chapters' }),
    '/feed': (req, res) => xml(feed())(req, res),
  });
  u = await world.t.user('page-listener');
  await as(world.t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/feed') }] });
  await fetchDueFeeds(
    { db: world.t.db, logger: pino({ level: 'silent' }) },
    fetcherSettings(loadConfig(LOOPBACK, { dotenvFile: false })),
  );
  id = (await world.t.db.query("SELECT id::text AS id FROM feed_items WHERE guid = 'e-1'")).rows[0].id;
  guid = (await as(world.t, u).get('/v1/subscriptions')).body.subscriptions[0].guid;
});
afterAll(() => server?.close());

const episodePage = () => `${world.origin}/web/episodes/${id}`;
const feedPage = () => `${world.origin}/web/subscriptions/${guid}/episodes`;
const time = 'Math.round(document.getElementById("player").currentTime)';
const noSidewaysScroll = (page: Page) => page.evaluate('document.documentElement.scrollWidth <= window.innerWidth');
const visible = (page: Page, selector: string) => page.$eval(selector, (e) => e.checkVisibility());

test('on a 360×740 phone the title and the play button are on the first screen, above the bar; nothing scrolls sideways', async () => {
  const page = await world.newPage(360, 740);
  await world.signIn(page, u, `/web/episodes/${id}`);
  await page.waitForSelector('#play');
  const bar = (await (await page.$('.nav-bar'))!.boundingBox())!;
  for (const selector of ['main h1', '#play']) {
    const box = (await (await page.$(selector))!.boundingBox())!;
    expect([selector, box.y >= 0, box.y + box.height <= bar.y, box.x + box.width <= 360]).toEqual([
      selector,
      true,
      true,
      true,
    ]);
  }
  // The artwork has its size before it loads (no shift), and it is modest on a phone.
  expect(await page.$eval('.artwork', (i) => [i.getAttribute('width'), i.getAttribute('height')])).toEqual([
    '160',
    '160',
  ]);
  expect((await (await page.$('.artwork'))!.boundingBox())!.height).toBeLessThanOrEqual(96);
  expect(await noSidewaysScroll(page)).toBe(true);
  await page.goto(feedPage());
  expect(await noSidewaysScroll(page)).toBe(true);
  // Every row's play link and menu button are thumb-sized.
  const small = await page.$$eval('.episode .play, .episode summary', (els) =>
    els.map((e) => e.getBoundingClientRect()).filter((b) => b.width < 44 || b.height < 44),
  );
  expect(small).toEqual([]);
});

test('the player plays, pauses, skips and seeks by keys; its controls are named; the scrubber marks the chapters and says the time left', async () => {
  const page = await world.newPage(1280, 800);
  await world.signIn(page, u, `/web/episodes/${id}`);
  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  // The audio element's own controls are hidden; castsync's are shown, each with a name.
  expect(await visible(page, '#player')).toBe(false);
  expect(await visible(page, '#player-controls')).toBe(true);
  for (const name of ['Play', 'Back 10 s', 'Forward 30 s']) {
    expect(await page.$(`aria/${name}[role="button"]`)).not.toBeNull();
  }
  expect(await page.$('aria/Position[role="slider"]')).not.toBeNull();
  expect(await page.$('aria/Speed[role="combobox"]')).not.toBeNull();
  expect(await page.$('aria/Sleep[role="combobox"]')).not.toBeNull();
  await page.waitForSelector('#chapter-marks span:nth-child(2)');

  // Play and pause with the keyboard: the button's name follows.
  await page.focus('#play');
  await page.keyboard.press('Enter');
  await page.waitForFunction('!document.getElementById("player").paused');
  await page.waitForSelector('aria/Pause[role="button"]');
  await page.keyboard.press('Space');
  await page.waitForFunction('document.getElementById("player").paused');
  await page.waitForSelector('aria/Play[role="button"]');

  // Skip: Tab to Forward, Enter; Shift+Tab twice to Back, Enter.
  await page.evaluate('document.getElementById("player").currentTime = 12');
  await page.keyboard.press('Tab');
  expect(await page.evaluate('document.activeElement.textContent')).toBe('Forward 30 s');
  await page.keyboard.press('Enter');
  expect(await page.evaluate(time)).toBe(42);
  await page.keyboard.down('Shift');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await page.keyboard.up('Shift');
  expect(await page.evaluate('document.activeElement.textContent')).toBe('Back 10 s');
  await page.keyboard.press('Enter');
  expect(await page.evaluate(time)).toBe(32);

  // Seek with the scrubber: arrows by 5 s, Page Down by a minute, Home to the start.
  await page.focus('#scrubber');
  await page.keyboard.press('ArrowLeft');
  expect(await page.evaluate(time)).toBe(27);
  await page.waitForFunction('document.getElementById("scrubber").getAttribute("aria-valuetext").startsWith("0:27")');
  expect(await page.$eval('#scrubber', (s) => s.getAttribute('aria-valuetext'))).toBe(
    '0:27 of 1:00, 0:33 left, The interview',
  );
  expect(await text(page, '#player-left')).toEqual(['0:33 left']);
  expect(await text(page, '#player-chapter')).toEqual(['The interview']);
  await page.keyboard.press('Home');
  await page.waitForFunction(`${time} === 0`);

  // The chapters' marks: at 20 s and 40 s of 60, a third and two thirds along the track.
  const track = (await (await page.$('#scrubber'))!.boundingBox())!;
  const marks = await page.$$eval('#chapter-marks span', (spans) =>
    spans.map((s) => {
      const b = s.getBoundingClientRect();
      return b.x + b.width / 2;
    }),
  );
  expect(marks).toHaveLength(2);
  const along = marks.map((x) => (x - track.x - 10) / (track.width - 20));
  expect(along[0]).toBeCloseTo(1 / 3, 1);
  expect(along[1]).toBeCloseTo(2 / 3, 1);
  await check(page, 'episode-page-player');
});

test("a row's menu opens from the keyboard and closes on Escape, back to its button, or on a click elsewhere", async () => {
  const page = await world.newPage(360, 740);
  await world.signIn(page, u, `/web/subscriptions/${guid}/episodes`);
  const summary = 'summary[aria-label="More actions: The one before"]';
  const isOpen = () => page.$eval(summary, (s) => (s.parentElement as unknown as { open: boolean }).open);
  await page.focus(summary);
  await page.keyboard.press('Enter');
  expect(await isOpen()).toBe(true);
  await page.keyboard.press('Tab');
  expect(await page.evaluate('document.activeElement.closest("details.row-menu") !== null')).toBe(true);
  await page.keyboard.press('Escape');
  expect(await isOpen()).toBe(false);
  expect(await page.evaluate('document.activeElement.getAttribute("aria-label")')).toBe('More actions: The one before');
  await page.click(summary);
  expect(await isOpen()).toBe(true);
  await page.click('main h1');
  expect(await isOpen()).toBe(false);
});

test('without script: the audio element plays with its own controls, and the rows’ menus send their forms', async () => {
  const page = await world.newPage(360, 740);
  await world.signIn(page, u, '/web/new');
  await page.setJavaScriptEnabled(false);
  await page.goto(episodePage());
  expect(await visible(page, '#player')).toBe(true);
  expect(await page.$eval('#player', (a) => a.hasAttribute('controls'))).toBe(true);
  expect(await visible(page, '#player-controls')).toBe(false);

  await page.goto(feedPage());
  expect(await visible(page, 'button[aria-label="Mark played: The one before"]')).toBe(false);
  await page.click('summary[aria-label="More actions: The one before"]');
  expect(await visible(page, 'button[aria-label="Mark played: The one before"]')).toBe(true);
  expect(await submit(page, 'button[aria-label="Mark played: The one before"]')).toBe(200);
  expect(page.url()).toBe(feedPage());
  expect(await page.$$eval('.episode.played a.title', (a) => a.map((e) => e.textContent))).toEqual(['The one before']);
  await page.click(`summary[aria-label="More actions: ${TITLE}"]`);
  expect(await submit(page, `button[aria-label="Add to queue: ${TITLE}"]`)).toBe(200);
  expect(((await as(world.t, u).get('/v1/queue')).body.items as { title: string }[]).map((i) => i.title)).toEqual([
    TITLE,
  ]);
});

test('axe clean at 360 and 1280 px, light and dark: the episode page, a feed, Up next and Favourites', async () => {
  await as(world.t, u).post('/v1/queue/items', {
    podcast_url: server.url('/feed'),
    enclosure_url: server.url('/talk.wav'),
  });
  const page = await world.newPage(360, 740);
  await world.signIn(page, u, `/web/subscriptions/${guid}/episodes`);
  await page.click(`summary[aria-label="More actions: ${TITLE}"]`);
  expect(await submit(page, `button[aria-label="Favourite: ${TITLE}"]`)).toBe(200);
  for (const [width, height] of [
    [360, 740],
    [1280, 800],
  ] as const) {
    await page.setViewport({ width, height });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
      for (const [name, url] of [
        ['episode', episodePage()],
        ['feed', feedPage()],
        ['queue', `${world.origin}/web/queue`],
        ['favourites', `${world.origin}/web/favourites`],
      ]) {
        await page.goto(url!);
        // Every row and the episode's head show the episode's artwork, else its podcast's (the feed's here),
        // as castsync's thumbnail of it.
        const shown = await page.$$eval('img.thumb, img.artwork', (i) =>
          i.map((e) => {
            const src = new URL(e.src);
            return `${src.pathname} ${new URL(src.searchParams.get('u')!).pathname}`;
          }),
        );
        expect([name, [...new Set(shown)]]).toEqual([name, ['/web/artwork /art.png']]);
        expect([name, width, await noSidewaysScroll(page)]).toEqual([name, width, true]);
        await check(page, `rows-${name}-${width}-${scheme}`);
      }
      // A row's menu, open.
      await page.click('.episode summary');
      await check(page, `row-menu-${width}-${scheme}`);
    }
  }
}, 90_000);
