import { readFileSync } from 'node:fs';
import path from 'node:path';
import { browserWorld, check, submit } from '../helpers/browser';

/** The shell cache's name as the worker names it (bumped whenever the cached files change). */
const SHELL = /const SHELL = '([^']+)'/.exec(
  readFileSync(path.join(__dirname, '../../src/web/static/sw.js'), 'utf8'),
)![1]!;

// castsync as an installed web app, in Chromium: the manifest Chromium accepts, the service worker
// active, the offline page when the server cannot be reached, and signing out emptying the worker's cache.

const world = browserWorld();

test('installable: the manifest is valid, the worker active; offline shows the offline page; sign-out empties the cache', async () => {
  const { t, origin } = world;
  const u = await t.user('install');
  const page = await world.newPage();
  await world.signIn(page, u, '/web/subscriptions');

  const manifest = (await (await fetch(`${origin}/static/manifest.webmanifest`)).json()) as {
    display: string;
    start_url: string;
    icons: { sizes: string; purpose: string }[];
  };
  expect(manifest).toMatchObject({ display: 'standalone', start_url: '/' });
  expect(manifest.icons.map((i) => `${i.sizes} ${i.purpose}`)).toEqual([
    '192x192 any',
    '512x512 any',
    '512x512 maskable',
  ]);
  // Chromium's own judgement of the manifest and the worker.
  await page.waitForFunction('navigator.serviceWorker.ready.then((r) => !!r.active)');
  await page.reload();
  const cdp = await page.createCDPSession();
  const { installabilityErrors } = (await cdp.send('Page.getInstallabilityErrors')) as {
    installabilityErrors: { errorId: string }[];
  };
  // Each test's page is in a fresh (incognito) browser context, where nothing installs: that one is ours.
  expect(installabilityErrors.map((e) => e.errorId).filter((id) => id !== 'in-incognito')).toEqual([]);
  expect(SHELL).toMatch(/^castsync-shell-v\d+$/);
  expect(await page.evaluate('caches.keys()')).toEqual([SHELL]);
  // The worker keeps no page: only the shell's files.
  const kept = (await page.evaluate(
    `caches.open("${SHELL}").then((c) => c.keys()).then((ks) => ks.map((k) => new URL(k.url).pathname))`,
  )) as string[];
  expect(kept.every((p) => p.startsWith('/static/'))).toBe(true);

  // The pages name the shell's files at versioned addresses (`?v=`): the kept ones answer for them offline.
  const stylesheet = await page.$eval('link[rel="stylesheet"]', (l) => l.getAttribute('href'));
  expect(stylesheet).toMatch(/^\/static\/style\.css\?v=/);
  // (The browser's own cache would answer for them too: it is emptied, as a browser may.)
  await cdp.send('Network.clearBrowserCache');

  // The server cannot be reached: a page is the offline page, styled by the kept stylesheet.
  // (The worker's own requests go offline through its target: the page's emulation does not reach them.)
  const worker = await page.browserContext().waitForTarget((x) => x.type() === 'service_worker');
  const workerCdp = await worker.createCDPSession();
  const network = (offline: boolean) =>
    workerCdp.send('Network.emulateNetworkConditions', {
      offline,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
  await workerCdp.send('Network.enable');
  await network(true);
  await page.setOfflineMode(true);
  await page.goto(`${origin}/web/in-progress`);
  expect(await page.$eval('h1', (h) => h.textContent)).toBe('You are offline');
  expect(await page.evaluate(`fetch(${JSON.stringify(stylesheet)}).then((r) => r.status)`)).toBe(200);
  await check(page, 'offline');
  await page.setOfflineMode(false);
  await network(false);

  // Signing out empties the worker's cache. The worker's own network comes back a moment after the page's
  // (two targets): until it has, it still answers with the offline page, so the account page is asked again.
  for (let tries = 0; tries < 40; tries++) {
    await page.goto(`${origin}/web/account`);
    if ((await page.$('form[action="/web/sign-out"] button')) !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  expect(await submit(page, 'form[action="/web/sign-out"] button')).toBe(200);
  await page.waitForFunction('caches.keys().then((keys) => keys.length === 0)');
}, 60_000);
