import pino from 'pino';
import type { Page } from 'puppeteer-core';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as } from '../helpers/app';
import { audio, wav } from '../helpers/audio';
import { browserWorld, check, submit, text } from '../helpers/browser';
import { feedServer, xml } from '../helpers/feed-server';

// Listening in a real browser: a feed's episodes with the progress a phone synced, the player starting
// where the phone stopped, and the position written back when paused, for the phone's next sync. The
// audio is a short WAV file from the loopback feed server (castsync never proxies media).

const world = browserWorld();
let server: Awaited<ReturnType<typeof feedServer>>;

const feed = () => `<?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
    <channel><title>Desk Listening</title>
      <item><guid>quiet-2</guid><title>A quiet episode</title><pubDate>Tue, 02 Jan 2024 10:00:00 GMT</pubDate>
        <itunes:duration>20</itunes:duration><enclosure url="${server.url('/audio.wav')}" type="audio/wav"/></item>
      <item><guid>older-1</guid><title>An older episode</title><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
        <itunes:duration>1:00</itunes:duration><enclosure url="${server.url('/older.wav')}" type="audio/wav"/></item>
    </channel></rss>`;

beforeAll(async () => {
  server = await feedServer({ '/audio.wav': audio(wav()), '/feed': (req, res) => xml(feed())(req, res) });
});
afterAll(() => server?.close());

const positionOf = (page: Page) => page.$eval('#player', (a) => (a as unknown as { currentTime: number }).currentTime);

test("open a feed, see the phone's progress, continue in the browser; the phone sees where it stopped", async () => {
  const { t, origin } = world;
  const u = await t.user('desk');
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/feed') }] });
  await fetchDueFeeds(
    { db: t.db, logger: pino({ level: 'silent' }) },
    fetcherSettings(loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, { dotenvFile: false })),
  );
  // The phone stopped 5 s into the quiet episode.
  await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
    {
      podcast: server.url('/feed'),
      episode: server.url('/audio.wav'),
      guid: 'quiet-2',
      action: 'play',
      started: 0,
      position: 5,
      total: 20,
      device: 'phone',
    },
  ]);

  const page = await world.newPage();
  expect(await world.signIn(page, u, '/web/subscriptions')).toBe(200);
  expect(await submit(page, 'a.title')).toBe(200);
  expect(await text(page, 'h1')).toEqual(['Desk Listening']);
  expect(await text(page, '.episode a.title')).toEqual(['A quiet episode', 'An older episode']);
  expect(await page.$eval('.episode progress', (p) => p.getAttribute('value'))).toBe('25');
  await check(page, 'episodes');

  // The player's script comes late, after the audio's metadata (as from a fast or cached source): it must
  // still start where the phone stopped.
  await page.setRequestInterception(true);
  page.on('request', (r) => {
    if (r.url().endsWith('/static/player.js')) setTimeout(() => void r.continue(), 1000);
    else void r.continue();
  });
  expect(await submit(page, '.episode a.title')).toBe(200);
  // The player starts where the phone stopped.
  await page.waitForFunction('document.getElementById("player").currentTime >= 5');
  await check(page, 'episode-player');

  await page.$eval('#player', (a) => (a as unknown as { play: () => Promise<void> }).play());
  await page.waitForFunction('document.getElementById("player").currentTime >= 6.5', { timeout: 15_000 });
  await page.$eval('#player', (a) => (a as unknown as { pause: () => void }).pause());
  await page.waitForFunction('document.getElementById("player-status").textContent.startsWith("Position saved")');
  const stoppedAt = Math.floor(await positionOf(page));

  // The phone's next sync sees the browser's play.
  const synced = await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0`);
  const fromWeb = (synced.body.actions as { device?: string; position?: number; started?: number }[]).filter(
    (a) => a.device === 'web',
  );
  expect(fromWeb).toEqual([expect.objectContaining({ action: 'play', position: stoppedAt, total: 20, started: 5 })]);
  expect(stoppedAt).toBeGreaterThanOrEqual(6);

  // On a phone-sized screen too.
  const small = await world.newPage(390, 844);
  await world.signIn(small, u, '/web/in-progress');
  expect(await text(small, '.episode a.title')).toEqual(['A quiet episode']);
  await check(small, 'in-progress-phone');
  await small.goto(`${origin}/web/activity`);
  expect(await text(small, 'td.wrap')).toContain('A quiet episode');
}, 60_000);
