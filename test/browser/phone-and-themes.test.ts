import path from 'node:path';
import pino from 'pino';
import type { Page } from 'puppeteer-core';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as, type TestUser } from '../helpers/app';
import { SHOTS, browserWorld, check, submit } from '../helpers/browser';
import { feedServer, xml } from '../helpers/feed-server';

// The web page on a phone and in its two themes: no page wider than the screen from 320 px up, a bar of at
// most five destinations at the foot of the screen, light or dark as the browser prefers unless the
// account page's choice says otherwise, and axe's checks (contrast too) clean in both.

const LOOPBACK = { FEED_FETCH_ALLOW_CIDRS: '127.0.0.1/32' };
const world = browserWorld(() => LOOPBACK);
let server: Awaited<ReturnType<typeof feedServer>>;
let u: TestUser;
let episodeId: string;

const LONG = 'A podcast whose title goes on and on without a break: Supercalifragilisticexpialidociousnessfulness';
const feed = () => `<?xml version="1.0"?><rss version="2.0"><channel><title>${LONG}</title>
  <item><guid>p-1</guid><title>${LONG}, episode one</title><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
    <enclosure url="${server.url('/a-very-long-file-name-of-an-episode-that-never-ends.mp3')}" type="audio/mpeg"/>
    <description>Notes: https://example.org/a/very/long/address/that/has/no/spaces/in/it/at/all/anywhere</description></item>
</channel></rss>`;

beforeAll(async () => {
  server = await feedServer({ '/feed-with-a-long-address-to-see-it-wrap': (req, res) => xml(feed())(req, res) });
  u = await world.t.user('phone-reader');
  // An administrator, so that the users' pages are among those checked.
  await world.t.db.query('UPDATE users SET is_admin = true WHERE id = $1', [u.id]);
  const url = server.url('/feed-with-a-long-address-to-see-it-wrap');
  await as(world.t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: url }] });
  await fetchDueFeeds(
    { db: world.t.db, logger: pino({ level: 'silent' }) },
    fetcherSettings(loadConfig(LOOPBACK, { dotenvFile: false })),
  );
  episodeId = (await world.t.db.query("SELECT id::text AS id FROM feed_items WHERE guid = 'p-1'")).rows[0].id;
});
afterAll(() => server?.close());

const PAGES = () => [
  '/web/subscriptions',
  '/web/new',
  `/web/episodes/${episodeId}`,
  '/web/admin/users',
  `/web/admin/users/${u.name}/remove`,
  // Last: the checks after the loop are of the account page's bar.
  '/web/account',
];

/** The relative luminance (0 black, 1 white) of the body's computed background. */
const backgroundLuminance = async (page: Page): Promise<number> => {
  const colour = (await page.evaluate('getComputedStyle(document.body).backgroundColor')) as string;
  const [r, g, b] = (colour.match(/[\d.]+/g) ?? ['0', '0', '0']).map((c) => Number(c) / 255) as [
    number,
    number,
    number,
  ];
  const lin = (c: number) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
};
const prefer = (page: Page, scheme: 'light' | 'dark') =>
  page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);

test.each([360, 320])('at %i px no page is wider than the screen, and the bar holds five', async (width) => {
  const page = await world.newPage(width, 740);
  await world.signIn(page, u, '/web/new');
  for (const path of PAGES()) {
    await page.goto(world.origin + path);
    expect([path, await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')]).toEqual([
      path,
      true,
    ]);
  }
  // Only the bar is shown: four destinations and More, each as tall as a thumb.
  const bar = await page.$$eval('nav[aria-label="Main"] a, nav[aria-label="Main"] summary', (els) =>
    els.filter((e) => e.checkVisibility()).map((e) => [e.textContent, e.getBoundingClientRect().height]),
  );
  expect(bar.map(([name]) => name)).toEqual(['New', 'Podcasts', 'Continue', 'Up next', 'More']);
  expect(bar.every(([, height]) => Number(height) >= 44)).toBe(true);
  // The current page is marked in More's menu, and the rest is one tap away.
  expect(await page.evaluate("getComputedStyle(document.querySelector('.more summary')).fontWeight")).toBe('700');
  await page.click('.more summary');
  expect(await page.$eval('.more a[href="/web/account"]', (a) => a.getAttribute('aria-current'))).toBe('page');
  const stats = await page.$('.more a[href="/web/stats"]');
  expect((await stats!.boundingBox())!.height).toBeGreaterThanOrEqual(44);
  await Promise.all([page.waitForNavigation(), stats!.click()]);
  expect(page.url()).toBe(`${world.origin}/web/stats`);
  expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
});

test('light or dark as the system prefers, checked at 360 and 1280 px in both', async () => {
  const page = await world.newPage(360, 740);
  await world.signIn(page, u, '/web/subscriptions');
  for (const [width, height, name] of [
    [360, 740, 'phone'],
    [1280, 800, 'desktop'],
  ] as const) {
    await page.setViewport({ width, height });
    await prefer(page, 'light');
    expect(await backgroundLuminance(page)).toBeGreaterThan(0.8);
    await check(page, `theme-${name}-light`);
    // What the screen shows (the whole page's screenshot draws the bar at the foot of the first screen).
    await page.screenshot({ path: path.join(SHOTS, `theme-${name}-light-screen.png`) });
    await prefer(page, 'dark');
    expect(await backgroundLuminance(page)).toBeLessThan(0.05);
    await check(page, `theme-${name}-dark`);
    await page.screenshot({ path: path.join(SHOTS, `theme-${name}-dark-screen.png`) });
    await page.goto(`${world.origin}/web/episodes/${episodeId}`);
    await check(page, `theme-${name}-dark-episode`);
    await page.goto(`${world.origin}/web/subscriptions`);
  }
});

test("the account page's choice holds against the system's preference, on every page", async () => {
  const v = await world.t.user('theme-chooser');
  const page = await world.newPage(360, 740);
  await prefer(page, 'light');
  await world.signIn(page, v, '/web/account');
  expect(await page.$eval('#theme-system', (r) => (r as unknown as { checked: boolean }).checked)).toBe(true);
  await page.click('#theme-dark');
  expect(await submit(page, 'form[action="/web/account/theme"] button')).toBe(200);
  expect(await page.$eval('html', (h) => h.dataset.theme)).toBe('dark');
  expect(await backgroundLuminance(page)).toBeLessThan(0.05);
  await check(page, 'account-theme-dark');
  await page.goto(`${world.origin}/web/new`);
  expect(await backgroundLuminance(page)).toBeLessThan(0.05);

  await prefer(page, 'dark');
  await page.goto(`${world.origin}/web/account`);
  await page.click('#theme-light');
  expect(await submit(page, 'form[action="/web/account/theme"] button')).toBe(200);
  expect(await backgroundLuminance(page)).toBeGreaterThan(0.8);
  await check(page, 'account-theme-light');

  await page.click('#theme-system');
  expect(await submit(page, 'form[action="/web/account/theme"] button')).toBe(200);
  expect(await backgroundLuminance(page)).toBeLessThan(0.05);
  expect((await world.t.db.query('SELECT web_theme FROM users WHERE id = $1', [v.id])).rows[0].web_theme).toBe(
    'system',
  );
});
