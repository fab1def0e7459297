import pino from 'pino';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as } from '../helpers/app';
import { browserWorld, check, submit, text } from '../helpers/browser';
import { feedServer, xml } from '../helpers/feed-server';

// New episodes in a real browser: where signing in lands; Dismiss and Mark played take an episode off
// it without script's help. Axe-clean at phone (360 px) and desktop (1280 px) widths.

const world = browserWorld();
let server: Awaited<ReturnType<typeof feedServer>>;
const titles = ['Fresh today', 'From yesterday', 'Two days old'];
const feed = `<?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
  <channel><title>Inbox Radio</title>
  ${titles
    .map(
      (title, i) => `<item><guid>n-${i}</guid><title>${title}</title>
      <pubDate>${new Date(Date.now() - i * 86_400_000 - 3_600_000).toUTCString()}</pubDate>
      <itunes:duration>${(i + 1) * 600}</itunes:duration><enclosure url="https://media.example/n-${i}.mp3" type="audio/mpeg"/></item>`,
    )
    .join('')}
  </channel></rss>`;

beforeAll(async () => {
  server = await feedServer({ '/feed': xml(feed) });
});
afterAll(() => server?.close());

test('signing in lands on New episodes; Dismiss and Mark played take one off; axe-clean at 360 and 1280 px', async () => {
  const { t, origin } = world;
  const u = await t.user('inbox');
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/feed') }] });
  await fetchDueFeeds(
    { db: t.db, logger: pino({ level: 'silent' }) },
    fetcherSettings(loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, { dotenvFile: false })),
  );
  const phone = await world.newPage(360, 800);
  expect(await world.signIn(phone, u)).toBe(200);
  expect(phone.url()).toBe(`${origin}/web/new`);
  expect(await text(phone, '.episode a.title')).toEqual(titles);
  await check(phone, 'new-episodes-phone');

  const page = await world.newPage(1280, 800);
  expect(await world.signIn(page, u)).toBe(200);
  await check(page, 'new-episodes');
  // Dismiss and Mark played are in each row's menu (a <details>), opened as a person would.
  await page.click('summary[aria-label="More actions: From yesterday"]');
  expect(await submit(page, 'button[aria-label="Dismiss: From yesterday"]')).toBe(200);
  expect(page.url()).toBe(`${origin}/web/new`);
  expect(await text(page, '.episode a.title')).toEqual(['Fresh today', 'Two days old']);
  await page.click('summary[aria-label="More actions: Fresh today"]');
  expect(await submit(page, 'button[aria-label="Mark played: Fresh today"]')).toBe(200);
  expect(await text(page, '.episode a.title')).toEqual(['Two days old']);
  await check(page, 'new-episodes-after');
});
