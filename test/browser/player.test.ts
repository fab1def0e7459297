import pino from 'pino';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as } from '../helpers/app';
import { audio, wav } from '../helpers/audio';
import { browserWorld, check } from '../helpers/browser';
import { feedServer, xml } from '../helpers/feed-server';

// The player through Up next, in Chromium: the lock screen's metadata, speed and skip, keys; an episode
// that ends is a played action the apps see, leaves Up next, and the next one opens and plays.

const world = browserWorld();
let server: Awaited<ReturnType<typeof feedServer>>;

const feed = () => `<?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
  <channel><title>Player Radio</title>
    <item><guid>p-2</guid><title>Second</title><pubDate>Tue, 02 Jan 2024 10:00:00 GMT</pubDate>
      <enclosure url="${server.url('/second.wav')}" type="audio/wav"/></item>
    <item><guid>p-1</guid><title>First</title><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
      <enclosure url="${server.url('/first.wav')}" type="audio/wav"/></item>
  </channel></rss>`;

beforeAll(async () => {
  server = await feedServer({
    '/first.wav': audio(wav(20)),
    '/second.wav': audio(wav(20)),
    '/feed': (req, res) => xml(feed())(req, res),
  });
});
afterAll(() => server?.close());

/** The user subscribes to the feed, and it is fetched (once: after that it is not due). */
async function subscribe(api: ReturnType<typeof as>) {
  await api.post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/feed') }] });
  await fetchDueFeeds(
    { db: world.t.db, logger: pino({ level: 'silent' }) },
    fetcherSettings(loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.1/32' }, { dotenvFile: false })),
  );
}

/** A user subscribed to the feed, with its two episodes in Up next (First, then Second); their item ids. */
async function listenerWithQueue(name: string) {
  const u = await world.t.user(name);
  const api = as(world.t, u);
  await subscribe(api);
  for (const episode of ['first', 'second']) {
    const added = await api.post('/v1/queue/items', {
      podcast_url: server.url('/feed'),
      enclosure_url: server.url(`/${episode}.wav`),
    });
    expect(added.status).toBe(201);
  }
  const rows = await world.t.db.query<{ title: string; id: string }>(
    "SELECT title, id::text AS id FROM feed_items WHERE title IN ('First', 'Second')",
  );
  return {
    u,
    api,
    ids: Object.fromEntries(rows.rows.map((r) => [r.title, r.id])) as Record<'First' | 'Second', string>,
  };
}

test('lock-screen metadata, speed and skip; at the end: played for the apps, off Up next, the next one plays', async () => {
  const { origin } = world;
  const { u, api, ids } = await listenerWithQueue('player');
  const page = await world.newPage();
  // The lock screen's "previous" of the second is the first (its handler goes there within its first 3 s).
  await world.signIn(page, u, `/web/episodes/${ids.Second}`);
  expect(await page.$eval('#player', (a) => a.getAttribute('data-previous'))).toBe(`/web/episodes/${ids.First}?play=1`);
  await page.goto(`${origin}/web/episodes/${ids.First}`);
  expect(await page.$eval('#player', (a) => a.getAttribute('data-previous'))).toBeNull();
  expect(await page.$eval('#next', (a) => a.textContent)).toBe('Second');
  await page.waitForFunction('navigator.mediaSession.metadata && navigator.mediaSession.metadata.title === "First"');
  expect(await page.evaluate('navigator.mediaSession.metadata.artist')).toBe('Player Radio');
  await check(page, 'player');

  // Speed, kept for the podcast; skip back and forward with the buttons and the keys.
  await page.select('#speed', '2');
  expect(await page.evaluate('document.getElementById("player").playbackRate')).toBe(2);
  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  await page.evaluate('document.getElementById("player").currentTime = 12');
  await page.click('button[data-skip="-10"]');
  expect(await page.evaluate('Math.round(document.getElementById("player").currentTime)')).toBe(2);
  await page.evaluate('document.activeElement.blur()');
  await page.keyboard.press('l');
  expect(await page.evaluate('Math.round(document.getElementById("player").currentTime)')).toBe(20);

  // Play from 15 s: at the end the next episode opens and plays, at the kept speed.
  await page.evaluate('document.getElementById("player").currentTime = 15');
  await Promise.all([
    page.waitForNavigation({ timeout: 20_000 }),
    page.evaluate('document.getElementById("player").play()'),
  ]);
  expect(page.url()).toBe(`${origin}/web/episodes/${ids.Second}?play=1`);
  await page.waitForFunction('!document.getElementById("player").paused', { timeout: 10_000 });
  expect(await page.evaluate('document.getElementById("player").playbackRate')).toBe(2);
  expect(await page.evaluate('navigator.mediaSession.metadata.title')).toBe('Second');

  // The first is played for a gpodder app, and it left Up next.
  const actions = (await api.get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions as {
    episode: string;
    position: number;
    total: number;
    device: string;
  }[];
  const ended = actions.filter((a) => a.episode === server.url('/first.wav'));
  expect(ended.at(-1)).toMatchObject({ position: 20, total: 20, device: 'web' });
  const queue = (await api.get('/v1/queue')).body.items as { title: string }[];
  expect(queue.map((i) => i.title)).toEqual(['Second']);

  // Another browser: the podcast's speed is the person's, from the server.
  const small = await world.newPage(390, 844);
  await world.signIn(small, u, `/web/episodes/${ids.Second}`);
  await small.waitForSelector('#player-controls.ready');
  expect(await small.$eval('#speed', (s) => (s as unknown as { value: string }).value)).toBe('2');
  expect(await small.evaluate('document.getElementById("player").playbackRate')).toBe(2);
  await check(small, 'player-phone');
}, 90_000);

test('offline, the positions wait in the browser and arrive in order when it is back; a later app position still wins', async () => {
  const { t } = world;
  const u = await t.user('offline');
  const api = as(t, u);
  await subscribe(api);
  const first = (await t.db.query<{ id: string }>("SELECT id::text AS id FROM feed_items WHERE title = 'First'"))
    .rows[0]!.id;
  const page = await world.newPage();
  await world.signIn(page, u, `/web/episodes/${first}`);
  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  await page.evaluate('document.getElementById("player").currentTime = 5');

  await page.setOfflineMode(true);
  await page.evaluate('document.getElementById("player").play()');
  await page.waitForFunction('document.getElementById("player").currentTime >= 6.5', { timeout: 15_000 });
  await page.evaluate('document.getElementById("player").pause()');
  await page.waitForFunction('document.getElementById("player-status").textContent.includes("kept in this browser")');
  expect(await page.evaluate('JSON.parse(localStorage.getItem("castsync-pending-positions")).length')).toBe(1);

  // Meanwhile a phone, online, plays on to 15 s, a minute later.
  const later = new Date(Date.now() + 60_000).toISOString().slice(0, 19);
  await api.post(`/api/2/episodes/${u.name}.json`, [
    {
      podcast: server.url('/feed'),
      episode: server.url('/first.wav'),
      action: 'play',
      position: 15,
      total: 20,
      timestamp: later,
    },
  ]);

  // Back online: the kept position is sent, and the phone's later one stays the episode's position.
  await page.setOfflineMode(false);
  await page.waitForFunction('JSON.parse(localStorage.getItem("castsync-pending-positions")).length === 0', {
    timeout: 10_000,
  });
  const actions = (await api.get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions as {
    device?: string;
    position: number;
  }[];
  const fromWeb = actions.filter((a) => a.device === 'web');
  expect(fromWeb).toHaveLength(1);
  expect(fromWeb[0]!.position).toBeGreaterThanOrEqual(6);
  const records = (await api.get('/v1/episodes')).body.episodes as { playback_position: { value: number } }[];
  expect(records.map((r) => r.playback_position.value)).toEqual([15]);
}, 60_000);

test('the sleep timer at the end of the episode: it stops there, and the next one does not open', async () => {
  const { origin } = world;
  const { u, ids } = await listenerWithQueue('sleepy');
  const first = ids.First;
  const page = await world.newPage();
  await world.signIn(page, u, `/web/episodes/${first}`);
  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  await page.select('#sleep', 'end');
  expect(await page.$eval('#player-status', (p) => p.textContent)).toBe('Sleep timer: at the end of this episode.');
  await page.evaluate('document.getElementById("player").currentTime = 18.5');
  await page.evaluate('document.getElementById("player").play()');
  await page.waitForFunction('document.getElementById("player").ended', { timeout: 10_000 });
  await new Promise((r) => setTimeout(r, 1500));
  expect(page.url()).toBe(`${origin}/web/episodes/${first}`);
}, 60_000);

test('playing on between pages: Up next, Favourites, a feed, a star; the player in a bar, still playing', async () => {
  const { t, origin } = world;
  const u = await t.user('wander');
  const api = as(t, u);
  await subscribe(api);
  const first = (await t.db.query<{ id: string }>("SELECT id::text AS id FROM feed_items WHERE title = 'First'"))
    .rows[0]!.id;
  await api.post('/v1/queue/items', { podcast_url: server.url('/feed'), enclosure_url: server.url('/second.wav') });
  const page = await world.newPage();
  await world.signIn(page, u, `/web/episodes/${first}`);
  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  await page.evaluate('document.getElementById("player").play()');
  await page.waitForFunction('document.getElementById("player").currentTime > 0.5');
  const playing = async () => {
    const before = (await page.evaluate('document.getElementById("player").currentTime')) as number;
    await page.waitForFunction(`document.getElementById("player").currentTime > ${before + 0.3}`);
    expect(await page.evaluate('document.getElementById("player").paused')).toBe(false);
  };

  await page.click('nav a[href="/web/queue"]');
  await page.waitForFunction('document.querySelector("main h1").textContent === "Up next"');
  expect(page.url()).toBe(`${origin}/web/queue`);
  expect(await page.$eval('nav a[aria-current="page"]', (a) => a.textContent)).toBe('Up next');
  expect(await page.$eval('#now-playing a', (a) => a.textContent)).toBe('First');
  await playing();
  await check(page, 'now-playing');

  // A feed's episodes, and a star there: the form is sent in place.
  await page.click('nav a[href="/web/subscriptions"]');
  await page.waitForFunction('document.querySelector("main h1").textContent === "Subscriptions"');
  await page.click('main a.title');
  await page.waitForFunction('document.querySelector("main h1").textContent === "Player Radio"');
  // In the row's menu, opened as a person would.
  await page.click('summary[aria-label="More actions: Second"]');
  await page.click('button[aria-label="Favourite: Second"]');
  await page.waitForFunction(
    'document.querySelector(\'button[aria-label="Favourite: Second"]\').getAttribute("aria-pressed") === "true"',
  );
  await playing();
  expect(((await api.get(`/api/2/favorites/${u.name}.json`)).body as { title: string }[]).map((f) => f.title)).toEqual([
    'Second',
  ]);

  // Favourites, then back: still in place, still playing.
  await page.click('nav a[href="/web/favourites"]');
  await page.waitForFunction('document.querySelector("main h1").textContent === "Favourites"');
  await page.goBack();
  await page.waitForFunction('document.querySelector("main h1").textContent === "Player Radio"');
  await playing();

  // Continue listening, in place.
  await page.click('nav a[href="/web/in-progress"]');
  await page.waitForFunction('document.querySelector("main h1").textContent === "Continue listening"');
  expect(page.url()).toBe(`${origin}/web/in-progress`);
  await playing();

  // Up next, in place, with two episodes: the second dragged above the first, the page read again in place.
  await api.post('/v1/queue/items', { podcast_url: server.url('/feed'), enclosure_url: server.url('/first.wav') });
  await page.click('nav a[href="/web/queue"]');
  await page.waitForFunction('document.querySelectorAll("#queue .queue-item").length === 2');
  expect(await page.evaluate('[...document.querySelectorAll("#queue .queue-item")].map((i) => i.draggable)')).toEqual([
    true,
    true,
  ]);
  await page.evaluate(`(() => {
    const [top, below] = document.querySelectorAll('#queue .queue-item');
    const dataTransfer = new DataTransfer();
    below.dispatchEvent(new DragEvent('dragstart', { bubbles: true, dataTransfer }));
    top.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer }));
  })()`);
  await page.waitForFunction(
    'document.querySelector("#queue .queue-item") && document.querySelector("#queue .queue-item").textContent.includes("First")',
  );
  expect(((await api.get('/v1/queue')).body.items as { title: string }[]).map((i) => i.title)).toEqual([
    'First',
    'Second',
  ]);
  expect(page.url()).toBe(`${origin}/web/queue`);
  expect(await page.$eval('#now-playing a', (a) => a.textContent)).toBe('First');
  await playing();
}, 60_000);

test('at phone width: thumb-sized controls; the lock screen goes to the next and the previous in Up next; hidden, the position is saved; a sleep timer in minutes', async () => {
  const { origin } = world;
  const { u, api, ids } = await listenerWithQueue('thumbs');
  const page = await world.newPage(390, 844);
  // The lock screen's buttons call the handlers the page gave the Media Session: kept here to call them.
  await page.evaluateOnNewDocument(`(() => {
    const handlers = {};
    const session = navigator.mediaSession;
    const set = session.setActionHandler.bind(session);
    session.setActionHandler = (action, handler) => {
      handlers[action] = handler;
      set(action, handler);
    };
    globalThis.lockScreen = handlers;
  })()`);
  await world.signIn(page, u, `/web/episodes/${ids.First}`);
  await page.waitForSelector('#player-controls.ready');

  // Every control of the page is at least 44 px each way, and the player's scrubber as wide as the page's text.
  const small = await page.$$eval('main button, main select, #player-controls button', (els) =>
    els
      .map((el) => ({ el: el.outerHTML.slice(0, 60), box: el.getBoundingClientRect() }))
      .filter(({ box }) => box.width > 0 && (box.height < 44 || box.width < 44))
      .map(({ el }) => el),
  );
  expect(small).toEqual([]);
  expect(await page.$eval('#scrubber', (a) => a.getBoundingClientRect().width)).toBeGreaterThan(300);

  // Hidden while playing (the phone locked, another app): the position is written, without a pause.
  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  await page.evaluate('document.getElementById("player").currentTime = 4');
  await page.evaluate('document.getElementById("player").play()');
  await page.waitForFunction('document.getElementById("player").currentTime >= 5');
  await page.evaluate(`(() => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
  })()`);
  const webPlays = async () =>
    ((await api.get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions as { device?: string; position: number }[])
      .filter((a) => a.device === 'web')
      .map((a) => a.position);
  for (let i = 0; i < 50 && (await webPlays()).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
  expect(await webPlays()).toEqual([expect.any(Number)]);
  expect((await webPlays())[0]).toBeGreaterThanOrEqual(5);
  expect(await page.evaluate('document.getElementById("player").paused')).toBe(false);

  // A sleep timer of 5 minutes: when they have passed (the page's clock moved on), the player pauses.
  await page.select('#sleep', '5');
  expect(await page.$eval('#player-status', (p) => p.textContent)).toBe('Sleep timer: 5 min.');
  await page.evaluate(`(() => {
    const now = Date.now;
    Date.now = () => now() + 5 * 60_000 + 1000;
  })()`);
  await page.waitForFunction('document.getElementById("player").paused', { timeout: 5000 });
  expect(await page.evaluate('document.getElementById("sleep").value')).toBe('');

  // The lock screen's "next": the next in Up next opens and plays.
  await Promise.all([page.waitForNavigation(), page.evaluate('lockScreen.nexttrack()')]);
  expect(page.url()).toBe(`${origin}/web/episodes/${ids.Second}?play=1`);
  // The last of Up next has no "next".
  expect(await page.evaluate('lockScreen.nexttrack')).toBeNull();
  // Its "previous" past the first 3 s: back to the start of this one.
  await page.waitForFunction('document.getElementById("player").readyState >= 1');
  await page.evaluate('document.getElementById("player").pause()');
  await page.evaluate('document.getElementById("player").currentTime = 10');
  await page.evaluate('lockScreen.previoustrack()');
  expect(await page.evaluate('document.getElementById("player").currentTime')).toBe(0);
  expect(page.url()).toBe(`${origin}/web/episodes/${ids.Second}?play=1`);
  // Within its first 3 s: the one before it in Up next.
  await Promise.all([page.waitForNavigation(), page.evaluate('lockScreen.previoustrack()')]);
  expect(page.url()).toBe(`${origin}/web/episodes/${ids.First}?play=1`);
}, 60_000);
