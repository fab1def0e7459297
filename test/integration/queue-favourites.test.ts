import { exportArchive } from '../../src/transfer/service';
import { DEFAULT_KEEP, importArchive } from '../../src/transfer/archive';
import { loadConfig } from '../../src/config';
import { urlHashOf } from '../../src/subscriptions/urls';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { as, expectError, testApp, type TestApp, type TestUser } from '../helpers/app';
import { feedServer, xml } from '../helpers/feed-server';
import { capturedLogger } from '../helpers/logs';
import { csrfOf, signedInAgent } from '../helpers/web';

// Up next and favourites, kept for every device (docs/queue.md): favourites through /v1/episodes and
// gpodder.net's /api/2/favorites, the list through /v1/queue, both in the archive.

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ QUEUE_MAX_ITEMS: '5', FAVOURITES_MAX: '3' });
});
afterAll(() => t.close());

const podcast_url = 'https://show.example/feed';
const ep = (n: number) => ({ podcast_url, enclosure_url: `https://show.example/${n}.mp3` });
const favourite = (n: number, value: boolean, timestamp: string) => ({
  ...ep(n),
  favorite_status: { value, timestamp },
});

const queueOf = async (u: TestUser) => {
  const r = await as(t, u).get('/v1/queue');
  expect(r.status).toBe(200);
  return {
    etag: r.headers.etag as string,
    urls: (r.body.items as { enclosure_url: string }[]).map((i) => i.enclosure_url),
    items: r.body.items as { id: string }[],
  };
};
const short = (urls: string[]) => urls.map((u) => Number(/(\d+)\.mp3$/.exec(u)![1]));

describe('favourites', () => {
  test("a favourite of a feed that moved is served by /api/2/favorites under the feed's URL now", async () => {
    const u = await t.user();
    const api = as(t, u);
    const added = await api.post('/v1/subscriptions', { subscriptions: [{ feed_url: podcast_url }] });
    const guid = added.body.success[0].guid as string;
    await api.post('/v1/episodes', [favourite(1, true, '2026-03-01T10:00:00Z')]).expect(200);
    const moved = 'https://moved.example/feed';
    expect((await api.patch(`/v1/subscriptions/${guid}`, { new_feed_url: moved })).status).toBe(200);
    const served = (await api.get(`/api/2/favorites/${u.name}.json`)).body as { url: string; podcast_url: string }[];
    // The podcast as the apps now have it (their next sync moves them to it), so that they can match it.
    expect(served.map((f) => [f.url, f.podcast_url])).toEqual([[ep(1).enclosure_url, moved]]);
    // Its title is the feed's at the URL it moved to.
    await t.db.query(`INSERT INTO feeds (url_hash, feed_url, title) VALUES ($1, $2, 'Moved show')`, [
      urlHashOf(moved),
      moved,
    ]);
    const titled = (await api.get(`/api/2/favorites/${u.name}.json`)).body as { podcast_title: string }[];
    expect(titled.map((f) => f.podcast_title)).toEqual(['Moved show']);
  });

  test('set on /v1/episodes: served there and by /api/2/favorites with its time; an older write loses to a newer clear', async () => {
    const u = await t.user();
    const api = as(t, u);
    const set = await api.post('/v1/episodes', [favourite(1, true, '2026-03-01T10:00:00Z')]);
    expect(set.body).toMatchObject({ success: [{ enclosure_url: ep(1).enclosure_url }], failure: [] });
    const records = (await api.get('/v1/episodes')).body.episodes as Record<string, unknown>[];
    expect(records).toEqual([
      expect.objectContaining({
        enclosure_url: ep(1).enclosure_url,
        podcast_url,
        favorite_status: { value: true, timestamp: '2026-03-01T10:00:00.000Z' },
      }),
    ]);
    const served = await api.get(`/api/2/favorites/${u.name}.json`);
    expect(served.status).toBe(200);
    expect(served.body).toEqual([
      {
        title: '',
        url: ep(1).enclosure_url,
        podcast_title: '',
        podcast_url,
        description: '',
        website: '',
        mygpo_link: '',
        released: '',
      },
    ]);
    // A clear at 12:00, then a set made at 11:00 arrives late: the clear stands.
    await api.post('/v1/episodes', [favourite(1, false, '2026-03-01T12:00:00Z')]);
    await api.post('/v1/episodes', [favourite(1, true, '2026-03-01T11:00:00Z')]);
    expect((await api.get(`/api/2/favorites/${u.name}.json`)).body).toEqual([]);
    const after = (await api.get('/v1/episodes')).body.episodes as Record<string, unknown>[];
    expect(after[0]!.favorite_status).toEqual({ value: false, timestamp: '2026-03-01T12:00:00.000Z' });
  });

  test('a since reader sees a favourite change; a bad value or an unknown episode is a per-record failure', async () => {
    const u = await t.user();
    const api = as(t, u);
    await api.post('/v1/episodes', [favourite(1, true, '2026-03-01T10:00:00Z')]);
    const mark = (await api.get('/v1/episodes')).headers['sync-timestamp'] as string;
    expect((await api.get(`/v1/episodes?since=${mark}`)).body.episodes).toEqual([]);
    await api.post('/v1/episodes', [favourite(1, false, '2026-03-01T11:00:00Z')]);
    const changed = (await api.get(`/v1/episodes?since=${mark}`)).body.episodes as Record<string, unknown>[];
    expect(changed.map((e) => e.favorite_status)).toEqual([{ value: false, timestamp: '2026-03-01T11:00:00.000Z' }]);
    const r = await api.post('/v1/episodes', [
      { ...ep(2), favorite_status: { value: 'yes', timestamp: '2026-03-01T10:00:00Z' } },
      {
        podcast_guid: '00000000-0000-4000-8000-000000000000',
        sync_id: '00000000-0000-4000-8000-000000000001',
        favorite_status: { value: true, timestamp: '2026-03-01T10:00:00Z' },
      },
    ]);
    expect(r.status).toBe(200);
    expect(r.body.success).toEqual([]);
    expect(r.body.failure.map((f: { message: string }) => f.message)).toEqual([
      'Invalid favorite_status.value: expected a boolean',
      'Unknown podcast_guid: no subscription of this user has it',
    ]);
  });

  test('at most FAVOURITES_MAX: a set beyond it is refused with the reason, a clear makes room', async () => {
    const u = await t.user();
    const api = as(t, u);
    const at = '2026-03-01T10:00:00Z';
    const r = await api.post(
      '/v1/episodes',
      [1, 2, 3, 4].map((n) => favourite(n, true, at)),
    );
    expect(r.body.success).toHaveLength(3);
    expect(r.body.failure).toEqual([expect.objectContaining({ message: 'At most 3 favourites: clear one first' })]);
    await api.post('/v1/episodes', [favourite(1, false, '2026-03-01T11:00:00Z')]);
    expect((await api.post('/v1/episodes', [favourite(4, true, at)])).body.failure).toEqual([]);
    expect((await api.get(`/api/2/favorites/${u.name}.json`)).body).toHaveLength(3);
  });
});

describe('Up next', () => {
  test('add at the end and next, move, remove; the ETag changes with the list and a match is a 304', async () => {
    const u = await t.user();
    const api = as(t, u);
    const empty = await queueOf(u);
    expect(empty.urls).toEqual([]);
    for (const n of [1, 2, 3]) expect((await api.post('/v1/queue/items', ep(n))).status).toBe(201);
    const next = await api.post('/v1/queue/items', { ...ep(4), at: 'next' });
    expect(short(next.body.items.map((i: { enclosure_url: string }) => i.enclosure_url))).toEqual([4, 1, 2, 3]);
    const q = await queueOf(u);
    expect(q.etag).not.toBe(empty.etag);
    expect((await api.get('/v1/queue').set('If-None-Match', q.etag)).status).toBe(304);
    expect(q.items[0]).toEqual({
      id: next.body.id,
      sync_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      podcast_guid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      podcast_url,
      episode_guid: null,
      enclosure_url: ep(4).enclosure_url,
      title: null,
      added_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    // Move the last to position 1, remove the first.
    await api.patch(`/v1/queue/items/${q.items[3]!.id}`, { at: 1 });
    expect(short((await queueOf(u)).urls)).toEqual([4, 3, 1, 2]);
    await api.del(`/v1/queue/items/${q.items[0]!.id}`);
    expect(short((await queueOf(u)).urls)).toEqual([3, 1, 2]);
    // Adding one it has moves it; a position past the end is the end.
    await api.post('/v1/queue/items', { ...ep(3), at: 99 });
    expect(short((await queueOf(u)).urls)).toEqual([1, 2, 3]);
    expectError(await api.del(`/v1/queue/items/${q.items[0]!.id}`), 404);
    expectError(await api.patch('/v1/queue/items/abc', { at: 1 }), 405);
  });

  test('two devices interleaved lose no edit; a stale PUT is a 412 with the list; no If-Match a 428', async () => {
    const u = await t.user();
    const phone = as(t, u);
    const tablet = as(t, u);
    await phone.post('/v1/queue/items', ep(1));
    const read = await queueOf(u);
    // The tablet adds while the phone holds what it read; then the phone replaces with that stale version.
    await Promise.all([tablet.post('/v1/queue/items', ep(2)), phone.post('/v1/queue/items', ep(3))]);
    expect(short((await queueOf(u)).urls).sort()).toEqual([1, 2, 3]);
    const stale = await phone
      .put('/v1/queue')
      .set('If-Match', read.etag)
      .send({ items: [ep(5)] });
    expect(stale.status).toBe(412);
    expect(stale.body.code).toBe('412');
    expect(short(stale.body.items.map((i: { enclosure_url: string }) => i.enclosure_url)).sort()).toEqual([1, 2, 3]);
    const now = await queueOf(u);
    expect(stale.headers.etag).toBe(now.etag);
    expectError(await phone.put('/v1/queue').send({ items: [] }), 428);
    const replaced = await phone
      .put('/v1/queue')
      .set('If-Match', now.etag)
      .send({ items: [ep(3), ep(5), {}, ep(1)] });
    expect(replaced.status).toBe(200);
    expect(short(replaced.body.items.map((i: { enclosure_url: string }) => i.enclosure_url))).toEqual([3, 5, 1]);
    expect(replaced.body.failure).toEqual([{ index: 2, message: 'podcast_guid: required' }]);
    // An item kept by the replace keeps its id.
    expect(replaced.body.items[0].id).toBe(now.items.find((_, i) => short(now.urls)[i] === 3)!.id);
  });

  test('at most QUEUE_MAX_ITEMS; an episode that cannot be named is the contract 405', async () => {
    const u = await t.user();
    const api = as(t, u);
    for (const n of [1, 2, 3, 4, 5]) await api.post('/v1/queue/items', ep(n));
    expectError(await api.post('/v1/queue/items', ep(6)), 405, /at most 5 episodes/);
    expectError(
      await api.post('/v1/queue/items', { enclosure_url: 'https://x.example/1.mp3' }),
      405,
      /podcast_guid: required/,
    );
    expectError(await api.post('/v1/queue/items', { ...ep(1), sync_id: 'nope' }), 405, /sync_id: not a UUID/);
  });

  test('played to the end on a gpodder app: gone from the list; played before it was added: stays', async () => {
    const u = await t.user();
    const api = as(t, u);
    const play = (n: number, position: number) => ({
      podcast: podcast_url,
      episode: ep(n).enclosure_url,
      action: 'play',
      position,
      started: 0,
      total: 100,
      timestamp: '2026-03-01T10:00:00',
    });
    await api.post(`/api/2/episodes/${u.name}.json`, [play(3, 100)]);
    for (const n of [1, 2, 3]) await api.post('/v1/queue/items', ep(n));
    const before = await queueOf(u);
    await api.post(`/api/2/episodes/${u.name}.json`, [play(1, 100), play(2, 40)]);
    const after = await queueOf(u);
    expect(short(after.urls)).toEqual([2, 3]);
    expect(after.etag).not.toBe(before.etag);
  });
});

test('the archive keeps favourites and Up next', async () => {
  const u = await t.user();
  const api = as(t, u);
  await api.post('/v1/episodes', [
    favourite(1, true, '2026-03-01T10:00:00Z'),
    favourite(2, false, '2026-03-01T10:00:00Z'),
  ]);
  for (const n of [2, 1]) await api.post('/v1/queue/items', ep(n));
  const archive = await exportArchive(t.db, u.id, u.name);
  const kept = [...archive.favourites].sort((a, b) => a.enclosure_url.localeCompare(b.enclosure_url));
  expect(kept).toEqual([
    { ...ep(1), episode_guid: null, favourite: true, at: '2026-03-01T10:00:00.000Z' },
    { ...ep(2), episode_guid: null, favourite: false, at: '2026-03-01T10:00:00.000Z' },
  ]);
  expect(archive.queue).toEqual([expect.objectContaining(ep(2)), expect.objectContaining(ep(1))]);
  const v = await t.user();
  await importArchive(t.db, v.id, archive, { dryRun: false, progress: () => undefined, keep: DEFAULT_KEEP });
  const restored = as(t, v);
  expect((await restored.get(`/api/2/favorites/${v.name}.json`)).body.map((f: { url: string }) => f.url)).toEqual([
    ep(1).enclosure_url,
  ]);
  expect(short((await queueOf(v)).urls)).toEqual([2, 1]);
  // Twice: nothing more.
  await importArchive(t.db, v.id, archive, { dryRun: false, progress: () => undefined, keep: DEFAULT_KEEP });
  expect(short((await queueOf(v)).urls)).toEqual([2, 1]);
});

describe('on the web page', () => {
  let server: Awaited<ReturnType<typeof feedServer>>;
  const media = (n: number) => `https://media.example.org/web-${n}.mp3`;
  const SHOW = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Queue Show</title>
${[1, 2, 3]
  .map(
    (n) => `<item><guid>web-${n}</guid><title>Web ${n}</title><pubDate>Mon, 0${n} Jan 2024 10:00:00 GMT</pubDate>
<itunes:duration>600</itunes:duration><link>https://example.org/web-${n}</link><enclosure url="${media(n)}" type="audio/mpeg"/></item>`,
  )
  .join('')}
</channel></rss>`;
  beforeAll(async () => {
    server = await feedServer({ '/show': xml(SHOW) });
  });
  afterAll(() => server.close());

  /** A user subscribed to the show, fetched, signed in on the web page. */
  async function listener() {
    const u = await t.user('web');
    await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/show') }] });
    const settings = fetcherSettings(loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, { dotenvFile: false }));
    await t.db.query('UPDATE feeds SET next_fetch_at = now()');
    await fetchDueFeeds({ db: t.db, logger: capturedLogger('warn').logger }, settings);
    const { agent } = await signedInAgent(t.app, u.name, u.password);
    const ids = (
      await t.db.query<{ id: string }>("SELECT id::text AS id FROM feed_items WHERE title LIKE 'Web %' ORDER BY title")
    ).rows.map((r) => r.id);
    const post = async (path: string, fields: Record<string, string>) => {
      const page = await agent.get(`/web/episodes/${ids[0]}`);
      return agent
        .post(path)
        .type('form')
        .send({ _csrf: csrfOf(page.text), ...fields });
    };
    return { u, agent, ids, post };
  }

  test('a favourite starred on the web is served by /v1/episodes and /api/2/favorites with its time', async () => {
    const { u, agent, ids, post } = await listener();
    const before = Date.now();
    const starred = await post(`/web/episodes/${ids[1]}/favourite`, { value: '1', back: `/web/episodes/${ids[1]}` });
    expect(starred.status).toBe(303);
    const page = await agent.get(`/web/episodes/${ids[1]}`);
    expect(page.text).toMatch(/aria-pressed="true" aria-label="Favourite: Web 2"/);
    const record = ((await as(t, u).get('/v1/episodes')).body.episodes as Record<string, { timestamp: string }>[])[0]!;
    expect(record).toMatchObject({ enclosure_url: media(2), title: 'Web 2', favorite_status: { value: true } });
    const at = Date.parse(record.favorite_status!.timestamp);
    expect(at).toBeGreaterThanOrEqual(before - 1);
    expect(at).toBeLessThanOrEqual(Date.now());
    const served = (await as(t, u).get(`/api/2/favorites/${u.name}.json`)).body;
    expect(served).toEqual([
      {
        title: 'Web 2',
        url: media(2),
        podcast_title: 'Queue Show',
        podcast_url: server.url('/show'),
        description: '',
        website: 'https://example.org/web-2',
        mygpo_link: expect.stringMatching(new RegExp(`/web/episodes/${ids[1]}$`)),
        released: '2024-01-02T10:00:00',
      },
    ]);
    expect((await agent.get('/web/favourites')).text).toContain('Web 2');
    await post('/web/favourites/clear', { podcast_url: server.url('/show'), enclosure_url: media(2) });
    expect((await as(t, u).get(`/api/2/favorites/${u.name}.json`)).body).toEqual([]);
  });

  test('add to queue, play next, move, remove; the player reaching the end takes it off', async () => {
    const { u, agent, ids, post } = await listener();
    await post(`/web/episodes/${ids[0]}/queue`, { at: 'end' });
    await post(`/web/episodes/${ids[1]}/queue`, { at: 'end' });
    await post(`/web/episodes/${ids[2]}/queue`, { at: 'next' });
    expect(short((await queueOf(u)).urls.map((x) => x.replace('web-', '')))).toEqual([3, 1, 2]);
    const q = await queueOf(u);
    await post(`/web/queue/${q.items[2]!.id}/move`, { at: '0' });
    expect(short((await queueOf(u)).urls.map((x) => x.replace('web-', '')))).toEqual([2, 3, 1]);
    const list = await agent.get('/web/queue');
    expect(list.text).toMatch(/Web 2[\s\S]*Web 3[\s\S]*Web 1/);
    await post(`/web/queue/${q.items[0]!.id}/remove`, {});
    expect(short((await queueOf(u)).urls.map((x) => x.replace('web-', '')))).toEqual([2, 1]);
    // The web player reaches the end of Web 2: it leaves Up next.
    const saved = await post(`/web/episodes/${ids[1]}/position`, { position: '600', total: '600' });
    expect(saved.status).toBe(204);
    expect(short((await queueOf(u)).urls.map((x) => x.replace('web-', '')))).toEqual([1]);
  });

  test('a feed that moved: Up next names the podcast by the feed at its new URL', async () => {
    const { u, agent, ids, post } = await listener();
    await post(`/web/episodes/${ids[0]}/queue`, { at: 'end' });
    const [record] = (await as(t, u).get('/v1/subscriptions')).body.subscriptions as { guid: string }[];
    const moved = 'https://moved.example/queue-show';
    expect((await as(t, u).patch(`/v1/subscriptions/${record!.guid}`, { new_feed_url: moved })).status).toBe(200);
    await t.db.query(`INSERT INTO feeds (url_hash, feed_url, title) VALUES ($1, $2, 'Moved Queue Show')`, [
      urlHashOf(moved),
      moved,
    ]);
    const list = await agent.get('/web/queue');
    expect(list.text).toMatch(/Web 1[\s\S]*Moved Queue Show/);
  });

  test('unsubscribing asks whether its queued episodes go too, and keeps them unless told', async () => {
    const { u, agent, ids, post } = await listener();
    await post(`/web/episodes/${ids[0]}/queue`, { at: 'end' });
    const guid = ((await as(t, u).get('/v1/subscriptions')).body.subscriptions as { guid: string }[])[0]!.guid;
    const asked = await post(`/web/subscriptions/${guid}/unsubscribe`, { back: '/web/subscriptions' });
    expect(asked.status).toBe(200);
    expect(asked.text).toContain('One of its episodes is');
    expect((await queueOf(u)).urls).toHaveLength(1);
    const ids_ = /name="ids" value="([\d,]+)"/.exec(asked.text)![1]!;
    const taken = await post('/web/queue/remove', { ids: ids_, back: '/web/subscriptions' });
    expect(taken.headers.location).toBe('/web/subscriptions');
    expect((await queueOf(u)).urls).toEqual([]);
    expect((await agent.get('/web/queue')).text).toContain('Up next is empty.');
  });
});
