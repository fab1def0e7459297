import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { as, type TestApp } from '../helpers/app';
import { browserWorld, check, submit, text } from '../helpers/browser';
import { feedLearnt } from '../helpers/feeds';
import { tempDirForFile } from '../helpers/tmp';

// The web page in a real browser (test/helpers/browser.ts): every step saves a screenshot and is checked
// with axe-core.

const world = browserWorld();
const tmp = tempDirForFile('castsync-browser-');
let t: TestApp;
let origin: string;
beforeAll(() => {
  ({ t, origin } = world);
});
const newPage = world.newPage;
const signIn = world.signIn;

test('a wrong password is told, on an accessible sign-in page', async () => {
  const u = await t.user('browser');
  const page = await newPage();
  await page.goto(origin);
  await check(page, 'sign-in');
  await page.type('#username', u.name);
  await page.type('#password', 'not-my-password');
  expect(await submit(page, 'form[action="/web/sign-in"] button')).toBe(401);
  expect(await text(page, '.notice.error')).toEqual(['Wrong username or password.']);
  await check(page, 'sign-in-wrong-password');
});

test('sign in, add a feed, see it, unsubscribe; OPML into a second user; sign out', async () => {
  const u = await t.user('browser');
  const v = await t.user('browser');
  const page = await newPage();
  expect(await signIn(page, u)).toBe(200);
  expect(page.url()).toBe(`${origin}/web/new`);
  await check(page, 'new-empty');
  await page.goto(`${origin}/web/subscriptions`);
  await check(page, 'subscriptions-empty');

  for (const url of ['https://browser.example/one.xml', 'https://browser.example/two.xml']) {
    await page.type('#feed_url', url);
    expect(await submit(page, 'form[action="/web/subscriptions"] button')).toBe(200);
  }
  await feedLearnt(t.db, 'https://browser.example/two.xml', { title: 'Two: a podcast' });
  await page.goto(`${origin}/web/subscriptions`);
  expect(await text(page, '.feed .title')).toEqual(['https://browser.example/one.xml', 'Two: a podcast']);
  await check(page, 'subscriptions');

  expect(await submit(page, 'button[aria-label="Unsubscribe from https://browser.example/one.xml"]')).toBe(200);
  expect(await text(page, '.feed .title')).toEqual(['Two: a podcast']);
  const api = (await as(t, u).get('/v1/subscriptions')).body.subscriptions as {
    feed_url: string;
    is_subscribed: boolean;
  }[];
  expect(api.filter((s) => s.is_subscribed).map((s) => s.feed_url)).toEqual(['https://browser.example/two.xml']);

  const opml = await page.evaluate(() => fetch('/web/opml').then((r) => r.text()));
  expect(opml).toContain('xmlUrl="https://browser.example/two.xml"');
  const file = path.join(tmp, 'subscriptions.opml');
  writeFileSync(file, opml);

  expect(await submit(page, 'form[action="/web/sign-out"] button')).toBe(200);
  expect(page.url()).toBe(`${origin}/?signed_out`);
  expect(await page.$eval('main', (m) => m.textContent)).toContain('You are signed out of castsync.');
  await page.goto(`${origin}/web/subscriptions`);
  expect(page.url()).toBe(`${origin}/?next=%2Fweb%2Fsubscriptions`);

  expect(await signIn(page, v, '/web/subscriptions')).toBe(200);
  const input = await page.$('#opml');
  await input!.uploadFile(file);
  expect(await submit(page, 'form[action="/web/opml"] button')).toBe(200);
  expect(await text(page, '.notice.ok')).toEqual(['Imported 1 of 1 feeds.']);
  expect(await text(page, '.feed .title')).toEqual(['Two: a podcast']);
  await check(page, 'opml-imported');
});

test('an app password: created, used over the API, revoked', async () => {
  const u = await t.user('browser');
  const page = await newPage();
  await signIn(page, u, '/?next=/web/app-passwords');
  await page.type('#label', 'AntennaPod on my phone');
  expect(await submit(page, 'form[action="/web/app-passwords"] button')).toBe(200);
  const secret = await page.$eval('#new-password', (e) => (e as unknown as { value: string }).value);
  expect(secret).toMatch(/^csp_/);
  await check(page, 'app-password-created');
  const basic = 'Basic ' + Buffer.from(`${u.name}:${secret}`).toString('base64');
  expect((await as(t, basic).get('/v1/subscriptions')).status).toBe(200);
  expect(await submit(page, 'button[aria-label="Revoke AntennaPod on my phone"]')).toBe(200);
  expect(await text(page, 'main p')).toContain('No app passwords yet.');
  expect((await as(t, basic).get('/v1/subscriptions')).status).toBe(401);
});

test('a Nextcloud-mode app is allowed in: sign in from its page, allow, and its poll gets a password', async () => {
  const u = await t.user('browser');
  const start = await fetch(`${origin}/index.php/login/v2`, { method: 'POST', headers: { 'User-Agent': 'Kasts' } });
  const flow = (await start.json()) as { login: string; poll: { token: string; endpoint: string } };
  const page = await newPage(390, 844);
  await page.goto(flow.login);
  await page.type('#username', u.name);
  await page.type('#password', u.password);
  await submit(page, 'form[action="/web/sign-in"] button');
  expect(await text(page, 'h1')).toEqual(['Allow Kasts to access your account?']);
  await check(page, 'login-flow-phone');
  expect(await submit(page, 'main form button')).toBe(200);
  const poll = await fetch(flow.poll.endpoint, {
    method: 'POST',
    body: new URLSearchParams({ token: flow.poll.token }),
  });
  expect(poll.status).toBe(200);
  expect(await poll.json()).toMatchObject({ loginName: u.name, appPassword: expect.stringMatching(/^csp_/) });
});

test('a form posted without its CSRF token is refused; a hostile feed title stays text', async () => {
  const u = await t.user('browser');
  const page = await newPage(390, 844);
  await signIn(page, u, '/web/subscriptions');
  await page.type('#feed_url', 'https://hostile.example/feed');
  await submit(page, 'form[action="/web/subscriptions"] button');
  await feedLearnt(t.db, 'https://hostile.example/feed', { title: '<img src=x onerror=alert(1)>' });
  await page.goto(`${origin}/web/subscriptions`);
  expect(await text(page, '.feed .title')).toEqual(['<img src=x onerror=alert(1)>']);
  expect(await page.$$('.feed .title img')).toEqual([]);
  await check(page, 'subscriptions-phone');

  await page.$eval('form[action="/web/subscriptions"] input[name="_csrf"]', (e) => e.remove());
  await page.type('#feed_url', 'https://forged.example/feed');
  expect(await submit(page, 'form[action="/web/subscriptions"] button')).toBe(403);
  expect(await text(page, 'h1')).toEqual(['Not allowed']);
  const api = (await as(t, u).get('/v1/subscriptions')).body.subscriptions as { feed_url: string }[];
  expect(api.map((s) => s.feed_url)).toEqual(['https://hostile.example/feed']);
});

test('every other page passes the accessibility check, on a desktop and on a phone', async () => {
  const admin = await t.user('admin');
  await t.db.query('UPDATE users SET is_admin = true WHERE id = $1', [admin.id]);
  const other = await t.user();
  await as(t, admin).post(`/api/2/devices/${admin.name}/phone.json`, { caption: 'Phone', type: 'mobile' });
  await as(t, admin).post(`/api/2/episodes/${admin.name}.json`, [
    { podcast: 'https://a.example/feed', episode: 'https://a.example/1.mp3', action: 'play', position: 60, total: 600 },
  ]);
  for (const [width, height, suffix] of [
    [1280, 800, ''],
    [390, 844, '-phone'],
  ] as const) {
    const page = await newPage(width, height);
    await signIn(page, admin);
    for (const p of ['account', 'devices', 'activity', 'app-passwords', 'admin/users']) {
      expect((await page.goto(`${origin}/web/${p}`))!.status()).toBe(200);
      await check(page, `${p.replace('/', '-')}${suffix}`);
    }
    // A removal's confirmation, reached from the users' table.
    await page.goto(`${origin}/web/admin/users`);
    await Promise.all([page.waitForNavigation(), page.click(`a[href="/web/admin/users/${other.name}/remove"]`)]);
    expect(await page.$eval('h2', (e) => e.textContent)).toBe(`Remove ${other.name}`);
    await check(page, `admin-remove${suffix}`);
  }
});
