import { as } from '../helpers/app';
import { browserWorld, check, submit, text } from '../helpers/browser';
import { fakeDirectory } from '../helpers/directory';

// Statistics and finding podcasts in a real browser, at desktop and phone widths: the charts and their
// tables, a year in review, a search of a directory on loopback, a preview, and one click to subscribe.

const feed = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Tech Weekly</title><description>News about technology, every week.</description>
<item><title>Week 2: chips</title><pubDate>Tue, 09 Jan 2024 10:00:00 GMT</pubDate><enclosure url="https://media.example/2.mp3"/></item>
<item><title>Week 1: batteries</title><pubDate>Tue, 02 Jan 2024 10:00:00 GMT</pubDate><enclosure url="https://media.example/1.mp3"/></item>
</channel></rss>`;

let dir: Awaited<ReturnType<typeof fakeDirectory>>;
beforeAll(async () => {
  dir = await fakeDirectory({ '/feeds/weekly.xml': feed });
});
afterAll(() => dir?.close());
const world = browserWorld(() => ({
  DIRECTORY: 'itunes',
  DIRECTORY_URL: dir.url('/itunes'),
  FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8',
}));

/** A month of plays on two devices, ending today: something on most days. */
function history(today: Date) {
  return Array.from({ length: 40 }, (_, i) => {
    const at = new Date(today.getTime() - (i % 30) * 86_400_000 - 3_600_000);
    const episode = Math.floor(i / 3);
    return {
      podcast: `https://stats.example/${episode % 3}.xml`,
      episode: `https://stats.example/${episode}.mp3`,
      action: 'play',
      timestamp: at.toISOString().slice(0, 19),
      started: (i % 3) * 600,
      position: (i % 3) * 600 + 900,
      total: 1800,
      device: i % 2 ? 'phone' : 'laptop',
    };
  });
}

test('the statistics page draws its charts, with tables, and a year in review; clean at both widths', async () => {
  const { t } = world;
  const u = await t.user('stats');
  expect((await as(t, u).post(`/api/2/episodes/${u.name}.json`, history(new Date()))).status).toBe(200);
  const page = await world.newPage();
  expect(await world.signIn(page, u, '/web/stats')).toBe(200);
  expect(await page.$$eval('svg.chart[role="img"]', (s) => s.length)).toBe(3);
  expect(await text(page, 'svg.chart title[id$="-title"]')).toEqual([
    'The last 30 days',
    'The last 12 weeks, by week',
    'The last 12 months',
  ]);
  expect(
    await page.$$eval('svg.chart rect', (r) => r.filter((x) => Number(x.getAttribute('height')) > 0).length),
  ).toBeGreaterThan(10);
  expect(await text(page, '.figures dt')).toContain('Longest streak');
  // A chart's table (the nav's More menu is a details too, hidden at this width).
  await page.click('main details summary');
  await check(page, 'stats');
  const year = String(new Date(Date.now() - 3_600_000).getUTCFullYear());
  expect(await submit(page, `a[href="/web/stats/${year}"]`)).toBe(200);
  expect(await text(page, 'h1')).toEqual([`${year} in review`]);
  await check(page, 'year-in-review');
  const phone = await world.newPage(390, 844);
  await world.signIn(phone, u, '/web/stats');
  await check(phone, 'stats-phone');
});

test('search, preview and subscribe in one click; clean at both widths', async () => {
  const { t } = world;
  const u = await t.user('finder');
  const page = await world.newPage();
  expect(await world.signIn(page, u, '/web/search')).toBe(200);
  await page.type('#q', 'Tech');
  expect(await submit(page, 'form[role="search"] button')).toBe(200);
  expect(await text(page, '.feed .title')).toEqual(['Tech Weekly']);
  await check(page, 'search');
  // The directory's feed URL is not on loopback: preview the fake's own copy of the feed.
  await page.goto(
    `${world.origin}/web/search/preview?${new URLSearchParams({ url: dir.url('/feeds/weekly.xml'), q: 'Tech' })}`,
  );
  expect(await text(page, 'h1')).toEqual(['Tech Weekly']);
  expect(await text(page, '.episode .wrap')).toEqual(['Week 2: chips', 'Week 1: batteries']);
  await check(page, 'preview');
  expect(await submit(page, '.feed .actions button')).toBe(200);
  expect(await text(page, '.notice.ok')).toEqual([`Subscribed to ${dir.url('/feeds/weekly.xml')}`]);
  const phone = await world.newPage(390, 844);
  await world.signIn(phone, u, '/web/search?q=Tech');
  expect(await text(phone, '.feed .title')).toEqual(['Tech Weekly']);
  await check(phone, 'search-phone');
});
