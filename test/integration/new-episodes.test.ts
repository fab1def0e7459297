import request from 'supertest';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { feedServer, xml } from '../helpers/feed-server';
import { capturedLogger } from '../helpers/logs';
import { csrfOf, signedInAgent } from '../helpers/web';

// New episodes: the newest episodes of every subscription, less those played by the one rule and those
// dismissed, paged; where a signed-in person lands. A loopback feed server serves the feeds.

let t: TestApp;
let server: Awaited<ReturnType<typeof feedServer>>;
const captured = capturedLogger('warn');
const settings = fetcherSettings(loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, { dotenvFile: false }));

const media = (n: string) => `https://media.example.org/${n}.mp3`;
const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toUTCString();
const item = (key: string, title: string, age: number, duration = '') =>
  `<item><guid>${key}</guid><title>${title}</title><pubDate>${daysAgo(age)}</pubDate>${duration}
    <enclosure url="${media(key)}" type="audio/mpeg"/></item>`;
const channel = (title: string, items: string) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>${title}</title>${items}</channel></rss>`;

const alpha = channel(
  'Alpha Show',
  item('a1', 'Alpha one', 1, '<itunes:duration>600</itunes:duration>') +
    item('a2', 'Alpha two', 3, '<itunes:duration>1200</itunes:duration>') +
    item('a-old', 'Alpha of long ago', 40),
);
let alphaBody = alpha;
const beta = channel(
  'Beta Show',
  item('b1', 'Beta one', 2, '<itunes:duration>1:00:00</itunes:duration>') + item('b2', 'Beta two', 4),
);
// 60 episodes, an hour apart: two pages.
const many = channel(
  'Many Show',
  Array.from({ length: 60 }, (_, i) => item(`m${i}`, `Many ${i}`, 5 + i / 24)).join(''),
);

const fetchAll = async () => {
  await t.db.query('UPDATE feeds SET next_fetch_at = now()');
  await fetchDueFeeds({ db: t.db, logger: captured.logger }, settings);
};

let u: TestUser;
let v: TestUser;
let w: TestUser;
const subscribe = async (who: TestUser, paths: string[]) =>
  expect(
    (await as(t, who).post('/v1/subscriptions', { subscriptions: paths.map((p) => ({ feed_url: server.url(p) })) }))
      .status,
  ).toBe(200);

beforeAll(async () => {
  t = await testApp();
  server = await feedServer({
    '/alpha': (req, res) => xml(alphaBody)(req, res),
    '/beta': xml(beta),
    '/many': xml(many),
  });
  [u, v, w] = [await t.user('newcomer'), await t.user('neighbour'), await t.user('pager')];
  await subscribe(u, ['/alpha', '/beta']);
  await subscribe(v, ['/alpha']);
  await subscribe(w, ['/many']);
  await fetchAll();
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

const titles = (html: string) =>
  [...html.matchAll(/class="title" href="\/web\/episodes\/\d+">([^<]*)<\/a>/g)].map((m) => m[1]);
const idOf = async (title: string) =>
  (await t.db.query('SELECT id::text AS id FROM feed_items WHERE title = $1', [title])).rows[0].id as string;
const newPage = async (who: TestUser, query = '') => {
  const { agent } = await signedInAgent(t.app, who.name, who.password);
  const page = await agent.get(`/web/new${query}`);
  expect(page.status).toBe(200);
  return { agent, page, csrf: csrfOf(page.text) };
};
const upload = async (who: TestUser, actions: Record<string, unknown>[]) =>
  expect((await as(t, who).post(`/api/2/episodes/${who.name}.json`, actions)).status).toBe(200);

test("the page lists every subscription's episodes of the last 30 days, newest first, each with its buttons", async () => {
  const { page } = await newPage(u);
  expect(page.text).toContain('<h1>New episodes</h1>');
  expect(titles(page.text)).toEqual(['Alpha one', 'Beta one', 'Alpha two', 'Beta two']);
  expect(page.text).toContain('Beta Show · <time');
  expect(page.text).toContain(' · 1:00:00');
  const id = await idOf('Alpha one');
  expect(page.text).toContain(`href="/web/episodes/${id}?play=1" aria-label="Play: Alpha one"`);
  for (const form of ['played', 'queue']) expect(page.text).toContain(`action="/web/episodes/${id}/${form}"`);
  expect(page.text).toContain(`action="/web/new/${id}/dismiss"`);
  expect(page.text).toMatch(/<a href="\/web\/new" aria-current="page">New episodes<\/a>/);
});

test('an episode played to the end by an app leaves the page, by its total or else by the feed duration', async () => {
  await upload(u, [
    // To the end by the play's total.
    {
      podcast: server.url('/beta'),
      episode: media('b2'),
      guid: 'b2',
      action: 'play',
      started: 0,
      position: 900,
      total: 900,
      device: 'phone',
      timestamp: '2026-01-01T10:00:00',
    },
    // No total: to the end by the feed's itunes:duration (1:00:00).
    {
      podcast: server.url('/beta'),
      episode: media('b1'),
      guid: 'b1',
      action: 'play',
      started: 0,
      position: 3600,
      device: 'phone',
      timestamp: '2026-01-01T11:00:00',
    },
    // Begun only: stays, with its progress.
    {
      podcast: server.url('/alpha'),
      episode: media('a2'),
      guid: 'a2',
      action: 'play',
      started: 0,
      position: 600,
      total: 1200,
      device: 'phone',
      timestamp: '2026-01-01T12:00:00',
    },
  ]);
  const { page } = await newPage(u);
  expect(titles(page.text)).toEqual(['Alpha one', 'Alpha two']);
  expect(page.text).toContain('10:00 of 20:00 on phone');
});

test('Mark played and Add to queue on the page come back to it; a played one leaves it', async () => {
  const { agent, csrf } = await newPage(u);
  const id = await idOf('Alpha two');
  const queued = await agent
    .post(`/web/episodes/${id}/queue`)
    .type('form')
    .send({ _csrf: csrf, at: 'end', back: '/web/new' });
  expect([queued.status, queued.headers.location]).toEqual([303, '/web/new']);
  const played = await agent.post(`/web/episodes/${id}/played`).type('form').send({ _csrf: csrf, back: '/web/new' });
  expect([played.status, played.headers.location]).toEqual([303, '/web/new']);
  expect(titles((await agent.get('/web/new')).text)).toEqual(['Alpha one']);
});

test("a dismissed episode leaves the dismisser's page only; a dismissal needs the form token and a subscription", async () => {
  const { agent, csrf } = await newPage(u);
  const id = await idOf('Alpha one');
  expect((await agent.post(`/web/new/${id}/dismiss`).type('form').send({ back: '/web/new' })).status).toBe(403);
  const gone = await agent.post(`/web/new/${id}/dismiss`).type('form').send({ _csrf: csrf, back: '/web/new?page=1' });
  expect([gone.status, gone.headers.location]).toEqual([303, '/web/new?page=1']);
  expect(titles((await agent.get('/web/new')).text)).toEqual([]);
  expect((await agent.get('/web/new')).text).toContain('Every episode on this page is played.');
  // Another subscriber still has it.
  expect(titles((await newPage(v)).page.text)).toEqual(['Alpha one', 'Alpha two']);
  // Not a subscriber of that feed: no such episode.
  const other = await newPage(w);
  const refused = await other.agent.post(`/web/new/${id}/dismiss`).type('form').send({ _csrf: other.csrf });
  expect(refused.status).toBe(404);
  // Elsewhere than the page: back to the page.
  const off = await agent
    .post(`/web/new/${id}/dismiss`)
    .type('form')
    .send({ _csrf: csrf, back: 'https://evil.example/' });
  expect(off.headers.location).toBe('/web/new');

  // The feed moves the episode's audio: it is the same episode by its guid, still dismissed.
  alphaBody = alpha.replace(media('a1'), media('a1-moved'));
  await fetchAll();
  const moved = (await agent.get('/web/new')).text;
  expect(titles(moved)).toEqual([]);
  expect(titles((await newPage(v)).page.text)).toEqual(['Alpha one', 'Alpha two']);
});

test('pages of 50 with links both ways; paging is by items, so a played one leaves its page one short', async () => {
  const first = await newPage(w);
  expect(titles(first.page.text)).toEqual(Array.from({ length: 50 }, (_, i) => `Many ${i}`));
  expect(first.page.text).toContain('Page 1 of 2');
  expect(first.page.text).toContain('<a href="/web/new?page=2" rel="next">Next page</a>');
  expect(first.page.text).not.toContain('rel="prev"');
  const second = await first.agent.get('/web/new?page=2');
  expect(titles(second.text)).toEqual(Array.from({ length: 10 }, (_, i) => `Many ${50 + i}`));
  expect(second.text).toContain('<a href="/web/new?page=1" rel="prev">Previous page</a>');
  expect(second.text).not.toContain('rel="next"');

  await first.agent
    .post(`/web/episodes/${await idOf('Many 3')}/played`)
    .type('form')
    .send({ _csrf: first.csrf, back: '/web/new' });
  const after = titles((await first.agent.get('/web/new')).text);
  expect(after).toHaveLength(49);
  expect(after).not.toContain('Many 3');
  expect(titles((await first.agent.get('/web/new?page=2')).text)).toHaveLength(10);
});

test('signed out, the page leads to sign-in; signing in lands on it, and `next` still leads elsewhere', async () => {
  const out = await request(t.app).get('/web/new');
  expect([out.status, out.headers.location]).toEqual([303, '/?next=%2Fweb%2Fnew']);

  const agent = request.agent(t.app);
  const front = await agent.get('/');
  const landed = await agent
    .post('/web/sign-in')
    .type('form')
    .send({ _csrf: csrfOf(front.text), username: u.name, password: u.password });
  expect([landed.status, landed.headers.location]).toEqual([303, '/web/new']);
  expect((await agent.get('/')).headers.location).toBe('/web/new');
  // `next` still leads elsewhere (signing in with it: web.test.ts).
  expect((await agent.get('/?next=/web/queue')).headers.location).toBe('/web/queue');
});
