import request from 'supertest';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { MAX_ITEMS } from '../../src/feeds/parse';
import { setSpeed, speedOf } from '../../src/episodes/player-repo';
import { urlHashOf } from '../../src/subscriptions/urls';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { feedServer, xml } from '../helpers/feed-server';
import { capturedLogger } from '../helpers/logs';
import { csrfOf, signedInAgent } from '../helpers/web';

// Listening: the fetcher reads each feed's items; the web page shows them with the progress every app
// synced, and its player's positions reach the apps like any app's. A loopback feed server serves the
// feeds, allowed as a home network would be.

let t: TestApp;
let server: Awaited<ReturnType<typeof feedServer>>;
const captured = capturedLogger('warn');
const settings = fetcherSettings(loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, { dotenvFile: false }));
const fetchAll = async () => {
  await t.db.query('UPDATE feeds SET next_fetch_at = now()');
  return fetchDueFeeds({ db: t.db, logger: captured.logger }, settings);
};

const media = (n: string) => `https://media.example.org/${n}.mp3`;
const ITEMS = {
  three: `<item><guid isPermaLink="false">ep-3</guid><title>Three</title><pubDate>Wed, 03 Jan 2024 10:00:00 GMT</pubDate>
    <itunes:duration>1:00:00</itunes:duration><podcast:season>2</podcast:season><podcast:episode>3</podcast:episode>
    <enclosure url="${media('3')}" type="audio/mpeg" length="57600000"/><link>https://example.org/3</link>
    <itunes:image href="https://example.org/3.jpg"/><description><![CDATA[<p>Show notes</p>]]></description></item>`,
  two: `<item><title>Two, without a guid</title><pubDate>Tue, 02 Jan 2024 10:00:00 GMT</pubDate>
    <itunes:duration>600</itunes:duration><enclosure url="${media('2')}" type="audio/mpeg"/></item>`,
  one: (url: string) => `<item><guid>ep-1</guid><title>One</title><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
    <enclosure url="${url}"/><description>Notes with <b>markup</b> &amp; more</description></item>`,
  nothing: '<item><title>Neither a guid nor an enclosure</title></item>',
};
const channel = (items: string) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0">
<channel><title>Listening Show</title>${items}</channel></rss>`;
let showBody = channel(ITEMS.three + ITEMS.two + ITEMS.one(media('1')) + ITEMS.nothing);
let brokenBody = channel(ITEMS.three);

const huge = channel(
  Array.from({ length: MAX_ITEMS + 500 }, (_, i) => {
    const day = new Date(Date.UTC(2020, 0, 1) + i * 86_400_000).toUTCString();
    return `<item><guid>h-${i}</guid><title>Huge ${i}</title><pubDate>${day}</pubDate><enclosure url="${media(`h${i}`)}"/></item>`;
  }).join(''),
);

let u: TestUser;
beforeAll(async () => {
  t = await testApp();
  server = await feedServer({
    '/show': (req, res) => xml(showBody)(req, res),
    '/huge': xml(huge),
    '/broken': (req, res) => xml(brokenBody)(req, res),
  });
  u = await t.user('listener');
  const posted = await as(t, u).post('/v1/subscriptions', {
    subscriptions: ['/show', '/huge', '/broken'].map((p) => ({ feed_url: server.url(p) })),
  });
  expect(posted.status).toBe(200);
  await fetchAll();
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

const itemsOf = async (path: string) =>
  (
    await t.db.query(
      `SELECT i.* FROM feed_items i JOIN feeds f ON f.url_hash = i.feed_hash
        WHERE f.feed_url = $1 ORDER BY i.published_at DESC NULLS LAST, i.ord`,
      [server.url(path)],
    )
  ).rows;
const idOf = async (title: string) =>
  (await t.db.query('SELECT id::text AS id FROM feed_items WHERE title = $1', [title])).rows[0].id as string;

test("the fetcher keeps a feed's items: by guid, else by enclosure; items with neither are skipped", async () => {
  const items = await itemsOf('/show');
  expect(items.map((i) => [i.item_key, i.title])).toEqual([
    ['ep-3', 'Three'],
    [media('2'), 'Two, without a guid'],
    ['ep-1', 'One'],
  ]);
  expect(items[0]).toMatchObject({
    guid: 'ep-3',
    enclosure_url: media('3'),
    enclosure_type: 'audio/mpeg',
    enclosure_length: 57600000,
    published_at: new Date('2024-01-03T10:00:00Z'),
    duration: 3600,
    link: 'https://example.org/3',
    artwork_url: 'https://example.org/3.jpg',
    season: 2,
    episode: 3,
  });
  expect(items[1]).toMatchObject({ guid: null, duration: 600 });
});

test('a huge feed keeps its newest items only', async () => {
  const items = await itemsOf('/huge');
  expect(items).toHaveLength(MAX_ITEMS);
  expect(items[0].title).toBe(`Huge ${MAX_ITEMS + 499}`);
  expect(items.at(-1).title).toBe('Huge 500');
});

test('a feed that turns malformed keeps the items of its last good fetch', async () => {
  expect((await itemsOf('/broken')).map((i) => i.title)).toEqual(['Three']);
  brokenBody = '<rss><channel><title>cut off';
  await fetchAll();
  expect((await itemsOf('/broken')).map((i) => i.title)).toEqual(['Three']);
  const feed = await t.db.query('SELECT failures, last_error FROM feeds WHERE feed_url = $1', [server.url('/broken')]);
  expect(feed.rows[0].failures).toBe(1);
  expect(feed.rows[0].last_error).toMatch(/not well-formed XML/);
});

test("a gpodder app's play shows as progress on the episode pages, in progress, and in the activity", async () => {
  const played = await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
    {
      podcast: server.url('/show'),
      episode: media('3'),
      guid: 'ep-3',
      action: 'play',
      started: 0,
      position: 1800,
      total: 3600,
      device: 'phone',
      timestamp: '2024-02-01T10:00:00',
    },
  ]);
  expect(played.status).toBe(200);
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const record = await t.db.query('SELECT guid FROM subscriptions WHERE feed_url = $1', [server.url('/show')]);
  const list = await agent.get(`/web/subscriptions/${record.rows[0].guid}/episodes`);
  expect(list.status).toBe(200);
  expect(list.text).toContain('<h1>Listening Show</h1>');
  expect(list.text).toContain('3 episodes');
  expect(list.text).toMatch(/<progress max="100" value="50" aria-label="Progress of Three">/);
  expect(list.text).toContain('30:00 of 1:00:00 on phone');
  expect(list.text).toContain('season 2, episode 3');

  const searched = await agent.get(`/web/subscriptions/${record.rows[0].guid}/episodes?q=without`);
  expect(searched.text).toContain('1 episode');
  expect(searched.text).toContain('Two, without a guid');

  const continuing = await agent.get('/web/in-progress');
  expect(continuing.text).toContain('Three');
  expect(continuing.text).toContain('Listening Show');
  const activity = await agent.get('/web/activity');
  expect(activity.text).toContain('<td class="wrap">Three</td>');
});

test('an enclosure that moved is still the episode: matched by guid', async () => {
  await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
    { podcast: server.url('/show'), episode: media('1'), guid: 'ep-1', action: 'play', position: 60, total: 120 },
  ]);
  showBody = channel(ITEMS.three + ITEMS.two + ITEMS.one(media('1-moved')));
  await fetchAll();
  expect((await itemsOf('/show')).find((i) => i.guid === 'ep-1').enclosure_url).toBe(media('1-moved'));
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const page = await agent.get(`/web/episodes/${await idOf('One')}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain('Stopped at 1:00 of 2:00');
  expect(page.text).toContain(`src="${media('1-moved')}"`);
});

test("the web player's position reaches the gpodder and Nextcloud apps' next sync", async () => {
  // The apps' last sync, then the player's write, then their next sync.
  const last = await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0`);
  const since = last.body.timestamp as number;
  const fromWeb = (actions: { device?: string }[]) => actions.filter((a) => a.device === 'web');
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const id = await idOf('Two, without a guid');
  const page = await agent.get(`/web/episodes/${id}`);
  expect(page.text).toMatch(/<script src="\/static\/player\.js\?v=[\w-]+" defer><\/script>/);
  expect(page.text).toContain(`data-save="/web/episodes/${id}/position"`);
  const saved = await agent
    .post(`/web/episodes/${id}/position`)
    .type('form')
    .send({ _csrf: csrfOf(page.text), started: '10', position: '95', total: '600' });
  expect(saved.status).toBe(204);

  const gpodder = await as(t, u).get(`/api/2/episodes/${u.name}.json?since=${since}`);
  expect(fromWeb(gpodder.body.actions)).toEqual([
    expect.objectContaining({
      podcast: server.url('/show'),
      episode: media('2'),
      action: 'play',
      started: 10,
      position: 95,
      total: 600,
      device: 'web',
    }),
  ]);
  const nextcloud = await as(t, u).get(`/index.php/apps/gpoddersync/episode_action?since=${since}`);
  expect(fromWeb(nextcloud.body.actions)).toEqual([expect.objectContaining({ episode: media('2'), position: 95 })]);

  // Without the form token the write is refused; a position that is not a number is refused.
  expect((await agent.post(`/web/episodes/${id}/position`).type('form').send({ position: '1' })).status).toBe(403);
  const bad = await agent
    .post(`/web/episodes/${id}/position`)
    .type('form')
    .send({ _csrf: csrfOf(page.text), position: 'soon' });
  expect(bad.status).toBe(400);
});

test("a position sent later keeps the browser's time of it; a time that is not one is refused, one ahead is now", async () => {
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const id = await idOf('One');
  const page = await agent.get(`/web/episodes/${id}`);
  const send = (at: string) =>
    agent
      .post(`/web/episodes/${id}/position`)
      .type('form')
      .send({ _csrf: csrfOf(page.text), position: '42', at });
  expect((await send('yesterday')).status).toBe(400);
  expect((await send('2025-05-01T08:00:00.000Z')).status).toBe(204);
  expect((await send('2999-01-01T00:00:00.000Z')).status).toBe(204);
  const actions = (await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions as {
    device?: string;
    position: number;
    timestamp: string;
  }[];
  const stamps = actions.filter((a) => a.device === 'web' && a.position === 42).map((a) => a.timestamp);
  expect(stamps).toHaveLength(2);
  expect(stamps).toContain('2025-05-01T08:00:00');
  expect(stamps.some((s) => s.startsWith(new Date().toISOString().slice(0, 4)))).toBe(true);
});

/** The player's speed chosen for the podcast of episode `id`. */
const speedFor = (agent: Awaited<ReturnType<typeof signedInAgent>>['agent'], id: string, csrf: string, value: string) =>
  agent.post(`/web/episodes/${id}/speed`).type('form').send({ _csrf: csrf, speed: value });

test("the player's speed is kept for the podcast on the server; a speed it does not offer is refused", async () => {
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  // Two episodes of the same podcast ("Three" is in two feeds).
  const [one, three] = [await idOf('One'), await idOf('Two, without a guid')];
  const page = await agent.get(`/web/episodes/${one}`);
  expect(page.text).toContain('<option value="1" selected>1×</option>');
  const speed = (value: string) => speedFor(agent, one, csrfOf(page.text), value);
  expect((await speed('7')).status).toBe(400);
  expect((await speed('1.5')).status).toBe(204);
  // Another episode of the same podcast plays at it too.
  expect((await agent.get(`/web/episodes/${three}`)).text).toContain('<option value="1.5" selected>1.5×</option>');
  expect((await speed('1')).status).toBe(204);
  expect((await agent.get(`/web/episodes/${three}`)).text).toContain('<option value="1" selected>1×</option>');
});

test("a podcast's speed follows its feed to the URL it moves to; chosen again there, the earlier one gives way", async () => {
  const v = await t.user('speed-moves');
  const [before, after] = ['https://speed.example/before.xml', 'https://speed.example/after.xml'];
  const [hashBefore, hashAfter] = [urlHashOf(before)!, urlHashOf(after)!];
  const posted = await as(t, v).post('/v1/subscriptions', { subscriptions: [{ feed_url: before }] });
  await setSpeed(t.db, v.id, hashBefore, 1.5);
  const guid = posted.body.success[0].guid as string;
  expect((await as(t, v).patch(`/v1/subscriptions/${guid}`, { new_feed_url: after })).status).toBe(200);
  expect(await speedOf(t.db, v.id, hashAfter)).toBe(1.5);
  await setSpeed(t.db, v.id, hashAfter, 2);
  expect([await speedOf(t.db, v.id, hashAfter), await speedOf(t.db, v.id, hashBefore)]).toEqual([2, 2]);
  // The person's own speed again: no speed of its own under any URL.
  await setSpeed(t.db, v.id, hashAfter, 1);
  expect([await speedOf(t.db, v.id, hashAfter), await speedOf(t.db, v.id, hashBefore)]).toEqual([undefined, undefined]);
});

test("the person's own speed: every podcast plays at it, except one with a speed of its own", async () => {
  const other = await t.user('ownspeed');
  const posted = await as(t, other).post('/v1/subscriptions', {
    subscriptions: ['/show', '/huge'].map((p) => ({ feed_url: server.url(p) })),
  });
  expect(posted.status).toBe(200);
  const { agent } = await signedInAgent(t.app, other.name, other.password);
  // Episodes of two podcasts.
  const [one, three] = [await idOf('One'), await idOf(`Huge ${MAX_ITEMS + 499}`)];
  const account = await agent.get('/web/account');
  expect(account.text).toContain('<option value="1" selected>1×</option>');
  const settings = (fields: Record<string, string>) =>
    agent
      .post('/web/account/player')
      .type('form')
      .send({ _csrf: csrfOf(account.text), skip_back: '10', skip_forward: '30', ...fields });
  expect((await settings({ speed: '4' })).status).toBe(400);
  const saved = await settings({ speed: '1.25' });
  expect(saved.status).toBe(200);
  expect(saved.text).toContain('Your player settings were saved.');
  expect(saved.text).toMatch(/id="player-speed"[^]*<option value="1.25" selected>1.25×<\/option>/);
  const selected = async (id: string) =>
    /<select id="speed"[^]*?<option value="([\d.]+)" selected>/.exec(
      (await agent.get(`/web/episodes/${id}`)).text,
    )?.[1];
  expect(await selected(one)).toBe('1.25');
  expect(await selected(three)).toBe('1.25');
  // One podcast at 1×: kept for it, though it is not the person's speed.
  const page = await agent.get(`/web/episodes/${one}`);
  const speed = (value: string) => speedFor(agent, one, csrfOf(page.text), value);
  expect((await speed('1')).status).toBe(204);
  expect(await selected(one)).toBe('1');
  expect(await selected(three)).toBe('1.25');
  // The person's speed chosen for a podcast is no speed of its own: it follows the person's again.
  expect((await speed('1.25')).status).toBe(204);
  await settings({ speed: '2' });
  expect(await selected(one)).toBe('2');
  // A form without a speed keeps it.
  await settings({ skip_back: '15' });
  expect(await selected(three)).toBe('2');
  expect((await agent.get(`/web/episodes/${three}`)).text).toContain('data-skip-back="15"');
});

test('mark played works without script, and says so', async () => {
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const id = await idOf('Three');
  const page = await agent.get(`/web/episodes/${id}`);
  const marked = await agent
    .post(`/web/episodes/${id}/played`)
    .type('form')
    .send({ _csrf: csrfOf(page.text), back: `/web/episodes/${id}` });
  expect(marked.status).toBe(303);
  expect(marked.headers.location).toBe(`/web/episodes/${id}`);
  const after = await agent.get(`/web/episodes/${id}`);
  expect(after.text).toContain('Played on web');
  expect(after.text).not.toContain('Mark played');
  expect((await agent.get('/web/in-progress')).text).not.toContain('>Three<');
  // A play to the end that starts there: marking is no listening for the statistics.
  const play = await t.db.query(
    "SELECT started, position, total FROM episode_actions WHERE user_id = $1 AND action = 'play' ORDER BY id DESC LIMIT 1",
    [u.id],
  );
  expect(play.rows[0].started).toBe(play.rows[0].position);
  expect(play.rows[0].position).toBe(play.rows[0].total);
});

test("another user's feeds' episodes are not theirs to see", async () => {
  const other = await t.user('stranger');
  const { agent } = await signedInAgent(t.app, other.name, other.password);
  expect((await agent.get(`/web/episodes/${await idOf('Three')}`)).status).toBe(404);
  expect((await agent.get('/web/episodes/not-a-number')).status).toBe(404);
  expect((await request(t.app).get(`/web/episodes/${await idOf('Three')}`)).status).toBe(303);
});

test('the player page is a page of the subscriptions in the navigation, not of Continue', async () => {
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const page = await agent.get(`/web/episodes/${await idOf('One')}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain('href="/web/subscriptions" aria-current="page"');
  expect(page.text).not.toContain('href="/web/in-progress" aria-current="page"');
});
