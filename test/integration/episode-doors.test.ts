import type http from 'node:http';
import pino from 'pino';
import request from 'supertest';
import { loadConfig } from '../../src/config';
import { performDeletion } from '../../src/deletions/requests';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { syncEpisode } from '../helpers/episodes';
import { feedServer } from '../helpers/feed-server';
import { capturedLogger } from '../helpers/logs';
import { csrfOf, signedInAgent } from '../helpers/web';

// One episode, one state, door by door (docs/decisions/episode-state.md): one person's episode written
// through the gpodder, Nextcloud, /v1/episodes, sync draft and web page doors in turn, and read back
// through each of them. What one door wrote, every other door reads the same, and each door's `since`
// read lists the change.

let t: TestApp;
let server: Awaited<ReturnType<typeof feedServer>>;
const captured = capturedLogger('warn');
const settings = fetcherSettings(loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, { dotenvFile: false }));

/** The feeds the server serves, by path: each test's own, changed as the test goes. */
const feeds = new Map<string, string>();

beforeAll(async () => {
  t = await testApp();
  server = await feedServer({
    '/doors/*': (req: http.IncomingMessage, res: http.ServerResponse) => {
      const body = feeds.get(req.url ?? '');
      if (body === undefined) res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': 'application/rss+xml; charset=utf-8' }).end(body);
    },
  });
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

type Item = { guid: string; url: string; duration?: string; published?: Date };

const feedOf = (items: Item[]) => `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Doors Show</title>
${items
  .map(
    (
      i,
    ) => `<item><guid>${i.guid}</guid><title>Episode ${i.guid}</title><pubDate>${(i.published ?? new Date('2024-01-01T10:00:00Z')).toUTCString()}</pubDate>
<itunes:duration>${i.duration ?? '00:02:00'}</itunes:duration><enclosure url="${i.url}" type="audio/mpeg"/></item>`,
  )
  .join('\n')}
</channel></rss>`;

let shows = 0;

/** A person subscribed to a feed of their own, fetched, signed in on the web page. */
type Person = {
  u: TestUser;
  podcast: string;
  podcastGuid: string;
  enclosure: string;
  guid: string;
  web: Awaited<ReturnType<typeof signedInAgent>>['agent'];
  /** Serves the feed with these items from now on, and fetches it. */
  serve: (items: Item[]) => Promise<void>;
  itemId: (url: string) => Promise<string>;
};

async function fetchAll() {
  await t.db.query('UPDATE feeds SET next_fetch_at = now()');
  await fetchDueFeeds({ db: t.db, logger: captured.logger }, settings);
}

async function person(items?: (show: number) => Item[]): Promise<Person> {
  const show = ++shows;
  const path = `/doors/${show}`;
  const enclosure = `https://media.example.org/doors/${show}/1.mp3`;
  const guid = `doors-${show}-1`;
  feeds.set(path, feedOf(items?.(show) ?? [{ guid, url: enclosure }]));
  const u = await t.user('doors');
  const podcast = server.url(path);
  expect((await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: podcast }] })).status).toBe(200);
  await fetchAll();
  const podcastGuid = (await as(t, u).get('/v1/subscriptions')).body.subscriptions[0].guid as string;
  return {
    u,
    podcast,
    podcastGuid,
    enclosure,
    guid,
    web: (await signedInAgent(t.app, u.name, u.password)).agent,
    serve: async (next) => {
      feeds.set(path, feedOf(next));
      await fetchAll();
    },
    itemId: async (url) => {
      const r = await t.db.query<{ id: string }>('SELECT id::text AS id FROM feed_items WHERE enclosure_url = $1', [
        url,
      ]);
      return r.rows[0]!.id;
    },
  };
}

// ---- Writes, one per door ----

async function gpodderPost(p: Person, actions: Record<string, unknown>[]) {
  const r = await as(t, p.u)
    .post(`/api/2/episodes/${p.u.name}.json`)
    .send(actions.map((a) => ({ podcast: p.podcast, episode: p.enclosure, device: 'phone', ...a })));
  expect(r.status).toBe(200);
  expect(r.body.skipped).toBeUndefined();
  return r.body as { timestamp: number };
}

async function nextcloudPost(p: Person, actions: Record<string, unknown>[]) {
  const r = await as(t, p.u)
    .post('/index.php/apps/gpoddersync/episode_action/create')
    .send(actions.map((a) => ({ podcast: p.podcast, episode: p.enclosure, ...a })));
  expect(r.status).toBe(200);
  expect(r.body.skipped).toBeUndefined();
  return r.body as { timestamp: number };
}

/** A piece of the episode's state sent to /v1/episodes (the episode named by its enclosure URL), stored. */
async function v1Set(p: Person, field: string, value: unknown, timestamp: string) {
  const saved = await v1Post(p, { enclosure_url: p.enclosure, [field]: { value, timestamp } });
  expect(saved.failure).toEqual([]);
}

async function v1Post(p: Person, record: Record<string, unknown>) {
  const r = await as(t, p.u).post('/v1/episodes', [{ podcast_guid: p.podcastGuid, ...record }]);
  expect(r.status).toBe(200);
  return r.body as { success: { sync_id: string }[]; failure: { message: string }[] };
}

async function syncPost(p: Person, action: string, occurredAt: string, data: Record<string, unknown> = {}) {
  const r = await syncEpisode(t, p.u, action, occurredAt, {
    podcast_url: p.podcast,
    enclosure_url: p.enclosure,
    ...data,
  });
  expect(r.status).toBe(200);
  return r.body.results[0] as { status: string; reason?: string };
}

async function webForm(p: Person, itemId: string, action: string, form: Record<string, string> = {}) {
  const page = await p.web.get(`/web/episodes/${itemId}`);
  const r = await p.web
    .post(`/web/episodes/${itemId}/${action}`)
    .set('x-csrf-token', csrfOf(page.text))
    .type('form')
    .send({ _csrf: csrfOf(page.text), ...form });
  expect(r.status).toBeLessThan(400);
}

// ---- Reads, one per door ----

type Action = {
  podcast: string;
  episode: string;
  action: string;
  timestamp: string;
  position?: number;
  total?: number;
};

/** The gpodder download (aggregated: each latest action of each type), the episode's only. */
async function gpodderLatest(p: Person, url = p.enclosure) {
  const r = await as(t, p.u).get(`/api/2/episodes/${p.u.name}.json?aggregated=true`);
  expect(r.status).toBe(200);
  return (r.body.actions as Action[]).filter((a) => a.episode === url);
}

type V1Record = {
  sync_id: string;
  podcast_guid: string;
  podcast_url: string;
  enclosure_url: string;
  episode_guid: string | null;
  playback_position?: { value: number; timestamp: string };
  played_status: { value: boolean; timestamp: string };
  new_status?: { value: boolean; timestamp: string };
  download_status?: { value: boolean; timestamp: string };
  favorite_status?: { value: boolean; timestamp: string };
};

async function v1Records(p: Person, since?: string) {
  const r = await as(t, p.u).get(`/v1/episodes${since ? `?since=${encodeURIComponent(since)}` : ''}`);
  expect(r.status).toBe(200);
  return { records: r.body.episodes as V1Record[], syncTimestamp: r.headers['sync-timestamp'] as string };
}

type SyncResult = { type: string; data: V1Record };

async function syncRead(p: Person, since?: string) {
  const r = await request(t.app)
    .get(`/api/v1/sync?include=episodes${since ? `&since=${encodeURIComponent(since)}` : ''}`)
    .set('Authorization', p.u.basic);
  expect(r.status).toBe(200);
  const next = new URL(r.body.next_since as string).searchParams.get('since')!;
  return { records: (r.body.results as SyncResult[]).map((x) => x.data), next };
}

/** What the web page's episode page says: played, or where it stopped. */
async function webSays(p: Person, itemId: string) {
  const html = (await p.web.get(`/web/episodes/${itemId}`)).text;
  const played = /<p>Played[ ,]/.test(html);
  const stopped = /<p>Stopped at ([\d:]+)/.exec(html)?.[1];
  return { played, stopped: stopped ?? null, markPlayedOffered: html.includes(`/web/episodes/${itemId}/played`) };
}

/** The state as /v1/episodes and the sync draft read it, in one comparable shape. */
const core = (r: V1Record | undefined) =>
  r && {
    sync_id: r.sync_id,
    podcast_guid: r.podcast_guid,
    enclosure_url: r.enclosure_url,
    position: r.playback_position?.value ?? null,
    played: r.played_status.value,
    favourite: r.favorite_status?.value ?? null,
  };

/** /v1/episodes and GET /api/v1/sync agree on the episode, and say `expected`. */
async function appsRead(p: Person, expected: Partial<NonNullable<ReturnType<typeof core>>>, url = p.enclosure) {
  const v1 = (await v1Records(p)).records.find((r) => r.enclosure_url === url);
  const sync = (await syncRead(p)).records.find((r) => r.enclosure_url === url);
  expect(core(v1)).toEqual(expect.objectContaining(expected));
  expect(core(sync)).toEqual(core(v1));
  return v1!;
}

// ---- Scenarios ----

test('a gpodder play halfway, then /v1 played: every door reads played, the gpodder apps a play to the end', async () => {
  const p = await person();
  const item = await p.itemId(p.enclosure);
  await gpodderPost(p, [{ action: 'play', timestamp: '2026-10-01T10:00:00', started: 0, position: 60 }]);
  await v1Set(p, 'played_status', true, '2026-10-01T10:05:00Z');
  await appsRead(p, { played: true, position: 120 });
  expect(await webSays(p, item)).toEqual({ played: true, stopped: null, markPlayedOffered: false });
  expect((await gpodderLatest(p)).filter((a) => a.action === 'play')).toEqual([
    expect.objectContaining({ timestamp: '2026-10-01T10:05:00', position: 120, total: 120 }),
  ]);
});

test('the web page marks played an episode a Nextcloud app stopped halfway; then the app marks it new', async () => {
  const p = await person();
  const item = await p.itemId(p.enclosure);
  await nextcloudPost(p, [
    { action: 'PLAY', timestamp: '2026-10-01T10:00:00+00:00', started: 0, position: 30, total: 120 },
  ]);
  await webForm(p, item, 'played');
  await appsRead(p, { played: true, position: 120 });
  expect(await webSays(p, item)).toEqual(expect.objectContaining({ played: true }));
  await nextcloudPost(p, [{ action: 'NEW', timestamp: new Date(Date.now() + 1000).toISOString() }]);
  await appsRead(p, { played: false, position: 120 });
  expect(await webSays(p, item)).toEqual(expect.objectContaining({ played: false, markPlayedOffered: true }));
});

test('sync played, then a gpodder new later, then /v1 position: one state everywhere', async () => {
  const p = await person();
  const item = await p.itemId(p.enclosure);
  expect((await syncPost(p, 'played', '2026-10-01T10:00:00.000Z')).status).toBe('applied');
  await gpodderPost(p, [{ action: 'new', timestamp: '2026-10-01T10:01:00' }]);
  const r = await appsRead(p, { played: false, position: 120 });
  expect(r.new_status).toEqual({ value: true, timestamp: '2026-10-01T10:01:00.000Z' });
  await v1Set(p, 'playback_position', 40, '2026-10-01T10:02:00Z');
  await appsRead(p, { played: false, position: 40 });
  expect(await webSays(p, item)).toEqual({ played: false, stopped: '0:40', markPlayedOffered: true });
  expect((await gpodderLatest(p)).map((a) => [a.action, a.timestamp, a.position, a.total])).toEqual(
    expect.arrayContaining([
      ['new', '2026-10-01T10:01:00', undefined, undefined],
      ['play', '2026-10-01T10:02:00', 40, 120],
    ]),
  );
});

test('positions with and without total and started read the same at every door', async () => {
  const p = await person();
  const item = await p.itemId(p.enclosure);
  // No total: the feed's 120 s is the length; the play stopped halfway.
  await gpodderPost(p, [{ action: 'play', timestamp: '2026-10-01T10:00:00', position: 60 }]);
  await appsRead(p, { played: false, position: 60 });
  expect(await webSays(p, item)).toEqual({ played: false, stopped: '1:00', markPlayedOffered: true });
  // A total of the app's own media (longer than the feed says) decides: 116 of 200 is not the end.
  await gpodderPost(p, [{ action: 'play', timestamp: '2026-10-01T10:01:00', started: 60, position: 116, total: 200 }]);
  await appsRead(p, { played: false, position: 116 });
  expect(await webSays(p, item)).toEqual({ played: false, stopped: '1:56', markPlayedOffered: true });
  // The web player's position, with no total from the browser: the state's length (200) goes with it.
  await webForm(p, item, 'position', { position: '190' });
  await appsRead(p, { played: true, position: 190 });
  expect(await webSays(p, item)).toEqual(expect.objectContaining({ played: true }));
  expect((await gpodderLatest(p)).find((a) => a.action === 'play')).toEqual(
    expect.objectContaining({ position: 190, total: 200 }),
  );
});

test('times with an offset, a fraction or no zone are one time line across the doors', async () => {
  const p = await person();
  // 11:30 at +02:00 is 09:30 UTC: older than the gpodder play at 10:00 (no zone: UTC).
  await gpodderPost(p, [{ action: 'play', timestamp: '2026-10-01T10:00:00', position: 30 }]);
  await nextcloudPost(p, [{ action: 'play', timestamp: '2026-10-01T11:30:00+02:00', position: 90 }]);
  await appsRead(p, { position: 30 });
  // Half a second later, through /v1: later than the gpodder play of the same second.
  await v1Set(p, 'playback_position', 50, '2026-10-01T10:00:00.500Z');
  const r = await appsRead(p, { position: 50 });
  expect(r.playback_position).toEqual({ value: 50, timestamp: '2026-10-01T10:00:00.500Z' });
  // A sync position 10:00:00.250 is older than /v1's and is ignored, whatever its arrival.
  expect((await syncPost(p, 'position', '2026-10-01T10:00:00.250Z', { position: 70 })).status).toBe('ignored');
  await appsRead(p, { position: 50 });
  // The gpodder apps read the times in whole seconds, UTC, no zone.
  expect((await gpodderLatest(p)).find((a) => a.action === 'play')).toEqual(
    expect.objectContaining({ timestamp: '2026-10-01T10:00:00', position: 50 }),
  );
});

test('a download deleted, then a play: downloaded false, the play kept; the web page reads the same', async () => {
  const p = await person();
  const item = await p.itemId(p.enclosure);
  await gpodderPost(p, [
    { action: 'download', timestamp: '2026-10-01T09:00:00' },
    { action: 'delete', timestamp: '2026-10-01T10:00:00' },
    { action: 'play', timestamp: '2026-10-01T11:00:00', position: 20 },
  ]);
  const r = await appsRead(p, { position: 20, played: false });
  expect(r.download_status).toEqual({ value: false, timestamp: '2026-10-01T10:00:00.000Z' });
  expect(await webSays(p, item)).toEqual({ played: false, stopped: '0:20', markPlayedOffered: true });
  // The delete does not hide the play from the gpodder apps' aggregated read.
  expect((await gpodderLatest(p)).map((a) => a.action).sort()).toEqual(['delete', 'download', 'play']);
  // /v1 downloaded again, later: every door says downloaded.
  await v1Set(p, 'download_status', true, '2026-10-01T12:00:00Z');
  expect((await appsRead(p, { position: 20 })).download_status?.value).toBe(true);
  expect((await p.web.get(`/web/subscriptions/${p.podcastGuid}/episodes`)).text).toContain('class="badge">downloaded<');
});

test('a favourite set on the web page, cleared by a sync action later, set by /v1 earlier: the latest wins everywhere', async () => {
  const p = await person();
  const item = await p.itemId(p.enclosure);
  await webForm(p, item, 'favourite', { value: '1' });
  await appsRead(p, { favourite: true });
  const listed = async () => ({
    gpodder: ((await as(t, p.u).get(`/api/2/favorites/${p.u.name}.json`)).body as { url: string }[]).map((f) => f.url),
    web: (await p.web.get('/web/favourites')).text.includes('Episode doors-'),
  });
  expect(await listed()).toEqual({ gpodder: [p.enclosure], web: true });
  expect((await syncPost(p, 'favourite', new Date(Date.now() + 1000).toISOString(), { favourite: false })).status).toBe(
    'applied',
  );
  await appsRead(p, { favourite: false });
  expect(await listed()).toEqual({ gpodder: [], web: false });
  // Earlier than the clear: loses.
  await v1Set(p, 'favorite_status', true, '2026-01-01T00:00:00Z');
  await appsRead(p, { favourite: false });
  expect(await listed()).toEqual({ gpodder: [], web: false });
});

test('the since reads of every door list a change once', async () => {
  const p = await person();
  await gpodderPost(p, [{ action: 'play', timestamp: '2026-10-01T10:00:00', position: 10 }]);
  const v1 = await v1Records(p);
  const sync = await syncRead(p);
  const gp = (await as(t, p.u).get(`/api/2/episodes/${p.u.name}.json`)).body as { timestamp: number };
  const nc = (await as(t, p.u).get('/index.php/apps/gpoddersync/episode_action')).body as { timestamp: number };
  // Nothing changed since.
  expect((await v1Records(p, v1.syncTimestamp)).records).toEqual([]);
  expect((await syncRead(p, sync.next)).records).toEqual([]);
  // One change through /v1: each since read lists it, and the next read after that does not.
  await v1Set(p, 'played_status', true, '2026-10-01T10:05:00Z');
  const v1After = await v1Records(p, v1.syncTimestamp);
  expect(v1After.records.map((r) => r.played_status.value)).toEqual([true]);
  const syncAfter = await syncRead(p, sync.next);
  expect(syncAfter.records.map((r) => r.played_status.value)).toEqual([true]);
  // The gpodder T is whole seconds minus one: the changes of the last second or two may come again
  // (docs/clients.md), the new one always comes, once.
  const gpAfter = (await as(t, p.u).get(`/api/2/episodes/${p.u.name}.json?since=${gp.timestamp}`)).body;
  const ncAfter = (await as(t, p.u).get(`/index.php/apps/gpoddersync/episode_action?since=${nc.timestamp}`)).body;
  for (const after of [gpAfter, ncAfter]) {
    expect((after.actions as Action[]).filter((a) => a.position === 120).map((a) => a.action)).toEqual(['play']);
  }
  expect((await v1Records(p, v1After.syncTimestamp)).records).toEqual([]);
  expect((await syncRead(p, syncAfter.next)).records).toEqual([]);
});

test('an episode a gpodder app named by URL and guid, named by /v1 by its guid only, is the same episode', async () => {
  const p = await person();
  await gpodderPost(p, [{ action: 'play', guid: p.guid, timestamp: '2026-10-01T10:00:00', position: 120 }]);
  const saved = await v1Post(p, {
    episode_guid: p.guid,
    played_status: { value: false, timestamp: '2026-10-01T10:01:00Z' },
  });
  expect(saved.failure).toEqual([]);
  const r = await appsRead(p, { played: false, position: 120 });
  expect(saved.success[0]!.sync_id).toBe(r.sync_id);
  expect((await v1Records(p)).records).toHaveLength(1);
});

/** /v1 marks unplayed, by its guid alone, the episode an app played to the end at `url`: that episode, read so. */
async function markedUnplayedByGuid(p: Person, guid: string, url: string) {
  const saved = await v1Post(p, {
    episode_guid: guid,
    played_status: { value: false, timestamp: '2026-10-01T10:01:00Z' },
  });
  expect(saved.failure).toEqual([]);
  const r = await appsRead(p, { played: false, position: 300 }, url);
  expect(saved.success[0]!.sync_id).toBe(r.sync_id);
}

test('an episode no feed lists, played by a gpodder app with its guid, is named by /v1 by that guid', async () => {
  const p = await person();
  const gone = 'https://media.example.org/doors/gone.mp3';
  await as(t, p.u)
    .post(`/api/2/episodes/${p.u.name}.json`)
    .send([
      {
        podcast: p.podcast,
        episode: gone,
        guid: 'gone-1',
        action: 'play',
        timestamp: '2026-10-01T10:00:00',
        position: 300,
        total: 300,
      },
    ]);
  await markedUnplayedByGuid(p, 'gone-1', gone);
});

test('an episode an app played with its guid before the feed moved is named by /v1 by that guid after the move', async () => {
  const p = await person();
  const gone = 'https://media.example.org/doors/gone-before-move.mp3';
  await gpodderPost(p, [
    { episode: gone, guid: 'gone-2', action: 'play', timestamp: '2026-10-01T10:00:00', position: 300, total: 300 },
  ]);
  const moved = server.url(`/doors/${shows}-moved`);
  expect((await as(t, p.u).patch(`/v1/subscriptions/${p.podcastGuid}`, { new_feed_url: moved })).status).toBe(200);
  // The podcast is the same record under its new URL: the play its app sent under the earlier one is its.
  await markedUnplayedByGuid(p, 'gone-2', gone);
});

test('an episode whose feed moved its enclosure, named by /v1 by its guid, is the one the apps played: one record', async () => {
  const p = await person();
  const moved = p.enclosure.replace('1.mp3', '1-new.mp3');
  await gpodderPost(p, [{ action: 'play', guid: p.guid, timestamp: '2026-10-01T10:00:00', position: 120 }]);
  await p.serve([{ guid: p.guid, url: moved }]);
  const item = await p.itemId(moved);
  expect(await webSays(p, item)).toEqual(expect.objectContaining({ played: true }));
  // An app that knows the episode by its guid (its feed lists the new URL) marks it unplayed.
  const saved = await v1Post(p, {
    episode_guid: p.guid,
    played_status: { value: false, timestamp: '2026-10-01T10:01:00Z' },
  });
  expect(saved.failure).toEqual([]);
  expect(await webSays(p, item)).toEqual(expect.objectContaining({ played: false }));
  const records = (await v1Records(p)).records;
  expect(records.map((x) => [x.enclosure_url, x.played_status.value])).toEqual([[p.enclosure, false]]);
});

test("a feed that moved: actions under its earlier URL, a favourite by it, read with the subscription's guid", async () => {
  const p = await person();
  const moved = server.url(`/doors/${shows}-moved`);
  feeds.set(`/doors/${shows}-moved`, feeds.get(new URL(p.podcast).pathname)!);
  const patched = await as(t, p.u).patch(`/v1/subscriptions/${p.podcastGuid}`, { new_feed_url: moved });
  expect(patched.status).toBe(200);
  const current = (
    (await as(t, p.u).get('/v1/subscriptions')).body.subscriptions as { guid: string; new_guid?: string }[]
  )[0]!;
  const guid = current.new_guid ?? current.guid;
  // An app still on the earlier URL plays one episode and stars another.
  await gpodderPost(p, [{ action: 'play', timestamp: '2026-10-01T10:00:00', position: 30 }]);
  const other = p.enclosure.replace('1.mp3', '2.mp3');
  expect(
    (
      await syncPost(p, 'favourite', '2026-10-01T10:00:00Z', {
        enclosure_url: other,
        favourite: true,
      })
    ).status,
  ).toBe('applied');
  const records = (await v1Records(p)).records;
  expect(records.map((r) => [r.enclosure_url, r.podcast_guid]).sort()).toEqual(
    [
      [p.enclosure, guid],
      [other, guid],
    ].sort(),
  );
  const synced = (await syncRead(p)).records;
  expect(synced.map((r) => [r.enclosure_url, r.podcast_guid]).sort()).toEqual(
    records.map((r) => [r.enclosure_url, r.podcast_guid]).sort(),
  );
  // The gpodder download by either URL of the podcast has the play.
  for (const url of [p.podcast, moved]) {
    const r = await as(t, p.u).get(`/api/2/episodes/${p.u.name}.json?podcast=${encodeURIComponent(url)}`);
    expect((r.body.actions as Action[]).map((a) => a.position)).toEqual([30]);
  }
});

test("deleting the subscription of one of two feeds listing a file: every door reads the other feed's state, since lists it", async () => {
  const p = await person();
  const q = await as(t, p.u).post('/v1/subscriptions', {
    subscriptions: [{ feed_url: 'https://other.example/feed.xml' }],
  });
  expect(q.status).toBe(200);
  await gpodderPost(p, [
    { action: 'play', timestamp: '2026-10-01T09:00:00', position: 20, podcast: 'https://other.example/feed.xml' },
  ]);
  await gpodderPost(p, [{ action: 'play', timestamp: '2026-10-01T10:00:00', position: 120 }]);
  await appsRead(p, { played: true });
  const v1 = await v1Records(p);
  const sync = await syncRead(p);
  const d = await as(t, p.u).del(`/v1/subscriptions/${p.podcastGuid}`);
  await performDeletion(t.db, pino({ level: 'silent' }), d.body.deletion_id);
  await appsRead(p, { played: false, position: 20 });
  expect((await v1Records(p, v1.syncTimestamp)).records.map((r) => r.playback_position?.value)).toEqual([20]);
  expect((await syncRead(p, sync.next)).records.map((r) => r.playback_position?.value)).toEqual([20]);
});

test('a played mark at the very time of a "new" wins at every door, whichever door the "new" came through', async () => {
  // The played rule: a "new" at the very same time as a play loses to it. Whichever door says played.
  const marks: [string, (p: Person) => Promise<unknown>][] = [
    ['gpodder', (p) => gpodderPost(p, [{ action: 'play', timestamp: '2026-10-01T10:00:00', position: 120 }])],
    ['/v1', (p) => v1Set(p, 'played_status', true, '2026-10-01T10:00:00Z')],
    ['sync', (p) => syncPost(p, 'played', '2026-10-01T10:00:00.000Z')],
  ];
  const news: [string, (p: Person) => Promise<unknown>][] = [
    ['gpodder', (p) => gpodderPost(p, [{ action: 'new', timestamp: '2026-10-01T10:00:00' }])],
    ['Nextcloud', (p) => nextcloudPost(p, [{ action: 'new', timestamp: '2026-10-01T10:00:00+00:00' }])],
    ['/v1', (p) => v1Set(p, 'new_status', true, '2026-10-01T10:00:00Z')],
  ];
  const seen: string[] = [];
  for (const [by, mark] of marks) {
    for (const [newBy, markNew] of news) {
      for (const order of ['new first', 'played first']) {
        const p = await person();
        if (order === 'new first') {
          await markNew(p);
          await mark(p);
        } else {
          await mark(p);
          await markNew(p);
        }
        const item = await p.itemId(p.enclosure);
        const v1 = (await v1Records(p)).records[0]!;
        const sync = (await syncRead(p)).records[0]!;
        const web = await webSays(p, item);
        seen.push(
          `${by} played, ${newBy} new, ${order}: /v1 ${v1.played_status.value}, sync ${sync.played_status.value}, web ${web.played}`,
        );
      }
    }
  }
  expect(seen.filter((x) => x.includes('false'))).toEqual([]);
});

test('equal times of two plays from two doors: the later stored is the state, at every door', async () => {
  const p = await person();
  const item = await p.itemId(p.enclosure);
  await gpodderPost(p, [{ action: 'play', timestamp: '2026-10-01T10:00:00', position: 120 }]);
  await nextcloudPost(p, [{ action: 'play', timestamp: '2026-10-01T10:00:00', position: 30 }]);
  await appsRead(p, { played: false, position: 30 });
  expect(await webSays(p, item)).toEqual({ played: false, stopped: '0:30', markPlayedOffered: true });
  // The sync draft takes a change only when it is strictly later: a position at the same time is ignored.
  expect((await syncPost(p, 'position', '2026-10-01T10:00:00.000Z', { position: 60 })).status).toBe('ignored');
  await appsRead(p, { played: false, position: 30 });
});

test("the web page's New episodes follow the played rule: off once an app played it, back once another marks it new", async () => {
  const p = await person((show) => [
    { guid: `doors-${show}-1`, url: `https://media.example.org/doors/${show}/1.mp3`, published: new Date() },
  ]);
  const onNew = async () => (await p.web.get('/web/new')).text.includes(`Episode ${p.guid}`);
  expect(await onNew()).toBe(true);
  await gpodderPost(p, [{ action: 'play', timestamp: '2026-10-01T10:00:00', position: 118 }]);
  expect(await onNew()).toBe(false);
  await v1Set(p, 'new_status', true, '2026-10-01T10:01:00Z');
  expect(await onNew()).toBe(true);
  await appsRead(p, { played: false, position: 118 });
  expect((await gpodderLatest(p)).map((a) => a.action).sort()).toEqual(['new', 'play']);
});
