import pino from 'pino';
import type { Page } from 'puppeteer-core';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as } from '../helpers/app';
import { browserWorld, check, submit } from '../helpers/browser';
import { feedServer, xml } from '../helpers/feed-server';

// Notifications in Debian's Chromium: the account page's settings and each feed's switch, axe-clean; and the
// service worker given a push message through the DevTools protocol (ServiceWorker.deliverPushMessage), as
// a push service would hand it to the browser: it shows the notification, and its notificationclick
// handler opens the episode's page.

const world = browserWorld(() => ({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' }));
let server: Awaited<ReturnType<typeof feedServer>>;
const feed = `<?xml version="1.0"?><rss version="2.0"><channel><title>Bell Radio</title>
  <item><guid>bell-1</guid><title>The bell rings</title><enclosure url="https://media.example/bell-1.mp3" type="audio/mpeg"/></item>
  </channel></rss>`;

beforeAll(async () => {
  server = await feedServer({ '/feed': xml(feed) });
});
afterAll(() => server?.close());

async function subscribedUser() {
  const { t } = world;
  const u = await t.user('bell');
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/feed') }] });
  await fetchDueFeeds({ db: t.db, logger: pino({ level: 'silent' }) }, fetcherSettings(t.config));
  return u;
}

/** The site's service worker, once it is active; its DevTools session. */
async function serviceWorker(page: Page) {
  await page.evaluate('navigator.serviceWorker.ready.then(() => true)');
  const target = await page
    .browserContext()
    .waitForTarget((t) => t.type() === 'service_worker' && t.url().endsWith('/sw.js'));
  return { target, worker: (await target.worker())! };
}

test('the account page: notification settings saved, a refused URL said, axe-clean', async () => {
  const u = await subscribedUser();
  const page = await world.newPage(1280, 900);
  expect(await world.signIn(page, u, '/web/account')).toBe(200);
  await page.$eval('#notify-url', (e) => ((e as unknown as { value: string }).value = 'https://ntfy.sh/castsync-bell'));
  await page.click('#kind-ntfy');
  expect(await submit(page, 'form[action="/web/account/notifications"] button')).toBe(200);
  expect(await page.$eval('#notify-url', (e) => (e as unknown as { value: string }).value)).toBe(
    'https://ntfy.sh/castsync-bell',
  );
  expect(await page.$eval('#kind-ntfy', (e) => (e as unknown as { checked: boolean }).checked)).toBe(true);
  expect(await page.$eval('#notify-me', (e) => (e as unknown as { hidden: boolean }).hidden)).toBe(false);
  await check(page, 'notifications-account');

  await page.$eval('#notify-url', (e) => ((e as unknown as { value: string }).value = 'http://10.0.0.7/hook'));
  await submit(page, 'form[action="/web/account/notifications"] button');
  expect(await page.$eval('main', (e) => e.textContent)).toMatch(/private address 10\.0\.0\.7/);
  await check(page, 'notifications-refused');
});

test("a feed's notifications turned off and on from the Subscriptions page and the feed's page", async () => {
  const u = await subscribedUser();
  const page = await world.newPage(1280, 800);
  expect(await world.signIn(page, u, '/web/subscriptions')).toBe(200);
  expect(await submit(page, 'button[aria-label="Stop notifying: Bell Radio"]')).toBe(200);
  expect(await page.$('button[aria-label="Notify me: Bell Radio"]')).not.toBeNull();
  await check(page, 'notifications-feed-off');
  await page.click('a.title');
  await page.waitForSelector('button[aria-label="Notify me: Bell Radio"]');
  expect(await submit(page, 'button[aria-label="Notify me: Bell Radio"]')).toBe(200);
  expect(await page.$('button[aria-label="Stop notifying: Bell Radio"]')).not.toBeNull();
  await check(page, 'notifications-feed-page');
});

test('the service worker shows a pushed notification, and a click on it opens the episode', async () => {
  const { t, origin } = world;
  const u = await subscribedUser();
  const itemId = (await t.db.query<{ id: string }>(`SELECT id::text FROM feed_items WHERE item_key = 'bell-1'`))
    .rows[0]!.id;
  const page = await world.newPage(1280, 800);
  await page.browserContext().overridePermissions(origin, ['notifications']);
  expect(await world.signIn(page, u, '/web/account')).toBe(200);
  const { target, worker } = await serviceWorker(page);
  const cdp = await page.createCDPSession();
  await cdp.send('ServiceWorker.enable');
  const registration = await new Promise<string>((resolve) =>
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => {
      const found = e.registrations.find((r) => r.scopeURL === `${origin}/`);
      if (found) resolve(found.registrationId);
    }),
  );
  // Headless Chromium draws no notification on a screen and keeps none for getNotifications(): what the
  // worker's push listener hands to showNotification is recorded as it calls it (and then shown).
  await worker.evaluate(`(() => {
    const show = self.registration.showNotification.bind(self.registration);
    self.shown = [];
    self.registration.showNotification = (title, options) => (self.shown.push({ title, options }), show(title, options));
  })()`);
  const message = {
    title: 'New episode of Bell Radio',
    body: 'The bell rings',
    url: `/web/episodes/${itemId}`,
    tag: 'b:1',
  };
  await cdp.send('ServiceWorker.deliverPushMessage', {
    origin: `${origin}/`,
    registrationId: registration,
    data: JSON.stringify(message),
  });
  const shown = await worker.evaluate(`(async () => {
    for (let i = 0; i < 100 && self.shown.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    return self.shown.map(({ title, options }) => ({ title, body: options.body, data: options.data }));
  })()`);
  expect(shown).toEqual([{ title: message.title, body: message.body, data: { url: message.url } }]);

  // The click: the worker's own notificationclick listener, given the notification it showed. The DevTools
  // protocol cannot click a notification, and Chromium lets clients.openWindow open a window only for a
  // person's real click, so the window the listener asks for is recorded, then opened here.
  const asked = (await worker.evaluate(`(async () => {
    const asked = [];
    const open = self.clients.openWindow.bind(self.clients);
    self.clients.openWindow = (url) => (asked.push(url), open(url));
    const event = new ExtendableEvent('notificationclick');
    Object.defineProperty(event, 'notification', { value: { data: self.shown[0].options.data, close: () => undefined } });
    const waits = [];
    Object.defineProperty(event, 'waitUntil', { value: (p) => waits.push(p) });
    self.dispatchEvent(event);
    await Promise.allSettled(waits);
    return asked;
  })()`)) as string[];
  expect(asked).toEqual([`${origin}/web/episodes/${itemId}`]);
  expect((await page.goto(asked[0]!))!.status()).toBe(200);
  expect(await page.title()).toMatch(/The bell rings/);
  expect(target.url()).toBe(`${origin}/sw.js`);
});
