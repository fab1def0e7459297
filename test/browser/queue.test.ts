import pino from 'pino';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as } from '../helpers/app';
import { browserWorld, check, submit, text } from '../helpers/browser';
import { feedServer, xml } from '../helpers/feed-server';

// Favourites and Up next in a real browser: star an episode, queue three, reorder, play next, remove;
// what the page did is what the API serves. Axe-clean at desktop and phone widths.

const world = browserWorld();
let server: Awaited<ReturnType<typeof feedServer>>;
const titles = ['Morning news', 'Long interview', 'Short story', 'Listener mail'];
const feed = () => `<?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
  <channel><title>Queue Radio</title>
  ${titles
    .map(
      (
        title,
        i,
      ) => `<item><guid>q-${i}</guid><title>${title}</title><pubDate>Mon, 0${i + 1} Jan 2024 10:00:00 GMT</pubDate>
      <itunes:duration>${(i + 1) * 300}</itunes:duration><enclosure url="https://media.example/q-${i}.mp3" type="audio/mpeg"/></item>`,
    )
    .join('')}
  </channel></rss>`;

beforeAll(async () => {
  server = await feedServer({ '/feed': (req, res) => xml(feed())(req, res) });
});
afterAll(() => server?.close());

test('star an episode, queue three, reorder, play next, remove: the apps see the same', async () => {
  const { t } = world;
  const u = await t.user('queue');
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/feed') }] });
  await fetchDueFeeds(
    { db: t.db, logger: pino({ level: 'silent' }) },
    fetcherSettings(loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, { dotenvFile: false })),
  );
  const page = await world.newPage();
  expect(await world.signIn(page, u, '/web/subscriptions')).toBe(200);
  expect(await submit(page, 'a.title')).toBe(200);
  expect(await text(page, '.episode a.title')).toEqual([...titles].reverse());

  // Star one: the button says so, and the apps see it. Each row's buttons but Play are in its menu (a
  // <details>), opened as a person would.
  const inMenu = async (name: string, button: string) => {
    await page.click(`summary[aria-label="More actions: ${name}"]`);
    return submit(page, `button[aria-label="${button}: ${name}"]`);
  };
  expect(await inMenu('Short story', 'Favourite')).toBe(200);
  expect(await page.$eval('button[aria-label="Favourite: Short story"]', (b) => b.getAttribute('aria-pressed'))).toBe(
    'true',
  );
  const favourites = (await as(t, u).get(`/api/2/favorites/${u.name}.json`)).body as { title: string }[];
  expect(favourites.map((f) => f.title)).toEqual(['Short story']);

  // Queue three, in this order.
  for (const title of ['Morning news', 'Long interview', 'Short story']) {
    expect(await inMenu(title, 'Add to queue')).toBe(200);
  }
  expect(await text(page, '.episode a.badge')).toEqual(['in Up next', 'in Up next', 'in Up next']);
  await check(page, 'episodes-queue-buttons');
  await page.goto(`${world.origin}/web/queue`);
  expect(await text(page, '.queue-item a.title')).toEqual(['Morning news', 'Long interview', 'Short story']);

  // Reorder with the buttons: Short story up, then Morning news down.
  expect(await inMenu('Short story', 'Up')).toBe(200);
  expect(await inMenu('Morning news', 'Down')).toBe(200);
  expect(await text(page, '.queue-item a.title')).toEqual(['Short story', 'Morning news', 'Long interview']);

  // Play next from the feed's page: Listener mail goes to the top.
  await page.goBack();
  await page.goto(`${world.origin}/web/subscriptions`);
  expect(await submit(page, 'a.title')).toBe(200);
  expect(await inMenu('Listener mail', 'Play next')).toBe(200);
  await page.goto(`${world.origin}/web/queue`);
  expect(await text(page, '.queue-item a.title')).toEqual([
    'Listener mail',
    'Short story',
    'Morning news',
    'Long interview',
  ]);
  await check(page, 'up-next');

  // Remove one; the API serves the list as the page shows it.
  expect(await inMenu('Morning news', 'Remove from Up next')).toBe(200);
  const shown = await text(page, '.queue-item a.title');
  expect(shown).toEqual(['Listener mail', 'Short story', 'Long interview']);
  const served = (await as(t, u).get('/v1/queue')).body.items as { title: string }[];
  expect(served.map((i) => i.title)).toEqual(shown);

  // Favourites page, and both pages on a phone-sized screen.
  await page.goto(`${world.origin}/web/favourites`);
  expect(await text(page, '.episode .title')).toEqual(['Short story']);
  await check(page, 'favourites');
  const small = await world.newPage(390, 844);
  await world.signIn(small, u, '/web/queue');
  expect(await text(small, '.queue-item a.title')).toEqual(shown);
  await check(small, 'up-next-phone');
  await small.goto(`${world.origin}/web/favourites`);
  await check(small, 'favourites-phone');
}, 90_000);

test('a drag moves an episode, as the buttons do', async () => {
  const { t } = world;
  const u = await t.user('drag');
  const api = as(t, u);
  for (const n of [1, 2, 3]) {
    await api.post('/v1/queue/items', {
      podcast_url: 'https://drag.example/feed',
      enclosure_url: `https://drag.example/${n}.mp3`,
    });
  }
  const page = await world.newPage();
  await world.signIn(page, u, '/web/queue');
  expect(await page.$$eval('.queue-item', (items) => items.map((i) => i.getAttribute('draggable')))).toEqual([
    'true',
    'true',
    'true',
  ]);
  // The third dropped on the first: it takes the first place.
  await Promise.all([
    page.waitForNavigation(),
    page.evaluate(`(() => {
      const items = document.querySelectorAll('.queue-item');
      const data = new DataTransfer();
      items[2].dispatchEvent(new DragEvent('dragstart', { dataTransfer: data, bubbles: true }));
      items[0].dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    })()`),
  ]);
  expect(await text(page, '.queue-item .title')).toEqual([
    'https://drag.example/3.mp3',
    'https://drag.example/1.mp3',
    'https://drag.example/2.mp3',
  ]);
}, 60_000);
