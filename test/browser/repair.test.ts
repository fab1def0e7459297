import { as } from '../helpers/app';
import { browserWorld, check, submit, text } from '../helpers/browser';
import { feedLearnt } from '../helpers/feeds';
import { adoptFeedGuid, moveFeed } from '../../src/subscriptions/service';

// A way out of a mess, in a real browser: each device's health, merging duplicates, starting over.

const world = browserWorld();

const subscribed = async (u: Parameters<typeof as>[1]) =>
  ((await as(world.t, u).get('/v1/subscriptions')).body.subscriptions as { feed_url: string; is_subscribed: boolean }[])
    .filter((s) => s.is_subscribed)
    .map((s) => s.feed_url)
    .sort();

test('devices: when each app last synced, and what castsync skipped from it and why', async () => {
  const { t } = world;
  const u = await t.user('health');
  await as(t, u).post(`/api/2/devices/${u.name}/pixel-7.json`, { caption: 'AntennaPod on Pixel 7', type: 'mobile' });
  await as(t, u).post(`/api/2/subscriptions/${u.name}/pixel-7.json`, {
    add: ['https://health.example/news.xml', 'www.example.com/no-scheme.xml', 'https://health.example/flip.xml'],
    remove: ['https://health.example/flip.xml'],
  });
  await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
    {
      podcast: 'https://health.example/news.xml',
      episode: 'https://health.example/1.mp3',
      action: 'play',
      position: 90,
      device: 'pixel-7',
    },
    {
      podcast: 'https://health.example/news.xml',
      episode: 'https://health.example/2.mp3',
      action: 'stream',
      device: 'pixel-7',
    },
  ]);
  for (const [width, height, name] of [
    [1280, 800, 'devices-health'],
    [390, 844, 'devices-health-phone'],
  ] as const) {
    const page = await world.newPage(width, height);
    expect(await world.signIn(page, u, '/web/devices')).toBe(200);
    expect(await text(page, 'main h2')).toEqual(['AntennaPod on Pixel 7']);
    const items = await text(page, '.skipped li');
    // Newest first: the episode batch came after the subscription upload.
    expect(items).toEqual([
      'action 1: action: one of download, play, delete, new',
      'www.example.com/no-scheme.xml: No protocol present',
      'https://health.example/flip.xml: both added and removed: kept subscribed',
    ]);
    await check(page, name);
  }
});

test('duplicates: the same podcast twice, shown side by side and merged into the one kept', async () => {
  const { t } = world;
  const u = await t.user('dups');
  const kept = 'https://feeds.example/show.xml';
  const gone = 'https://cdn.example.net/show/feed.xml';
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: kept }, { feed_url: gone }] });
  for (const [url, title] of [
    [kept, 'The Show'],
    [gone, 'The Show (mirror)'],
  ] as const) {
    await feedLearnt(t.db, url, { title, podcastGuid: 'a1b2c3d4-0000-5000-8000-000000000001' });
  }
  const page = await world.newPage();
  expect(await world.signIn(page, u, '/web/subscriptions')).toBe(200);
  expect(await submit(page, 'a[href="/web/duplicates"]')).toBe(200);
  expect(await text(page, '.card .hint')).toEqual([
    'Why: both feeds declare podcast guid a1b2c3d4-0000-5000-8000-000000000001.',
  ]);
  await check(page, 'duplicates');
  expect(await submit(page, `button[aria-label="Keep this one: ${kept}"]`)).toBe(200);
  expect(await text(page, '.notice.ok')).toContain('Merged 1 into one record.');
  await check(page, 'duplicates-merged');
  expect(await subscribed(u)).toEqual([kept]);
});

test('start over: a copy first, a confirmation, and the apps are told how to upload theirs again', async () => {
  const { t } = world;
  const u = await t.user('reset');
  await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, {
    add: ['https://reset.example/1.xml'],
    remove: [],
  });
  const page = await world.newPage(390, 844);
  expect(await world.signIn(page, u, '/web/account')).toBe(200);
  expect(await submit(page, 'a[href="/web/start-over"]')).toBe(200);
  expect(await page.$eval('a[href="/web/export"]', (a) => a.textContent)).toBe('Download my data');
  expect(await page.$eval('a[href="/web/opml"]', (a) => a.textContent)).toBe('OPML');
  await check(page, 'start-over');
  await page.type('#confirm', 'not-me');
  expect(await submit(page, 'form[action="/web/start-over"] button')).toBe(400);
  expect(await subscribed(u)).toEqual(['https://reset.example/1.xml']);
  await page.type('#confirm', u.name);
  expect(await submit(page, 'form[action="/web/start-over"] button')).toBe(200);
  expect(await text(page, '.notice.ok')).toEqual(['Done: 1 subscription record and 0 episode actions forgotten.']);
  await check(page, 'start-over-done');
  expect(await subscribed(u)).toEqual([]);
});

test('connect an app: each app with this server filled in, readable at desktop and phone width', async () => {
  const u = await world.t.user('connect');
  for (const [width, height, name] of [
    [1280, 800, 'connect-an-app'],
    [390, 844, 'connect-an-app-phone'],
  ] as const) {
    const page = await world.newPage(width, height);
    expect(await world.signIn(page, u, '/web/apps')).toBe(200);
    expect(await text(page, 'main h2')).toEqual([
      'AntennaPod',
      'KDE Kasts',
      'gPodder',
      'Podcini',
      'Music Assistant',
      'Apps of the Open Podcast API',
    ]);
    expect((await text(page, 'main code')).slice(0, 2)).toEqual([world.origin.replace('http://', ''), world.origin]);
    await check(page, name);
  }
});

test('activity: what the feed fetcher changed, with its source, and a move undone from the page', async () => {
  const { t } = world;
  const u = await t.user('fetched');
  const [moved, declared] = (
    await as(t, u).post('/v1/subscriptions', {
      subscriptions: [{ feed_url: 'https://old.example/feed.xml' }, { feed_url: 'https://guid.example/feed.xml' }],
    })
  ).body.success as { guid: string; feed_url: string }[];
  await moveFeed(t.db, u.id, moved!.guid, {
    from: moved!.feed_url,
    to: 'https://new.example/feed.xml',
    source: 'itunes:new-feed-url',
  });
  await adoptFeedGuid(t.db, u.id, declared!.guid, declared!.feed_url, 'a1b2c3d4-0000-5000-8000-00000000beef');
  for (const [width, height, name] of [
    [1280, 800, 'activity-feed-changes'],
    [390, 844, 'activity-feed-changes-phone'],
  ] as const) {
    const page = await world.newPage(width, height);
    expect(await world.signIn(page, u, '/web/activity')).toBe(200);
    expect(await text(page, 'main table caption')).toEqual(['Changes from feeds']);
    await check(page, name);
  }
  const page = await world.newPage();
  expect(await world.signIn(page, u, '/web/activity')).toBe(200);
  expect(await submit(page, 'button[aria-label="Undo the move to https://new.example/feed.xml"]')).toBe(200);
  expect((await text(page, '.notice.ok'))[0]).toMatch(/^The move was undone/);
  expect(await subscribed(u)).toEqual(['https://guid.example/feed.xml', 'https://old.example/feed.xml']);
});
