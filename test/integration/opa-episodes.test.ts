import Ajv2020 from 'ajv/dist/2020';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { loadConfig } from '../../src/config';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { podcastGuid } from '../../src/subscriptions/urls';
import { as, expectError, ISO_MS, testApp, type TestApp, type TestUser } from '../helpers/app';
import { feedServer, xml } from '../helpers/feed-server';
import { capturedLogger } from '../helpers/logs';

// GET and POST /v1/episodes in the shape of the Open Podcast API's episodes draft (experimental), over
// the same episode actions the gpodder and Nextcloud apps upload and read.

type Draft = { example: { episodes: Record<string, unknown>[] } };
const draft = JSON.parse(readFileSync(path.join(__dirname, '../fixtures/opa-episodes-draft.json'), 'utf8')) as Draft;
const [historyOfRss, weatherman] = draft.example.episodes as [Record<string, unknown>, Record<string, unknown>];

let t: TestApp;
let server: Awaited<ReturnType<typeof feedServer>>;
const captured = capturedLogger('warn');
const settings = fetcherSettings(loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' }, { dotenvFile: false }));

const SHOW = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Records Show</title>
<item><guid>rec-1</guid><title>First record</title><pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
  <itunes:duration>1000</itunes:duration><link>https://example.org/rec-1</link>
  <enclosure url="https://media.example.org/rec-1.mp3" type="audio/mpeg"/></item>
</channel></rss>`;

beforeAll(async () => {
  t = await testApp();
  server = await feedServer({ '/show': xml(SHOW) });
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

const episodesOf = async (u: TestUser, query = '') => {
  const r = await as(t, u).get(`/v1/episodes${query}`);
  expect(r.status).toBe(200);
  return r;
};
const subscribe = (u: TestUser, subscriptions: { feed_url: string; guid?: string }[]) =>
  as(t, u).post('/v1/subscriptions', { subscriptions });

/** The OpenAPI document's schema `name`, compiled with the document's other schemas for its references. */
async function schemaOf(name: string) {
  const doc = (await request(t.app).get('/openapi.json')).body as { components: { schemas: object } };
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: 'castsync', components: doc.components });
  return ajv.getSchema(`castsync#/components/schemas/${name}`)!;
}

describe('the OpenAPI schemas take the episodes draft', () => {
  test("the draft's example page validates against the GET response schema", async () => {
    const validate = await schemaOf('EpisodePage');
    expect(validate(draft.example)).toBe(true);
    // …and the schema is not one that takes anything.
    expect(validate({ ...draft.example, episodes: [{ ...historyOfRss, played_status: 'yes' }] })).toBe(false);
    expect(validate({ ...draft.example, episodes: [{ ...historyOfRss, sync_id: undefined }] })).toBe(false);
  });

  test("the draft's example records validate against the POST request schema", async () => {
    const validate = await schemaOf('EpisodesRequest');
    expect(validate(draft.example.episodes)).toBe(true);
    expect(validate(draft.example)).toBe(false);
  });

  test("the server's own page validates against its schema", async () => {
    const u = await t.user();
    await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
      {
        podcast: 'https://schema.example/feed.xml',
        episode: 'https://schema.example/1.mp3',
        action: 'play',
        timestamp: '2026-11-20T10:00:00',
        position: 10,
      },
    ]);
    const page = (await episodesOf(u)).body;
    expect(page.episodes).toHaveLength(1);
    expect((await schemaOf('EpisodePage'))(page)).toBe(true);
  });

  test('capabilities advertise the episodes as unstable, and the document says the shape may change', async () => {
    const caps = (await request(t.app).get('/v1/capabilities')).body.capabilities;
    expect(caps['urn:opa:episodes']).toEqual({ '0.0.0-draft': { status: 'UNSTABLE', root: '/v1' } });
    const doc = (await request(t.app).get('/openapi.json')).body;
    expect(doc.paths['/v1/episodes'].get.description).toMatch(/Experimental.*may change/);
    expect(doc.paths['/v1/episodes'].post.description).toMatch(/Experimental.*may change/);
  });
});

describe('POST then GET', () => {
  test("the draft's example records round-trip: identity, position, played, download", async () => {
    const u = await t.user();
    // The draft's podcasts, as the user's subscriptions with the draft's guids.
    await subscribe(u, [
      { feed_url: 'https://example.com/podcast/feed.xml', guid: historyOfRss.podcast_guid as string },
      { feed_url: 'https://podcasts.example2.net/@digitalcitizen/feed.xml', guid: weatherman.podcast_guid as string },
    ]);
    const posted = await as(t, u).post('/v1/episodes', [
      { ...historyOfRss, temporary_id: 'local-1' },
      { ...weatherman, temporary_id: 2 },
    ]);
    expect(posted.status).toBe(200);
    expect(posted.body.failure).toEqual([]);
    const [first, second] = posted.body.success;
    expect(first).toEqual({
      temporary_id: 'local-1',
      sync_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      podcast_guid: historyOfRss.podcast_guid,
      enclosure_url: historyOfRss.enclosure_url,
    });
    expect(second.temporary_id).toBe(2);

    const got = (await episodesOf(u)).body;
    expect(got.total).toBe(2);
    const bySync = new Map(got.episodes.map((e: { sync_id: string }) => [e.sync_id, e]));
    // The second: every value and time as sent (a zoneless time is UTC; whole minutes gain seconds).
    expect(bySync.get(second.sync_id)).toEqual({
      podcast_guid: weatherman.podcast_guid,
      podcast_url: 'https://podcasts.example2.net/@digitalcitizen/feed.xml',
      sync_id: second.sync_id,
      episode_guid: weatherman.episode_guid,
      title: null,
      publish_date: null,
      enclosure_url: weatherman.enclosure_url,
      episode_url: null,
      playback_position: { value: 2100, timestamp: '2024-11-01T17:38:00.000Z' },
      played_status: { value: false, timestamp: '2024-11-01T17:38:00.000Z' },
      // Marked unplayed (stored as a "new") in April, played since: not new.
      new_status: { value: false, timestamp: '2024-11-01T17:38:00.000Z' },
      download_status: { value: true, timestamp: '2024-11-01T17:02:00.000Z' },
      // Kept as sent, cleared or not (an older "set" from another device cannot bring it back).
      favorite_status: { value: false, timestamp: '2024-04-28T09:20:00.000Z' },
    });
    // The first: played at 13:19 (a play to the end, the position with it), deleted at 13:19.
    expect(bySync.get(first.sync_id)).toMatchObject({
      podcast_guid: historyOfRss.podcast_guid,
      episode_guid: historyOfRss.episode_guid,
      enclosure_url: historyOfRss.enclosure_url,
      played_status: { value: true, timestamp: '2024-11-02T13:19:00.000Z' },
      download_status: { value: false, timestamp: '2024-11-02T13:19:00.000Z' },
    });

    // The same records again store nothing new (apps retry).
    const before = await t.db.query('SELECT count(*)::int AS n FROM episode_actions WHERE user_id = $1', [u.id]);
    await as(t, u).post('/v1/episodes', [historyOfRss, weatherman]);
    const after = await t.db.query('SELECT count(*)::int AS n FROM episode_actions WHERE user_id = $1', [u.id]);
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  test('a known sync id alone names the episode; an update moves its position', async () => {
    const u = await t.user();
    await subscribe(u, [{ feed_url: 'https://sync.example/feed.xml' }]);
    const guid = (await as(t, u).get('/v1/subscriptions')).body.subscriptions[0].guid as string;
    const first = await as(t, u).post('/v1/episodes', [
      {
        podcast_guid: guid,
        enclosure_url: 'https://sync.example/1.mp3',
        playback_position: { value: 60, timestamp: '2026-11-20T10:00:00Z' },
      },
    ]);
    const syncId = first.body.success[0].sync_id as string;
    const update = await as(t, u).post('/v1/episodes', [
      { podcast_guid: guid, sync_id: syncId, playback_position: { value: 90, timestamp: '2026-11-20T11:00:00Z' } },
    ]);
    expect(update.body).toEqual({
      success: [{ sync_id: syncId, podcast_guid: guid, enclosure_url: 'https://sync.example/1.mp3' }],
      failure: [],
    });
    const [record] = (await episodesOf(u)).body.episodes;
    expect(record.playback_position).toEqual({ value: 90, timestamp: '2026-11-20T11:00:00.000Z' });
    // An older position does not win over a newer one: the latest by the app's time.
    await as(t, u).post('/v1/episodes', [
      { sync_id: syncId, playback_position: { value: 5, timestamp: '2026-11-19T11:00:00Z' } },
    ]);
    expect((await episodesOf(u)).body.episodes[0].playback_position.value).toBe(90);
  });

  test("the feed's item fills the title, date, page and guid, and its length makes a played mark", async () => {
    const u = await t.user();
    await subscribe(u, [{ feed_url: server.url('/show') }]);
    await t.db.query('UPDATE feeds SET next_fetch_at = now()');
    await fetchDueFeeds({ db: t.db, logger: captured.logger }, settings);
    const guid = (await as(t, u).get('/v1/subscriptions')).body.subscriptions[0].guid as string;
    // Named by its guid only: the feed's item gives the enclosure.
    const posted = await as(t, u).post('/v1/episodes', [
      { podcast_guid: guid, episode_guid: 'rec-1', played_status: { value: true, timestamp: '2026-11-20T10:00:00Z' } },
    ]);
    expect(posted.body.success[0].enclosure_url).toBe('https://media.example.org/rec-1.mp3');
    const [record] = (await episodesOf(u)).body.episodes;
    expect(record).toMatchObject({
      episode_guid: 'rec-1',
      title: 'First record',
      publish_date: '2024-01-01T10:00:00.000Z',
      episode_url: 'https://example.org/rec-1',
      playback_position: { value: 1000 },
      played_status: { value: true, timestamp: '2026-11-20T10:00:00.000Z' },
    });
    // As AntennaPod uploads a played episode: a play from the end to the end of its length.
    const play = (await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions[0];
    expect(play).toMatchObject({ action: 'play', started: 1000, position: 1000, total: 1000 });
  });
});

describe('one store with the gpodder and Nextcloud apps', () => {
  test("an app's actions are records; a record's position reaches the apps' next since", async () => {
    const u = await t.user();
    await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
      {
        podcast: 'https://both.example/feed.xml',
        episode: 'https://both.example/1.mp3',
        guid: 'both-1',
        action: 'play',
        timestamp: '2026-11-20T10:00:00',
        started: 0,
        position: 120,
        total: 600,
        device: 'phone',
      },
      {
        podcast: 'https://both.example/feed.xml',
        episode: 'https://both.example/1.mp3',
        action: 'download',
        timestamp: '2026-11-20T09:00:00',
      },
    ]);
    const since = (await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0`)).body.timestamp as number;
    const [record] = (await episodesOf(u)).body.episodes;
    expect(record).toMatchObject({
      podcast_guid: podcastGuid('https://both.example/feed.xml'),
      podcast_url: 'https://both.example/feed.xml',
      episode_guid: 'both-1',
      enclosure_url: 'https://both.example/1.mp3',
      playback_position: { value: 120, timestamp: '2026-11-20T10:00:00.000Z' },
      played_status: { value: false, timestamp: '2026-11-20T10:00:00.000Z' },
      download_status: { value: true, timestamp: '2026-11-20T09:00:00.000Z' },
    });
    expect(record.new_status).toBeUndefined();

    const posted = await as(t, u).post('/v1/episodes', [
      {
        podcast_guid: record.podcast_guid,
        podcast_url: record.podcast_url,
        sync_id: record.sync_id,
        playback_position: { value: 300, timestamp: '2026-11-21T08:00:00Z' },
      },
    ]);
    expect(posted.body.failure).toEqual([]);
    // (gpodder's since is whole seconds and includes its second: the app's own upload may come again.)
    // A play AntennaPod reads: it keeps a position only with started, position and total (total: what
    // the app's play said, the feed being unknown); started = position, so no listening is made up.
    const later = (await as(t, u).get(`/api/2/episodes/${u.name}.json?since=${since}`)).body.actions;
    expect(later).toContainEqual({
      podcast: 'https://both.example/feed.xml',
      episode: 'https://both.example/1.mp3',
      guid: 'both-1',
      action: 'play',
      timestamp: '2026-11-21T08:00:00',
      started: 300,
      position: 300,
      total: 600,
    });
    const nextcloud = await as(t, u).get(`/index.php/apps/gpoddersync/episode_action?since=${since}`);
    expect(nextcloud.body.actions.map((a: { position: number }) => a.position)).toContain(300);
  });

  test("without the feed's duration, played and a position are plays to the length an app's play said", async () => {
    const u = await t.user();
    const base = { podcast: 'https://length.example/feed.xml', episode: 'https://length.example/1.mp3' };
    await as(t, u).post(`/api/2/episodes/${u.name}.json`, [
      { ...base, action: 'play', timestamp: '2026-11-20T10:00:00', started: 0, position: 600, total: 1800 },
    ]);
    const record = { podcast_url: base.podcast, enclosure_url: base.episode };
    await as(t, u).post('/v1/episodes', [
      { ...record, played_status: { value: true, timestamp: '2026-11-20T11:00:00Z' } },
    ]);
    const latestPlay = async () =>
      ((await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions as { action: string }[])
        .filter((a) => a.action === 'play')
        .at(-1);
    // AntennaPod marks an episode played when a play's position is near the end of its own media.
    expect(await latestPlay()).toMatchObject({ started: 1800, position: 1800, total: 1800 });
    expect((await episodesOf(u)).body.episodes[0]).toMatchObject({
      playback_position: { value: 1800 },
      played_status: { value: true, timestamp: '2026-11-20T11:00:00.000Z' },
    });
    await as(t, u).post('/v1/episodes', [
      { ...record, playback_position: { value: 900, timestamp: '2026-11-20T12:00:00Z' } },
    ]);
    expect(await latestPlay()).toMatchObject({ started: 900, position: 900, total: 1800 });
    expect((await episodesOf(u)).body.episodes[0]).toMatchObject({
      playback_position: { value: 900 },
      played_status: { value: false },
    });
    // With no length known at all, a position is still where playback stopped, from there.
    await as(t, u).post('/v1/episodes', [
      {
        ...record,
        enclosure_url: 'https://length.example/2.mp3',
        playback_position: { value: 60, timestamp: '2026-11-20T12:00:00Z' },
      },
    ]);
    const [other] = (await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions.filter(
      (a: { episode: string }) => a.episode === 'https://length.example/2.mp3',
    );
    expect(other).toEqual({
      podcast: base.podcast,
      episode: 'https://length.example/2.mp3',
      action: 'play',
      timestamp: '2026-11-20T12:00:00',
      started: 60,
      position: 60,
    });
    // Played with no length known is a play of 1 s; listening again from 600 s is not played for that.
    const third = { ...record, enclosure_url: 'https://length.example/3.mp3' };
    await as(t, u).post('/v1/episodes', [
      { ...third, played_status: { value: true, timestamp: '2026-11-20T13:00:00Z' } },
    ]);
    await as(t, u).post('/v1/episodes', [
      { ...third, playback_position: { value: 600, timestamp: '2026-11-20T14:00:00Z' } },
    ]);
    const again = ((await episodesOf(u)).body.episodes as { enclosure_url: string }[]).find(
      (e) => e.enclosure_url === third.enclosure_url,
    );
    expect(again).toMatchObject({ playback_position: { value: 600 }, played_status: { value: false } });
  });

  test('marked unplayed is a "new"; played again, not new', async () => {
    const u = await t.user();
    const base = { podcast_url: 'https://new.example/feed.xml', enclosure_url: 'https://new.example/1.mp3' };
    await as(t, u).post('/v1/episodes', [
      { ...base, played_status: { value: true, timestamp: '2026-11-20T10:00:00Z' } },
    ]);
    expect((await episodesOf(u)).body.episodes[0].played_status.value).toBe(true);
    await as(t, u).post('/v1/episodes', [
      { ...base, played_status: { value: false, timestamp: '2026-11-20T11:00:00Z' } },
    ]);
    const [unplayed] = (await episodesOf(u)).body.episodes;
    expect(unplayed.played_status).toEqual({ value: false, timestamp: '2026-11-20T11:00:00.000Z' });
    expect(unplayed.new_status).toEqual({ value: true, timestamp: '2026-11-20T11:00:00.000Z' });
    const actions = (await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0`)).body.actions;
    expect(actions.map((a: { action: string }) => a.action)).toEqual(['play', 'new']);
  });
});

describe('since and pages', () => {
  test('paged in a stable order, since-filtered, with a Sync-Timestamp that loses nothing', async () => {
    const u = await t.user();
    const records = [1, 2, 3].map((n) => ({
      podcast_url: 'https://pages.example/feed.xml',
      enclosure_url: `https://pages.example/${n}.mp3`,
      download_status: { value: true, timestamp: '2026-11-20T10:00:00Z' },
    }));
    await as(t, u).post('/v1/episodes', records);
    const first = await episodesOf(u, '?per_page=2');
    expect(first.headers['sync-timestamp']).toMatch(ISO_MS);
    expect(first.body).toMatchObject({ total: 3, page: 1, per_page: 2 });
    expect(first.body.next).toContain('/v1/episodes?page=2&per_page=2');
    const second = await episodesOf(u, '?per_page=2&page=2');
    const ids = [...first.body.episodes, ...second.body.episodes].map((e: { sync_id: string }) => e.sync_id);
    expect(ids).toEqual([...ids].sort());
    expect(new Set(ids).size).toBe(3);

    const since = encodeURIComponent(first.headers['sync-timestamp'] as string);
    expect((await episodesOf(u, `?since=${since}`)).body.total).toBe(0);
    await as(t, u).post('/v1/episodes', [
      { ...records[1], playback_position: { value: 7, timestamp: '2026-11-21T10:00:00Z' } },
    ]);
    const changed = (await episodesOf(u, `?since=${since}`)).body;
    expect(changed.episodes.map((e: { enclosure_url: string }) => e.enclosure_url)).toEqual([
      'https://pages.example/2.mp3',
    ]);
    expectError(await as(t, u).get('/v1/episodes?since=yesterday'), 400, /Invalid since/);
    expect((await request(t.app).get('/v1/episodes')).status).toBe(401);
  });
});

describe('bad records', () => {
  test('each record succeeds or fails on its own, in request order, with why', async () => {
    const u = await t.user();
    const ok = {
      podcast_url: 'https://bad.example/feed.xml',
      enclosure_url: 'https://bad.example/ok.mp3',
      playback_position: { value: 10, timestamp: '2026-11-20T10:00:00Z' },
    };
    const r = await as(t, u).post('/v1/episodes', [
      {
        ...ok,
        temporary_id: 'unknown-podcast',
        podcast_url: undefined,
        podcast_guid: 'c0ffee00-0000-4000-8000-000000000000',
      },
      { ...ok, temporary_id: 'no-podcast', podcast_url: undefined },
      { ...ok, temporary_id: 'no-enclosure', enclosure_url: undefined },
      { ...ok, temporary_id: 'bad-time', playback_position: { value: 1, timestamp: 'yesterday' } },
      { ...ok, temporary_id: 'bad-sync', sync_id: 'not-a-uuid' },
      { ...ok, temporary_id: 'bad-feed', podcast_url: 'ftp://bad.example/feed.xml' },
      { ...ok, temporary_id: 'huge', playback_position: { value: 2 ** 31, timestamp: '2026-11-20T10:00:00Z' } },
      { ...ok, temporary_id: 'year-0', playback_position: { value: 1, timestamp: '0000-06-01T00:00:00Z' } },
      { ...ok, temporary_id: 'fine' },
    ]);
    expect(r.status).toBe(200);
    expect(r.body.success.map((s: { temporary_id: string }) => s.temporary_id)).toEqual(['fine']);
    expect(r.body.failure).toEqual([
      {
        temporary_id: 'unknown-podcast',
        enclosure_url: ok.enclosure_url,
        message: expect.stringMatching(/podcast_guid/),
      },
      { temporary_id: 'no-podcast', enclosure_url: ok.enclosure_url, message: 'podcast_guid: required' },
      { temporary_id: 'no-enclosure', message: expect.stringMatching(/^enclosure_url: required/) },
      {
        temporary_id: 'bad-time',
        enclosure_url: ok.enclosure_url,
        message: expect.stringMatching(/playback_position/),
      },
      {
        temporary_id: 'bad-sync',
        sync_id: 'not-a-uuid',
        enclosure_url: ok.enclosure_url,
        message: 'Invalid sync_id: not a UUID',
      },
      { temporary_id: 'bad-feed', enclosure_url: ok.enclosure_url, message: expect.stringMatching(/^podcast: /) },
      {
        temporary_id: 'huge',
        enclosure_url: ok.enclosure_url,
        message: expect.stringMatching(/^position: whole seconds, 0 to 2147483647/),
      },
      {
        temporary_id: 'year-0',
        enclosure_url: ok.enclosure_url,
        message: expect.stringMatching(/playback_position.timestamp/),
      },
    ]);
    expect((await episodesOf(u)).body.total).toBe(1);
  });

  test('a body that is not an array of records is the contract 405; too many is 413', async () => {
    const u = await t.user();
    expectError(await as(t, u).post('/v1/episodes', { episodes: [] }), 405, /Input could not be validated/);
    expectError(
      await as(t, u).post('/v1/episodes', [{ playback_position: { value: 'far', timestamp: 'x' } }]),
      405,
      /0\.playback_position\.value/,
    );
    const many = Array.from({ length: 1001 }, (_, i) => ({ enclosure_url: `https://x.example/${i}.mp3` }));
    expectError(await as(t, u).post('/v1/episodes', many), 413, /At most 1000 episodes/);
    expect((await as(t, u).post('/v1/episodes', [])).body).toEqual({ success: [], failure: [] });
  });
});
