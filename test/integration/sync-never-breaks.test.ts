import request from 'supertest';
import { antennaPodLogin, as, sessionCookieOf, testApp, type TestApp, type TestUser } from '../helpers/app';
import { capturedLogger } from '../helpers/logs';
import { signedInAgent } from '../helpers/web';

// What real apps (and their old builds and forks) send on unclean data, replayed with their headers: a
// 200 and the good parts stored, never a 400 that would break their sync for good (AntennaPod accepts only
// 200 and re-sends its whole queue after any failure; Kasts re-sends after any error).

const { logger, lines } = capturedLogger('warn');
let t: TestApp;
beforeAll(async () => {
  t = await testApp({}, logger);
});
afterAll(() => t.close());

/** AntennaPod in gpodder.net mode: Basic on the login only, the sessionid cookie afterwards. */
async function antennaPod(u: TestUser) {
  const login = await antennaPodLogin(t, u, { 'User-Agent': 'AntennaPod/3.4.0' });
  const cookie = `sessionid=${sessionCookieOf(login)}`;
  return (method: 'get' | 'post', path: string, body?: unknown) => {
    const r = request(t.app)[method](path).set('Cookie', cookie).set('User-Agent', 'AntennaPod/3.4.0');
    return body === undefined ? r : r.set('Content-Type', 'application/json').send(JSON.stringify(body));
  };
}

/** AntennaPod, Podcini and Kasts in Nextcloud mode: Basic with the app password on every request. */
const nextcloud = (u: TestUser) => (path: string, body: unknown) =>
  request(t.app)
    .post(`/index.php/apps/gpoddersync/${path}`)
    .set('Authorization', u.basic)
    .set('User-Agent', 'AntennaPod/3.4.0')
    .set('Content-Type', 'application/json')
    .send(JSON.stringify(body));

const subscribed = async (u: TestUser) =>
  (
    (await as(t, u).get('/v1/subscriptions?per_page=500')).body.subscriptions as {
      feed_url: string;
      is_subscribed: boolean;
    }[]
  )
    .filter((s) => s.is_subscribed)
    .map((s) => s.feed_url)
    .sort();

describe('a URL both added and removed (AntennaPod before 2025 and its forks, AntennaPod#7570)', () => {
  test('gpodder.net route: 200, the URL is kept subscribed, the rest applied, and it is logged', async () => {
    const u = await t.user();
    await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://both.example/gone.xml' }] });
    const ap = await antennaPod(u);
    lines.length = 0;
    const r = await ap('post', `/api/2/subscriptions/${u.name}/ap.json`, {
      add: ['https://both.example/flip.xml', 'https://both.example/new.xml'],
      remove: ['https://both.example/flip.xml', 'https://both.example/gone.xml'],
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ timestamp: expect.any(Number), update_urls: [] });
    expect(await subscribed(u)).toEqual(['https://both.example/flip.xml', 'https://both.example/new.xml']);
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'subscription upload: URLs both added and removed were kept subscribed',
        userId: u.id,
        device: 'ap',
        urls: ['https://both.example/flip.xml'],
      }),
    );
  });

  test('Nextcloud route: 200 and the same rule; another spelling of a record the upload adds is kept too', async () => {
    const u = await t.user();
    await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://nc-both.example/feed.xml' }] });
    const r = await nextcloud(u)('subscription_change/create', {
      add: ['https://nc-both.example/feed.xml'],
      remove: ['HTTPS://NC-BOTH.EXAMPLE/feed.xml'],
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ timestamp: expect.any(Number) });
    expect(await subscribed(u)).toEqual(['https://nc-both.example/feed.xml']);
  });
});

describe('one malformed URL never fails the upload (AntennaPod#7209)', () => {
  test.each([
    ['gpodder.net', 'api2'],
    ['Nextcloud', 'nextcloud'],
  ])('%s route: the bad URLs are skipped and named, the good ones applied', async (_, route) => {
    const u = await t.user();
    await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://bad.example/old.xml' }] });
    const body = {
      add: [
        'https://bad.example/1.xml',
        'not a url',
        `https://bad.example/${'x'.repeat(5000)}.xml`,
        'itpc://bad.example/2.xml',
      ],
      remove: ['ftp://bad.example/x', 'https://bad.example/old.xml'],
    };
    const r =
      route === 'api2'
        ? await (
            await antennaPod(u)
          )('post', `/api/2/subscriptions/${u.name}/ap.json`, body)
        : await nextcloud(u)('subscription_change/create', body);
    expect(r.status).toBe(200);
    if (route === 'api2') {
      expect(r.body.update_urls).toEqual([
        ['not a url', ''],
        [body.add[2], ''],
        ['itpc://bad.example/2.xml', 'http://bad.example/2.xml'],
        ['ftp://bad.example/x', ''],
      ]);
    }
    expect(await subscribed(u)).toEqual(['http://bad.example/2.xml', 'https://bad.example/1.xml']);
  });

  test('a body that is not {add, remove} lists of strings is still a 400', async () => {
    const u = await t.user();
    const ap = await antennaPod(u);
    for (const body of [{ add: 'https://x.example/' }, { add: [1] }, ['https://x.example/']]) {
      expect((await ap('post', `/api/2/subscriptions/${u.name}/ap.json`, body)).status).toBe(400);
    }
  });
});

describe('one upload, one change', () => {
  test('a URL a record already has under another URL is not announced as a new add', async () => {
    const u = await t.user();
    await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://alias.example/old.xml' }] });
    const guid = (await as(t, u).get('/v1/subscriptions')).body.subscriptions[0].guid as string;
    await as(t, u).patch(`/v1/subscriptions/${guid}`, { new_feed_url: 'https://alias.example/new.xml' });
    const ap = await antennaPod(u);
    const mark = (await ap('get', `/api/2/subscriptions/${u.name}/ap.json?since=0`)).body.timestamp as number;
    await new Promise((r) => setTimeout(r, 1100));
    // The app still knows the feed by its old URL, and uploads it again (a full sync).
    const r = await ap('post', `/api/2/subscriptions/${u.name}/ap.json`, {
      add: ['https://alias.example/old.xml'],
      remove: [],
    });
    expect(r.status).toBe(200);
    expect(r.body.update_urls).toEqual([['https://alias.example/old.xml', 'https://alias.example/new.xml']]);
    const other = await ap('get', `/api/2/subscriptions/${u.name}/other.json?since=${mark + 1}`);
    expect(other.body.add).not.toContain('https://alias.example/old.xml');
    expect(await subscribed(u)).toEqual(['https://alias.example/new.xml']);
  });

  test('a reader polling since never sees the adds of an upload without its removes', async () => {
    const u = await t.user();
    const a = Array.from({ length: 20 }, (_, k) => `https://swap.example/a${k}.xml`);
    const b = Array.from({ length: 20 }, (_, k) => `https://swap.example/b${k}.xml`);
    await as(t, u).post('/v1/subscriptions', { subscriptions: b.map((feed_url) => ({ feed_url })) });
    let writing = true;
    const writer = (async () => {
      for (let k = 0; k < 30; k++) {
        const [add, remove] = k % 2 === 0 ? [a, b] : [b, a];
        const r = await as(t, u).post(`/api/2/subscriptions/${u.name}/w.json`, { add, remove });
        expect(r.status).toBe(200);
      }
      writing = false;
    })();
    const halves: number[] = [];
    let reads = 0;
    while (writing) {
      const state = await as(t, u).get(`/api/2/subscriptions/${u.name}/r.json?since=0`);
      const count = (state.body.add as string[]).length;
      reads++;
      if (count !== 20) halves.push(count);
    }
    await writer;
    expect(reads).toBeGreaterThan(5);
    expect(halves).toEqual([]);
  });
});

describe('episode actions from real apps, one bad one among them', () => {
  test('AntennaPod: a batch of 30 with one unknown action and one play without a position: 28 stored, 200', async () => {
    const u = await t.user();
    const ap = await antennaPod(u);
    const batch = Array.from({ length: 30 }, (_, k) => ({
      podcast: 'https://eps.example/feed.xml',
      episode: `https://eps.example/${k}.mp3`,
      guid: `guid-${k}`,
      action: k === 7 ? 'stream' : 'play',
      timestamp: '2026-11-22T10:00:00',
      ...(k !== 19 && { started: 0, position: 60 + k, total: 3600 }),
    }));
    const r = await ap('post', `/api/2/episodes/${u.name}.json`, batch);
    expect(r.status).toBe(200);
    expect(r.body.skipped.map((s: { index: number }) => s.index)).toEqual([7, 19]);
    const back = await ap('get', `/api/2/episodes/${u.name}.json?since=0`);
    expect(back.body.actions).toHaveLength(28);
    // Re-sent whole, as AntennaPod does after any failure: nothing stored twice, the same 200.
    const again = await ap('post', `/api/2/episodes/${u.name}.json`, batch);
    expect(again.status).toBe(200);
    expect((await ap('get', `/api/2/episodes/${u.name}.json?since=0`)).body.actions).toHaveLength(28);
  });

  test('the Nextcloud app since 3.11 writes +00:00; an offset is honoured; times come back UTC with no zone', async () => {
    const u = await t.user();
    const r = await nextcloud(u)('episode_action/create', [
      {
        podcast: 'https://nc-eps.example/feed.xml',
        episode: 'https://nc-eps.example/1.mp3',
        guid: 'nc-1',
        action: 'PLAY',
        timestamp: '2026-11-22T10:00:00+00:00',
        started: -1,
        position: 120,
        total: -1,
      },
      {
        podcast: 'https://nc-eps.example/feed.xml',
        episode: 'https://nc-eps.example/2.mp3',
        action: 'download',
        timestamp: '2026-11-22T12:00:00+02:00',
      },
    ]);
    expect(r.status).toBe(200);
    const back = await request(t.app)
      .get('/index.php/apps/gpoddersync/episode_action?since=0')
      .set('Authorization', u.basic);
    expect(back.body.actions).toEqual([
      {
        podcast: 'https://nc-eps.example/feed.xml',
        episode: 'https://nc-eps.example/1.mp3',
        guid: 'nc-1',
        action: 'play',
        timestamp: '2026-11-22T10:00:00',
        position: 120,
      },
      {
        podcast: 'https://nc-eps.example/feed.xml',
        episode: 'https://nc-eps.example/2.mp3',
        action: 'download',
        timestamp: '2026-11-22T10:00:00',
      },
    ]);
  });
});

describe("each device's health on the web page", () => {
  test('what an app sent when something was skipped, and why; bounded per device', async () => {
    const u = await t.user();
    const ap = await antennaPod(u);
    await ap('post', `/api/2/subscriptions/${u.name}/pixel.json`, {
      add: ['https://health.example/1.xml', 'feed://'],
      remove: [],
    });
    await ap('post', `/api/2/episodes/${u.name}.json`, [
      {
        podcast: 'https://health.example/1.xml',
        episode: 'https://health.example/1.mp3',
        action: 'play',
        device: 'pixel',
      },
    ]);
    await nextcloud(u)('subscription_change/create', {
      add: ['https://health.example/2.xml'],
      remove: ['https://health.example/2.xml'],
    });
    const { agent } = await signedInAgent(t.app, u.name, u.password);
    const page = await agent.get('/web/devices');
    expect(page.status).toBe(200);
    const text = page.text.replace(/\s+/g, ' ');
    expect(text).toContain('<h2 id="device-0">pixel</h2>');
    expect(text).toContain('uploaded subscriptions: 2 added, 0 removed.');
    expect(text).toContain('feed://</span>: Invalid URL');
    expect(text).toContain('uploaded 1 episode action.');
    expect(text).toContain('<span class="wrap">action 0</span>: position: seconds, at least 0, required for play');
    expect(text.indexOf('uploaded 1 episode action.')).toBeLessThan(text.indexOf('Nextcloud-mode app'));
    expect(text).toContain('Nextcloud-mode app: AntennaPod/3.4.0');
    expect(text).toContain('https://health.example/2.xml</span>: both added and removed: kept subscribed');
    // A clean upload notes nothing; the newest 20 uploads with something skipped are kept per device.
    await ap('post', `/api/2/subscriptions/${u.name}/pixel.json`, {
      add: ['https://health.example/ok.xml'],
      remove: [],
    });
    expect((await t.db.query('SELECT 1 FROM sync_reports WHERE user_id = $1', [u.id])).rowCount).toBe(3);
    for (let k = 0; k < 25; k++) {
      await ap('post', `/api/2/subscriptions/${u.name}/pixel.json`, {
        add: [`https://health.example/n${k}.xml`, 'x'],
        remove: [],
      });
    }
    const kept = await t.db.query('SELECT count(*)::int AS n FROM sync_reports WHERE user_id = $1 AND device_id = $2', [
      u.id,
      'pixel',
    ]);
    expect(kept.rows[0].n).toBe(20);
    // Another user sees none of it.
    const v = await t.user();
    const other = await (await signedInAgent(t.app, v.name, v.password)).agent.get('/web/devices');
    expect(other.text).not.toContain('pixel');
  });
});
