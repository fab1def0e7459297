import type http from 'node:http';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import { performDeletion, requestDeletion } from '../../src/deletions/service';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import { podcastGuid } from '../../src/subscriptions/urls';
import { feedServer, redirect, rss, xml } from '../helpers/feed-server';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { sentStatements } from '../helpers/statements';
import { csrfOf, signedInAgent } from '../helpers/web';

// The feed rule (docs/decisions/feed-rule.md): what a feed declares (a podcast:guid, a permanent
// redirect, itunes:new-feed-url or podcast:newFeedUrl) never removes, merges or hides a subscription.
// Each test gives its feeds paths of their own on one loopback feed server, runs the fetcher, and reads
// the person's list through every door.

let t: TestApp;
let fixture: Awaited<ReturnType<typeof feedServer>>;
type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
const routes = new Map<string, Handler>();
const settings = fetcherSettings(
  loadConfig({ FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8', FEED_FETCH_TIMEOUT: '2' }, { dotenvFile: false }),
);
const logger = pino({ level: 'silent' });

/** Fetches every due feed, as many rounds as asked (each round makes every feed due again first). */
async function fetchFeeds(rounds = 1) {
  for (let i = 0; i < rounds; i++) {
    await t.db.query('UPDATE feeds SET next_fetch_at = now()');
    await fetchDueFeeds({ db: t.db, logger }, settings);
  }
}

const G1 = '6a1d3c1e-5b7f-4e2a-9c3d-0e1f2a3b4c5d';
const G2 = 'b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e';

beforeAll(async () => {
  t = await testApp();
  fixture = await feedServer({
    '/*': (req, res) => {
      const handler = routes.get((req.url ?? '/').split('?')[0]!);
      if (handler) handler(req, res);
      else res.writeHead(404).end();
    },
  });
});
afterAll(async () => {
  await fixture.close();
  await t.close();
});

/** Serves these paths (relative to a prefix of the test's own) and returns their absolute URLs. */
function serve(prefix: string, feeds: Record<string, Handler>): Record<string, string> {
  const urls: Record<string, string> = {};
  for (const [path, handler] of Object.entries(feeds)) {
    routes.set(`/${prefix}${path}`, handler);
    urls[path] = fixture.url(`/${prefix}${path}`);
  }
  return urls;
}
const feed = (o: Parameters<typeof rss>[0]) => xml(rss(o));
/** A channel that declares podcast:newFeedUrl (and nothing of iTunes). */
const podcastMove = (title: string, to: string) =>
  xml(rss({ title }).replace('</channel>', `<podcast:newFeedUrl>${to}</podcast:newFeedUrl></channel>`));

async function subscribe(u: TestUser, feeds: { feed_url: string; guid?: string }[]) {
  const r = await as(t, u).post('/v1/subscriptions', { subscriptions: feeds });
  expect(r.body.failure).toEqual([]);
  return (r.body.success as { guid: string }[]).map((s) => s.guid);
}

/** A gpodder device's pull: its timestamp to pull from later. */
async function pulledAt(u: TestUser, device: string): Promise<number> {
  return (await as(t, u).get(`/api/2/subscriptions/${u.name}/${device}.json?since=0`)).body.timestamp as number;
}

const sorted = (a: string[]) => [...a].sort();

/**
 * Every door shows exactly these URLs as the person's subscriptions, each once: the OPA list and each
 * record's own GET, a gpodder device that pulled before (no removal of them) and a new one, Nextcloud,
 * OPML and the web page.
 */
async function expectEveryDoorShows(u: TestUser, urls: string[], guids: string[], oldPull: number) {
  const api = as(t, u);
  const list = (await api.get('/v1/subscriptions?per_page=500')).body.subscriptions as {
    feed_url: string;
    is_subscribed: boolean;
  }[];
  expect(sorted(list.filter((s) => s.is_subscribed).map((s) => s.feed_url))).toEqual(sorted(urls));
  for (const guid of guids) {
    const one = await api.get(`/v1/subscriptions/${guid}`);
    expect(one.status).toBe(200);
    expect(one.body.is_subscribed).toBe(true);
  }
  const fresh = (await api.get(`/api/2/subscriptions/${u.name}/new-device.json?since=0`)).body;
  expect(sorted(fresh.add)).toEqual(sorted(urls));
  expect(fresh.remove.filter((x: string) => urls.includes(x))).toEqual([]);
  const old = (await api.get(`/api/2/subscriptions/${u.name}/old-device.json?since=${oldPull}`)).body;
  expect(old.remove.filter((x: string) => urls.includes(x))).toEqual([]);
  const nextcloud = (await api.get('/index.php/apps/gpoddersync/subscriptions?since=0')).body;
  expect(sorted(nextcloud.add)).toEqual(sorted(urls));
  const opml = (await api.get('/v1/subscriptions.opml')).text;
  const outlines = [...opml.matchAll(/xmlUrl="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));
  expect(sorted(outlines)).toEqual(sorted(urls));
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const page = (await agent.get('/web/subscriptions')).text;
  for (const url of urls) expect(page).toContain(url);
}

/** The duplicates page offers these URLs as one group, and says why. */
async function expectOffered(u: TestUser, urls: string[], why: string | RegExp) {
  const { agent } = await signedInAgent(t.app, u.name, u.password);
  const page = (await agent.get('/web/duplicates')).text;
  const group = page.split('<section class="card"').find((g) => urls.every((url) => g.includes(url)));
  expect(group).toBeDefined();
  expect(group).toMatch(why);
}

describe('a podcast guid two feeds declare', () => {
  test('both subscriptions stay on every door, one learns the guid, and the duplicates page offers the pair', async () => {
    const u = await t.user('sameguid');
    const f = serve('sameguid', {
      '/a': feed({ title: 'A copy', guid: G1 }),
      '/b': feed({ title: 'B copy', guid: G1 }),
    });
    const guids = await subscribe(u, [{ feed_url: f['/a']! }, { feed_url: f['/b']! }]);
    const before = await pulledAt(u, 'old-device');
    await fetchFeeds(2);
    await expectEveryDoorShows(u, [f['/a']!, f['/b']!], [...guids, G1], before);
    // Exactly one of them took the guid; the other keeps the one computed from its URL.
    const holder = (await as(t, u).get(`/v1/subscriptions/${G1}`)).body.feed_url as string;
    const other = holder === f['/a'] ? f['/b']! : f['/a']!;
    expect((await as(t, u).get(`/v1/subscriptions/${podcastGuid(other)}`)).body.new_guid).toBeUndefined();
    await expectOffered(u, [f['/a']!, f['/b']!], `both feeds declare podcast guid ${G1}`);
  });

  test('a guid an app gave another subscription is not taken by a feed that declares it', async () => {
    const u = await t.user('appguid');
    const f = serve('appguid', { '/mine': feed({ title: 'Mine' }), '/copy': feed({ title: 'Copy', guid: G1 }) });
    const guids = await subscribe(u, [{ feed_url: f['/mine']!, guid: G1 }, { feed_url: f['/copy']! }]);
    const before = await pulledAt(u, 'old-device');
    await fetchFeeds(2);
    await expectEveryDoorShows(u, [f['/mine']!, f['/copy']!], guids, before);
    expect((await as(t, u).get(`/v1/subscriptions/${G1}`)).body.feed_url).toBe(f['/mine']);
    expect((await as(t, u).get(`/v1/subscriptions/${guids[1]}`)).body.new_guid).toBeUndefined();
    await expectOffered(u, [f['/mine']!, f['/copy']!], `the same podcast guid ${G1}`);
  });

  test('a guid that a removed subscription had is not taken either: the removal stays', async () => {
    const u = await t.user('goneguid');
    const f = serve('goneguid', { '/old': feed({ title: 'Old' }), '/new': feed({ title: 'New', guid: G1 }) });
    const [old, fresh] = await subscribe(u, [{ feed_url: f['/old']!, guid: G1 }, { feed_url: f['/new']! }]);
    const deletion = await requestDeletion(t.db, u.id, old!);
    await performDeletion(t.db, logger, deletion.id);
    const before = await pulledAt(u, 'old-device');
    await fetchFeeds(2);
    expect((await as(t, u).get(`/v1/subscriptions/${G1}`)).status).toBe(410);
    await expectEveryDoorShows(u, [f['/new']!], [fresh!], before);
  });

  test('a feed whose guid changes keeps the first one it gave; nothing merges', async () => {
    const u = await t.user('drift');
    let declared = G1;
    const f = serve('drift', { '/feed': (req, res) => feed({ title: 'Drifting', guid: declared })(req, res) });
    const [guid] = await subscribe(u, [{ feed_url: f['/feed']! }]);
    await fetchFeeds();
    declared = G2;
    await fetchFeeds(2);
    const r = await as(t, u).get(`/v1/subscriptions/${guid}`);
    expect(r.body).toMatchObject({ feed_url: f['/feed'], new_guid: G1 });
    expect((await as(t, u).get(`/v1/subscriptions/${G2}`)).status).toBe(404);
  });

  test("two people on one feed: one person's collision changes nothing of the other's", async () => {
    const [alice, bob] = [await t.user('alice'), await t.user('bob')];
    const f = serve('twopeople', {
      '/shared': feed({ title: 'Shared', guid: G2 }),
      '/other': feed({ title: 'Other' }),
    });
    const aliceGuids = await subscribe(alice, [{ feed_url: f['/other']!, guid: G2 }, { feed_url: f['/shared']! }]);
    const [bobGuid] = await subscribe(bob, [{ feed_url: f['/shared']! }]);
    const before = await pulledAt(alice, 'old-device');
    await fetchFeeds(2);
    await expectEveryDoorShows(alice, [f['/other']!, f['/shared']!], aliceGuids, before);
    expect((await as(t, bob).get(`/v1/subscriptions/${bobGuid}`)).body.new_guid).toBe(G2);
    expect((await as(t, alice).get(`/v1/subscriptions/${G2}`)).body.feed_url).toBe(f['/other']);
  });
});

describe('a feed that says it moved', () => {
  test('two feeds that move to one new URL: the first is followed, the second stays, both on every door', async () => {
    const u = await t.user('twomoves');
    const f = serve('twomoves', {
      '/a': redirect(301, '/twomoves/home'),
      '/b': redirect(308, '/twomoves/home'),
      '/home': feed({ title: 'Home' }),
    });
    const guids = await subscribe(u, [{ feed_url: f['/a']! }, { feed_url: f['/b']! }]);
    const before = await pulledAt(u, 'old-device');
    await fetchFeeds(2);
    const list = (await as(t, u).get('/v1/subscriptions')).body.subscriptions as { feed_url: string }[];
    const urls = list.map((s) => s.feed_url);
    expect(urls.filter((x) => x === f['/home'])).toHaveLength(1);
    await expectEveryDoorShows(u, urls, guids, before);
    const stayed = urls.find((x) => x !== f['/home'])!;
    await expectOffered(u, [stayed, f['/home']!], `the feed at ${stayed} says it moved to ${f['/home']}`);
  });

  test('a move onto a URL the person already has is not followed: both stay', async () => {
    const u = await t.user('onto');
    const f = serve('onto', {
      '/old': feed({ title: 'Old', newFeedUrl: fixture.url('/onto/kept') }),
      '/kept': feed({ title: 'Kept' }),
    });
    const guids = await subscribe(u, [{ feed_url: f['/old']! }, { feed_url: f['/kept']! }]);
    const before = await pulledAt(u, 'old-device');
    await fetchFeeds(2);
    await expectEveryDoorShows(u, [f['/old']!, f['/kept']!], guids, before);
    await expectOffered(u, [f['/old']!, f['/kept']!], `says it moved to ${f['/kept']}`);
  });

  test('a move onto a URL the person removed (unsubscribed) neither follows nor brings it back', async () => {
    const u = await t.user('removed');
    const f = serve('removed', {
      '/live': podcastMove('Live', fixture.url('/removed/gone')),
      '/gone': feed({ title: 'Gone' }),
    });
    const [live, gone] = await subscribe(u, [{ feed_url: f['/live']! }, { feed_url: f['/gone']! }]);
    await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, { add: [], remove: [f['/gone']] });
    const before = await pulledAt(u, 'old-device');
    await fetchFeeds(2);
    await expectEveryDoorShows(u, [f['/live']!], [live!], before);
    expect((await as(t, u).get(`/v1/subscriptions/${gone}`)).body).toMatchObject({
      feed_url: f['/gone'],
      is_subscribed: false,
    });
    await expectOffered(u, [f['/live']!, f['/gone']!], `says it moved to ${f['/gone']}`);
  });

  test('a move onto a deleted subscription (a tombstone) is not followed, and the deletion stays', async () => {
    const u = await t.user('tomb');
    const f = serve('tomb', {
      '/live': redirect(301, '/tomb/dead'),
      '/dead': feed({ title: 'Dead' }),
    });
    const [live, dead] = await subscribe(u, [{ feed_url: f['/live']! }, { feed_url: f['/dead']! }]);
    await performDeletion(t.db, logger, (await requestDeletion(t.db, u.id, dead!)).id);
    const before = await pulledAt(u, 'old-device');
    await fetchFeeds(2);
    await expectEveryDoorShows(u, [f['/live']!], [live!], before);
    expect((await as(t, u).get(`/v1/subscriptions/${dead}`)).status).toBe(410);
  });

  test('a chain of moves ends at its last URL; a loop of moves settles and never flips back', async () => {
    const u = await t.user('loops');
    const f = serve('loops', {
      '/one': redirect(301, '/loops/two'),
      '/two': redirect(301, '/loops/three'),
      '/three': feed({ title: 'Three' }),
      '/ping': feed({ title: 'Ping', newFeedUrl: fixture.url('/loops/pong') }),
      '/pong': feed({ title: 'Pong', newFeedUrl: fixture.url('/loops/ping') }),
      '/spin': redirect(301, '/loops/spun'),
      '/spun': redirect(301, '/loops/spin'),
    });
    const [chain, loop, spin] = await subscribe(u, [
      { feed_url: f['/one']! },
      { feed_url: f['/ping']! },
      { feed_url: f['/spin']! },
    ]);
    await fetchFeeds(4);
    expect((await as(t, u).get(`/v1/subscriptions/${chain}`)).body.feed_url).toBe(f['/three']);
    expect((await as(t, u).get(`/v1/subscriptions/${loop}`)).body.feed_url).toBe(f['/pong']);
    // A redirect loop never answers: nothing is learnt from it.
    expect((await as(t, u).get(`/v1/subscriptions/${spin}`)).body.feed_url).toBe(f['/spin']);
    const moves = await t.db.query(
      `SELECT old_value, new_value FROM feed_changes WHERE user_id = $1 AND kind = 'moved'`,
      [u.id],
    );
    expect(sorted(moves.rows.map((m) => `${m.old_value} ${m.new_value}`))).toEqual(
      sorted([`${f['/one']} ${f['/three']}`, `${f['/ping']} ${f['/pong']}`]),
    );
  });
});

describe('a feed fetched again', () => {
  /** The users whose row a fetch locked for a change of one of their records (the fetcher's per-record step). */
  const lockedUsers = async (fn: () => Promise<unknown>): Promise<number[]> =>
    (await sentStatements(fn))
      .filter((s) => s.text === 'SELECT 1 FROM users WHERE id = $1 FOR UPDATE')
      .map((s) => Number(s.values![0]));

  test('passes over the subscribers that took its guid already: only one who came since takes it', async () => {
    const G3 = 'c3d4e5f6-a7b8-4c9d-8e0f-2a3b4c5d6e7f';
    const f = serve('again', { '/feed': feed({ title: 'Again', guid: G3 }) });
    const early = [await t.user('early'), await t.user('early'), await t.user('early')];
    for (const u of early) await subscribe(u, [{ feed_url: f['/feed']! }]);
    await fetchFeeds();
    const late = await t.user('late');
    await subscribe(late, [{ feed_url: f['/feed']! }]);
    const ours = new Set([...early, late].map((u) => u.id));
    expect((await lockedUsers(() => fetchFeeds())).filter((id) => ours.has(id))).toEqual([late.id]);
    for (const u of [...early, late]) {
      expect((await as(t, u).get(`/v1/subscriptions/${G3}`)).body).toMatchObject({ feed_url: f['/feed'] });
    }
  });
});

describe('a single feed still moves and still gives its guid', () => {
  test('podcast:newFeedUrl alone moves a record, noted with its source', async () => {
    const u = await t.user('p20move');
    const f = serve('p20move', {
      '/from': podcastMove('From', fixture.url('/p20move/to')),
      '/to': xml(rss({ title: 'To' }).replace('Episode 1', 'Episode at the new URL')),
    });
    const [guid] = await subscribe(u, [{ feed_url: f['/from']! }]);
    await fetchFeeds();
    expect((await as(t, u).get(`/v1/subscriptions/${guid}`)).body.feed_url).toBe(f['/to']);
    const noted = await t.db.query('SELECT kind, source FROM feed_changes WHERE user_id = $1', [u.id]);
    expect(noted.rows).toEqual([{ kind: 'moved', source: 'podcast:newFeedUrl' }]);
    // The Subscriptions page names it as the feed at its new URL says, and finds it by that title.
    await fetchFeeds();
    const { agent } = await signedInAgent(t.app, u.name, u.password);
    const page = (await agent.get('/web/subscriptions?q=To')).text;
    expect(page).toContain(f['/to']);
    expect(page).toMatch(/>\s*To\s*</);
    // Its episodes are the feed's at its new URL.
    const episodes = await agent.get(`/web/subscriptions/${guid}/episodes`);
    expect(episodes.status).toBe(200);
    expect(episodes.text).toContain('Episode at the new URL');
    const item = await t.db.query<{ id: string }>(
      `SELECT id::text FROM feed_items WHERE title = 'Episode at the new URL'`,
    );
    expect((await agent.get(`/web/episodes/${item.rows[0]!.id}`)).status).toBe(200);
  });
});

describe('what the fetcher changed is shown, and a move can be undone', () => {
  test('a followed move and a learnt guid are in the activity with their source; undo brings the old URL back for good', async () => {
    const u = await t.user('undo');
    const f = serve('undo', {
      '/before': feed({ title: 'Before', newFeedUrl: fixture.url('/undo/after') }),
      '/after': feed({ title: 'After' }),
      '/declares': feed({ title: 'Declares', guid: G2 }),
    });
    const [moved] = await subscribe(u, [{ feed_url: f['/before']! }, { feed_url: f['/declares']! }]);
    await fetchFeeds();
    expect((await as(t, u).get(`/v1/subscriptions/${moved}`)).body.feed_url).toBe(f['/after']);
    const { agent } = await signedInAgent(t.app, u.name, u.password);
    const page = (await agent.get('/web/activity')).text;
    expect(page).toContain(`Moved from ${f['/before']} to ${f['/after']}`);
    expect(page).toContain('the feed declares itunes:new-feed-url');
    expect(page).toContain(`is now ${G2}`);
    expect(page).toContain('the feed declares podcast:guid');

    const phone = await pulledAt(u, 'phone');
    const id = /action="\/web\/feed-changes\/(\d+)\/undo"/.exec(page)![1];
    const undone = await agent
      .post(`/web/feed-changes/${id}/undo`)
      .type('form')
      .send({ _csrf: csrfOf(page) });
    expect(undone.status).toBe(200);
    expect(undone.text).toContain('The move was undone');
    expect(undone.text).not.toContain(`action="/web/feed-changes/${id}/undo"`);
    expect((await as(t, u).get(`/v1/subscriptions/${moved}`)).body.feed_url).toBe(f['/before']);
    const pulled = (await as(t, u).get(`/api/2/subscriptions/${u.name}/phone.json?since=${phone}`)).body;
    // (A pull may repeat what changed within its last second: it never misses one.)
    expect(pulled.add).toContain(f['/before']);
    expect(pulled.add).not.toContain(f['/after']);
    expect(pulled.remove).toEqual([f['/after']]);

    // The feed still says it moved: the person said no, and the fetcher never follows it again.
    await fetchFeeds(2);
    expect((await as(t, u).get(`/v1/subscriptions/${moved}`)).body.feed_url).toBe(f['/before']);
    const again = await agent
      .post(`/web/feed-changes/${id}/undo`)
      .type('form')
      .send({ _csrf: csrfOf(page) });
    expect(again.text).toContain('undone already');
  });

  test("another person's feed change cannot be undone, and an unknown one is a page that says so", async () => {
    const [owner, other] = [await t.user('owner'), await t.user('other')];
    const f = serve('private', {
      '/x': feed({ title: 'X', newFeedUrl: fixture.url('/private/y') }),
      '/y': feed({ title: 'Y' }),
    });
    const [guid] = await subscribe(owner, [{ feed_url: f['/x']! }]);
    await fetchFeeds();
    const id = (await t.db.query('SELECT id FROM feed_changes WHERE user_id = $1', [owner.id])).rows[0].id as number;
    const { agent, csrf } = await signedInAgent(t.app, other.name, other.password);
    const r = await agent.post(`/web/feed-changes/${id}/undo`).type('form').send({ _csrf: csrf });
    expect(r.status).toBe(404);
    expect((await as(t, owner).get(`/v1/subscriptions/${guid}`)).body.feed_url).toBe(f['/y']);
  });
});
