import request from 'supertest';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { archiveTextOf } from '../../src/transfer/archive';
import { runImport } from '../../src/transfer/service';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { syncEpisode } from '../helpers/episodes';
import { feedServer, xml } from '../helpers/feed-server';
import { capturedLogger } from '../helpers/logs';
import { csrfOf, signedInAgent } from '../helpers/web';

// One episode, one state (docs/glossary.md, "played"; src/episodes/played.ts): whatever door writes an
// episode's state, in whatever order the writes arrive, every door reads the same. Each scenario writes
// through the writers named, in both arrival orders, and asks every reader; they must all agree with the
// one rule. A reader given a rule of its own again (the feed's duration ignored, a later "new" ignored)
// disagrees in one of these scenarios.

let t: TestApp;
let server: Awaited<ReturnType<typeof feedServer>>;
const captured = capturedLogger('warn');
const settings = fetcherSettings(loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, { dotenvFile: false }));

const ENCLOSURE = 'https://media.example.org/one-state/1.mp3';
// The feed says 2 minutes; several apps send no total.
const FEED = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>One State Show</title>
<item><guid>one-state-1</guid><title>The One Episode</title><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
<itunes:duration>00:02:00</itunes:duration><enclosure url="${ENCLOSURE}" type="audio/mpeg"/></item>
</channel></rss>`;

beforeAll(async () => {
  t = await testApp();
  server = await feedServer({ '/one-state': xml(FEED) });
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

/** A person with the feed fetched, the episode on Up next and starred, signed in on the web page. */
type Person = {
  u: TestUser;
  podcast: string;
  podcastGuid: string;
  itemId: string;
  web: Awaited<ReturnType<typeof signedInAgent>>['agent'];
};

async function person(): Promise<Person> {
  const u = await t.user('state');
  const podcast = server.url('/one-state');
  expect((await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: podcast }] })).status).toBe(200);
  await t.db.query('UPDATE feeds SET next_fetch_at = now()');
  await fetchDueFeeds({ db: t.db, logger: captured.logger }, settings);
  const podcastGuid = (await as(t, u).get('/v1/subscriptions')).body.subscriptions[0].guid as string;
  const item = await t.db.query<{ id: string }>('SELECT id::text AS id FROM feed_items WHERE enclosure_url = $1', [
    ENCLOSURE,
  ]);
  const p = {
    u,
    podcast,
    podcastGuid,
    itemId: item.rows[0]!.id,
    web: (await signedInAgent(t.app, u.name, u.password)).agent,
  };
  const episode = { podcast_guid: podcastGuid, enclosure_url: ENCLOSURE };
  expect((await as(t, u).post('/v1/queue/items', { ...episode })).status).toBeLessThan(300);
  const star = await as(t, u).post('/v1/episodes', [
    { ...episode, favorite_status: { value: true, timestamp: '2024-01-01T00:00:00Z' } },
  ]);
  expect(star.body.failure).toEqual([]);
  return p;
}

// The app's times of the writes: 10:00, 10:01, ... on one day.
const at = (minute: number) => `2026-10-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
const unix = (minute: number) => at(minute).slice(0, 19);

/** A write through one door, at the app's time `minute`. */
type Write = { door: string; run: (p: Person) => Promise<void> };

const gpodder = (action: Record<string, unknown>, label: string): Write => ({
  door: `gpodder ${label}`,
  run: async (p) => {
    const r = await as(t, p.u)
      .post(`/api/2/episodes/${p.u.name}.json`)
      .send([{ podcast: p.podcast, episode: ENCLOSURE, device: 'phone', ...action }]);
    expect(r.status).toBe(200);
  },
});
const gpodderPlay = (minute: number, position: number, total?: number) =>
  gpodder(
    { action: 'play', timestamp: unix(minute), started: 0, position, ...(total !== undefined && { total }) },
    `play to ${position}${total === undefined ? ' without total' : ` of ${total}`}`,
  );
const gpodderNew = (minute: number) => gpodder({ action: 'new', timestamp: unix(minute) }, 'new');

const v1 = (minute: number, field: Record<string, unknown>, label: string): Write => ({
  door: `/v1/episodes ${label}`,
  run: async (p) => {
    const r = await as(t, p.u).post('/v1/episodes', [
      { podcast_guid: p.podcastGuid, enclosure_url: ENCLOSURE, ...field },
    ]);
    expect(r.body.failure).toEqual([]);
  },
});
const v1Played = (minute: number, value: boolean) =>
  v1(minute, { played_status: { value, timestamp: at(minute) } }, `played ${value}`);
const v1Position = (minute: number, value: number) =>
  v1(minute, { playback_position: { value, timestamp: at(minute) } }, `position ${value}`);

const sync = (minute: number, action: string, data: Record<string, unknown> = {}): Write => ({
  door: `/api/v1/sync ${action}`,
  run: async (p) => {
    const r = await syncEpisode(t, p.u, action, at(minute), {
      podcast_url: p.podcast,
      enclosure_url: ENCLOSURE,
      ...data,
    });
    expect(r.status).toBe(200);
    expect(r.body.results[0].status).not.toBe('rejected');
  },
});

/** The web page's writes are the server's time: now, after every app time above. */
const webPlayed: Write = {
  door: 'web Mark played',
  run: async (p) => {
    const page = await p.web.get(`/web/episodes/${p.itemId}`);
    const r = await p.web
      .post(`/web/episodes/${p.itemId}/played`)
      .type('form')
      .send({ _csrf: csrfOf(page.text) });
    expect(r.status).toBeLessThan(400);
  },
};
const webPosition = (position: number): Write => ({
  door: `web player at ${position}`,
  run: async (p) => {
    const page = await p.web.get(`/web/episodes/${p.itemId}`);
    const r = await p.web
      .post(`/web/episodes/${p.itemId}/position`)
      .set('x-csrf-token', csrfOf(page.text))
      .type('form')
      .send({ _csrf: csrfOf(page.text), position: String(position), started: '0' });
    expect(r.status).toBeLessThan(400);
  },
});

/** Actions written by another person, moved over in an archive: the import is the writer. */
const archived = (...writes: Write[]): Write => ({
  door: `archive import of [${writes.map((w) => w.door).join(', ')}]`,
  run: async (p) => {
    const donor = await person();
    for (const w of writes) await w.run(donor);
    const { text: document } = await archiveTextOf(t.db, donor.u.id, donor.u.name);
    await runImport(
      t.db,
      p.u.id,
      { source: 'archive', document },
      {
        policy: { allowPrivate: true, allowCidrs: [] },
        limits: { timeoutMs: 5000, maxBytes: 1 << 20, totalMs: 60_000, totalBytes: 1 << 24 },
        dryRun: false,
        progress: () => undefined,
      },
    );
  },
});

/** What every reader says of the episode. */
async function readAll(p: Person): Promise<Record<string, unknown>> {
  const v1Episode = (await as(t, p.u).get('/v1/episodes')).body.episodes.find(
    (e: { enclosure_url: string }) => e.enclosure_url === ENCLOSURE,
  );
  const pulled = await request(t.app).get('/api/v1/sync').set('Authorization', p.u.basic);
  const syncEpisode = pulled.body.results.find(
    (r: { type: string; data: { enclosure_url: string } }) =>
      r.type === 'episode' && r.data.enclosure_url === ENCLOSURE,
  )?.data;
  const feedPage = (await p.web.get(`/web/subscriptions/${p.podcastGuid}/episodes`)).text;
  const episodePage = (await p.web.get(`/web/episodes/${p.itemId}`)).text;
  const continuing = (await p.web.get('/web/in-progress')).text;
  const queue = (await as(t, p.u).get('/v1/queue')).body.items as { enclosure_url: string }[];
  const upNextPage = (await p.web.get('/web/queue')).text;
  const favouritesPage = (await p.web.get('/web/favourites')).text;
  const stats = (await as(t, p.u).get('/v1/stats')).body;
  return {
    '/v1/episodes': v1Episode?.played_status.value,
    'GET /api/v1/sync': syncEpisode?.played_status.value,
    'web feed episodes': /class="episode played"/.test(feedPage),
    'web episode page': /<p>Played[ ,]/.test(episodePage),
    'web Continue (not played, in progress)': continuing.includes(`/web/episodes/${p.itemId}"`),
    'Up next (the sweep)': !queue.some((q) => q.enclosure_url === ENCLOSURE),
    'web Up next': /class="badge">played</.test(upNextPage) || !upNextPage.includes('The One Episode'),
    'web favourites': /class="badge">played</.test(favouritesPage),
    'statistics: finished': stats.episodes_finished === 1,
  };
}

/** What every reader must say: played everywhere or nowhere (statistics count a finish that happened). */
function expected(r: { played: boolean; inProgress: boolean; finished: boolean }) {
  return {
    '/v1/episodes': r.played,
    'GET /api/v1/sync': r.played,
    'web feed episodes': r.played,
    'web episode page': r.played,
    'web Continue (not played, in progress)': r.inProgress,
    'Up next (the sweep)': r.played,
    'web Up next': r.played,
    'web favourites': r.played,
    'statistics: finished': r.finished,
  };
}

type Scenario = {
  name: string;
  writes: Write[];
  played: boolean;
  /** Not played, and stopped somewhere in the episode. */
  inProgress?: boolean;
  /** A play reached the end at some time (statistics count history; a later "new" does not undo it). */
  finished?: boolean;
  /** What differs when the writes arrive in reverse. */
  reversed?: { inProgress: boolean; finished: boolean };
};

const scenarios: Scenario[] = [
  {
    name: 'a gpodder play to the end, no total: played by the feed duration',
    writes: [gpodderPlay(1, 120)],
    played: true,
  },
  { name: 'a gpodder play to the end, with its total', writes: [gpodderPlay(1, 120, 120)], played: true },
  { name: 'a gpodder play halfway: not played', writes: [gpodderPlay(1, 60)], played: false, inProgress: true },
  {
    name: 'a gpodder play to the end, then a gpodder new (marked unplayed)',
    writes: [gpodderPlay(1, 120), gpodderNew(2)],
    played: false,
    inProgress: true,
    finished: true,
  },
  {
    name: 'a gpodder new, then a gpodder play to the end',
    writes: [gpodderNew(1), gpodderPlay(2, 118)],
    played: true,
  },
  {
    name: '/v1 played, then /v1 played false',
    writes: [v1Played(1, true), v1Played(2, false)],
    played: false,
    inProgress: true,
    finished: true,
  },
  { name: '/v1 position halfway', writes: [v1Position(1, 50)], played: false, inProgress: true },
  {
    name: 'a gpodder play to the end without total, then /v1 played false',
    writes: [gpodderPlay(1, 120), v1Played(2, false)],
    played: false,
    inProgress: true,
    finished: true,
  },
  {
    name: 'sync played, then sync unplayed',
    writes: [sync(1, 'played'), sync(2, 'unplayed')],
    played: false,
    inProgress: true,
    finished: true,
    // The sync draft ignores an action older than the state it would change: arriving second, the play is
    // never stored, so nothing was finished or is in progress.
    reversed: { inProgress: false, finished: false },
  },
  {
    name: 'sync position, then sync played',
    writes: [sync(1, 'position', { position: 30 }), sync(2, 'played')],
    played: true,
  },
  {
    name: 'sync position near the end of the feed duration',
    writes: [sync(1, 'position', { position: 115 })],
    played: true,
  },
  {
    name: 'sync unplayed, then a gpodder play to the end without total',
    writes: [sync(1, 'unplayed'), gpodderPlay(2, 120)],
    played: true,
  },
  { name: 'the web player near the end', writes: [webPosition(118)], played: true },
  { name: 'the web player halfway', writes: [webPosition(60)], played: false, inProgress: true },
  {
    name: 'web Mark played after an app stopped halfway',
    writes: [gpodderPlay(1, 60), webPlayed],
    played: true,
  },
  {
    name: 'an archive import of a play to the end without total and a later new',
    writes: [archived(gpodderPlay(1, 120), gpodderNew(2))],
    played: false,
    inProgress: true,
    finished: true,
  },
  {
    name: 'an archive import of a play to the end without total',
    writes: [archived(gpodderPlay(1, 120))],
    played: true,
  },
];

describe.each(['in order', 'in reverse'])('every door agrees, the writes arriving %s', (order) => {
  test.each(scenarios.map((s) => [s.name, s] as const))('%s', async (_, s) => {
    const p = await person();
    const writes = order === 'in order' ? s.writes : [...s.writes].reverse();
    for (const w of writes) await w.run(p);
    // The web's writes are at the server's time (now), after every app's time: its order is its own.
    expect(await readAll(p)).toEqual(
      expected({
        played: s.played,
        inProgress: s.inProgress ?? false,
        finished: s.finished ?? s.played,
        ...(order === 'in reverse' && s.reversed),
      }),
    );
  });
});
