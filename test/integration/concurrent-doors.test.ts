import { randomUUID } from 'node:crypto';
import { as, testApp, type TestApp } from '../helpers/app';

// One person's apps writing at the same moment through different doors: what each is answered, and what
// the store holds after.

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ DB_POOL_MAX: '20' });
});
afterAll(() => t.close());

describe('Up next read by one device while another adds to it', () => {
  const podcast_url = 'https://doors.example/feed';
  const ep = (n: number) => ({ podcast_url, enclosure_url: `https://doors.example/${n}.mp3` });
  type Item = { sync_id: string; enclosure_url: string };

  test('a list read with the ETag of an add holds that add, so a write back with it loses nothing', async () => {
    const u = await t.user();
    await as(t, u).post('/v1/queue/items', ep(0));
    const torn: string[] = [];
    for (let round = 1; round <= 100 && torn.length === 0; round++) {
      const [added, ...reads] = await Promise.all([
        as(t, u).post('/v1/queue/items', ep(round)),
        ...Array.from({ length: 6 }, () => as(t, u).get('/v1/queue')),
      ]);
      expect(added.status).toBe(201);
      for (const read of reads) {
        expect(read.status).toBe(200);
        const has = (read.body.items as Item[]).some((i) => i.enclosure_url === ep(round).enclosure_url);
        if (read.headers.etag === added.headers.etag && !has) torn.push(`round ${round}`);
      }
    }
    // Written back with that ETag (If-Match), such a list would drop the add without a 412.
    expect(torn).toEqual([]);
  });
  test('adds, moves, removes and replaces at once keep positions 0..n-1, with no 5xx', async () => {
    const u = await t.user();
    for (const n of [1, 2, 3]) await as(t, u).post('/v1/queue/items', ep(n));
    const statuses: number[] = [];
    for (let round = 0; round < 15; round++) {
      const { body, headers } = await as(t, u).get('/v1/queue');
      const ids = (body.items as { id: string }[]).map((i) => i.id);
      const answers = await Promise.all([
        as(t, u).post('/v1/queue/items', { ...ep(100 + round), at: 'next' }),
        as(t, u).post('/v1/queue/items', { ...ep(200 + round), at: 1 }),
        as(t, u).patch(`/v1/queue/items/${ids[0]}`, { at: 2 }),
        as(t, u).del(`/v1/queue/items/${ids.at(-1)}`),
        as(t, u)
          .put('/v1/queue')
          .set('If-Match', headers.etag as string)
          .send({ items: [ep(round), ep(round + 1)] }),
      ]);
      statuses.push(...answers.map((a) => a.status));
      const { rows } = await t.db.query<{ p: number[] }>(
        'SELECT array_agg(position ORDER BY position) AS p FROM queue_items WHERE user_id = $1',
        [u.id],
      );
      expect(rows[0]!.p).toEqual(rows[0]!.p.map((_, i) => i));
    }
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
  });
});

describe('one episode written through every door at once', () => {
  const podcast = 'https://doors.example/show.xml';
  const enclosure = (n: number) => `https://doors.example/show/${n}.mp3`;
  const base = Date.parse('2026-10-01T00:00:00Z');
  type Write = { door: string; episode: number; position: number; at: number };

  test('every door ends at the position with the latest app time; a since reader sees it too', async () => {
    const u = await t.user();
    await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: podcast }] });
    const episodes = [0, 1, 2];
    const statuses: number[] = [];
    const writes: Write[] = [];
    // App times in whole seconds, each used once: the gpodder doors carry no more.
    let next = 0;
    const times = Array.from({ length: 400 }, (_, i) => base + (((i * 7919) % 400) + 1) * 1000);
    const write = (door: string, episode: number): Write => ({
      door,
      episode,
      position: 10 + next,
      at: times[next++]!,
    });
    const gpodderTime = (ms: number) => new Date(ms).toISOString().slice(0, 19);
    const send = (w: Write) => {
      const at = new Date(w.at).toISOString();
      switch (w.door) {
        case 'gpodder':
          return as(t, u).post(`/api/2/episodes/${u.name}.json`, [
            {
              podcast,
              episode: enclosure(w.episode),
              action: 'play',
              position: w.position,
              timestamp: gpodderTime(w.at),
            },
          ]);
        case 'nextcloud':
          return as(t, u).post('/index.php/apps/gpoddersync/episode_action/create', [
            {
              podcast,
              episode: enclosure(w.episode),
              action: 'PLAY',
              position: w.position,
              timestamp: gpodderTime(w.at),
            },
          ]);
        case 'v1':
          return as(t, u).post('/v1/episodes', [
            {
              podcast_url: podcast,
              enclosure_url: enclosure(w.episode),
              playback_position: { value: w.position, timestamp: at },
            },
          ]);
        default:
          return as(t, u).post('/api/v1/sync', {
            requests: [
              {
                type: 'episode',
                action: 'position',
                action_id: `00000000-0000-4000-8000-${String(w.position).padStart(12, '0')}`,
                occurred_at: at,
                data: { podcast_url: podcast, enclosure_url: enclosure(w.episode), position: w.position },
              },
            ],
          });
      }
    };
    // A reader that follows Sync-Timestamp while the writers run.
    const seen = new Map<string, number>();
    let since: string | undefined;
    const readSince = async () => {
      const r = await as(t, u).get(`/v1/episodes?per_page=500${since ? `&since=${encodeURIComponent(since)}` : ''}`);
      statuses.push(r.status);
      for (const e of r.body.episodes as { sync_id: string; playback_position?: { value: number } }[]) {
        if (e.playback_position) seen.set(e.sync_id, e.playback_position.value);
      }
      since = r.headers['sync-timestamp'] as string;
    };
    let writing = true;
    const reader = (async () => {
      while (writing) await readSince();
    })();
    for (let round = 0; round < 20; round++) {
      const batch = ['gpodder', 'nextcloud', 'v1', 'sync'].flatMap((door) => episodes.map((e) => write(door, e)));
      writes.push(...batch);
      const answers = await Promise.all(batch.map(send));
      for (const a of answers) statuses.push(a.status);
    }
    writing = false;
    await reader;
    await readSince();
    expect(statuses.filter((s) => s !== 200)).toEqual([]);

    const expected = new Map<number, number>();
    for (const e of episodes) {
      const latest = writes.filter((w) => w.episode === e).sort((a, b) => b.at - a.at)[0]!;
      expected.set(e, latest.position);
    }
    const v1 = (await as(t, u).get('/v1/episodes')).body.episodes as {
      sync_id: string;
      enclosure_url: string;
      playback_position: { value: number };
    }[];
    const byEnclosure = new Map(v1.map((e) => [e.enclosure_url, e]));
    const gp = (await as(t, u).get(`/api/2/episodes/${u.name}.json?since=0&aggregated=true`)).body.actions as {
      episode: string;
      action: string;
      position: number;
    }[];
    for (const e of episodes) {
      const record = byEnclosure.get(enclosure(e))!;
      expect({ e, v1: record.playback_position.value }).toEqual({ e, v1: expected.get(e) });
      expect({ e, since: seen.get(record.sync_id) }).toEqual({ e, since: expected.get(e) });
      const play = gp.filter((a) => a.episode === enclosure(e) && a.action === 'play');
      expect({ e, gpodder: play.map((a) => a.position) }).toEqual({ e, gpodder: [expected.get(e)] });
    }
  });
});

describe('one feed subscribed and unsubscribed through every door at once', () => {
  test('one record per feed, and every door and since reader ends with the same list', async () => {
    const u = await t.user();
    const feeds = [0, 1, 2].map((n) => `https://doors.example/sub/${n}.xml`);
    const first = await as(t, u).post('/v1/subscriptions', { subscriptions: feeds.map((feed_url) => ({ feed_url })) });
    const guids = (first.body.success as { guid: string }[]).map((s) => s.guid);
    const statuses: string[] = [];
    let gpSince = 0;
    const gpList = new Map<string, boolean>();
    const gpRead = async () => {
      const r = await as(t, u).get(`/api/2/subscriptions/${u.name}/reader.json?since=${gpSince}`);
      statuses.push(`gpodder read ${r.status}`);
      // Another spelling of a feed's scheme and host is the same feed.
      for (const url of r.body.remove as string[]) gpList.set(url.toLowerCase(), false);
      for (const url of r.body.add as string[]) gpList.set(url.toLowerCase(), true);
      gpSince = r.body.timestamp as number;
    };
    let writing = true;
    const reader = (async () => {
      while (writing) await gpRead();
    })();
    // The sync draft's actions at the app's clock, now: they compete with the other doors' changes.
    let clock = Date.now();
    for (let round = 0; round < 15; round++) {
      const ops = feeds.flatMap((url, i) => {
        const on = (round + i) % 2 === 0;
        const at = new Date((clock += 10)).toISOString();
        return [
          as(t, u).post(
            `/api/2/subscriptions/${u.name}/phone.json`,
            on ? { add: [url], remove: [] } : { add: [], remove: [url] },
          ),
          as(t, u).post(
            '/index.php/apps/gpoddersync/subscription_change/create',
            on
              ? { add: [url.replace('https://doors.example', 'HTTPS://Doors.EXAMPLE')], remove: [] }
              : { add: [], remove: [url] },
          ),
          on
            ? as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: url }] })
            : as(t, u).patch(`/v1/subscriptions/${guids[i]}`, { is_subscribed: false }),
          as(t, u).post('/api/v1/sync', {
            requests: [
              on
                ? {
                    type: 'subscription',
                    action: 'subscribe',
                    action_id: randomUUID(),
                    occurred_at: at,
                    data: { feed_url: url },
                  }
                : {
                    type: 'subscription',
                    action: 'unsubscribe',
                    action_id: randomUUID(),
                    occurred_at: at,
                    data: { sync_id: guids[i] },
                  },
            ],
          }),
          ...(round % 5 === 4 ? [as(t, u).del(`/v1/subscriptions/${guids[i]}`)] : []),
        ];
      });
      const answers = await Promise.all(ops);
      for (const a of answers) {
        statuses.push(`${a.status}`);
      }
    }
    writing = false;
    await reader;
    await gpRead();
    expect(statuses.filter((s) => s.startsWith('5'))).toEqual([]);
    const { rows } = await t.db.query('SELECT count(*)::int AS n FROM subscriptions WHERE user_id = $1', [u.id]);
    expect(rows[0].n).toBe(feeds.length);
    const v1 = (await as(t, u).get('/v1/subscriptions')).body.subscriptions as {
      feed_url: string;
      is_subscribed: boolean;
    }[];
    const v1List = new Map(v1.map((s) => [s.feed_url.toLowerCase(), s.is_subscribed]));
    const gpFull = (await as(t, u).get(`/api/2/subscriptions/${u.name}/other.json?since=0`)).body;
    const full = new Map<string, boolean>([
      ...(gpFull.remove as string[]).map((x): [string, boolean] => [x.toLowerCase(), false]),
      ...(gpFull.add as string[]).map((x): [string, boolean] => [x.toLowerCase(), true]),
    ]);
    expect(Object.fromEntries(full)).toEqual(Object.fromEntries(v1List));
    expect(Object.fromEntries(gpList)).toEqual(Object.fromEntries(v1List));
  });
});

describe('a favourite set and cleared through several doors at once', () => {
  test('the latest app time wins at every door', async () => {
    const u = await t.user();
    const podcast = 'https://doors.example/fav.xml';
    const enclosure = (n: number) => `https://doors.example/fav/${n}.mp3`;
    const writes: { e: number; value: boolean; at: number }[] = [];
    const statuses: number[] = [];
    let n = 0;
    for (let round = 0; round < 15; round++) {
      const batch = [0, 1].flatMap((e) =>
        ['v1', 'sync', 'v1', 'sync'].map((door) => {
          const w = {
            e,
            value: Math.random() < 0.5,
            at: Date.parse('2026-10-01T00:00:00Z') + ((n++ * 7919) % 1000) * 1000,
          };
          writes.push(w);
          const at = new Date(w.at).toISOString();
          return door === 'v1'
            ? as(t, u).post('/v1/episodes', [
                {
                  podcast_url: podcast,
                  enclosure_url: enclosure(e),
                  favorite_status: { value: w.value, timestamp: at },
                },
              ])
            : as(t, u).post('/api/v1/sync', {
                requests: [
                  {
                    type: 'episode',
                    action: 'favourite',
                    action_id: randomUUID(),
                    occurred_at: at,
                    data: { podcast_url: podcast, enclosure_url: enclosure(e), favourite: w.value },
                  },
                ],
              });
        }),
      );
      for (const a of await Promise.all(batch)) statuses.push(a.status);
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const v1 = (await as(t, u).get('/v1/episodes')).body.episodes as {
      enclosure_url: string;
      favorite_status?: { value: boolean };
    }[];
    const gp = (await as(t, u).get(`/api/2/favorites/${u.name}.json`)).body as { url: string }[];
    for (const e of [0, 1]) {
      const latest = writes.filter((w) => w.e === e).sort((a, b) => b.at - a.at)[0]!;
      const record = v1.find((r) => r.enclosure_url === enclosure(e));
      expect({ e, v1: record?.favorite_status?.value }).toEqual({ e, v1: latest.value });
      expect({ e, gpodder: gp.some((f) => f.url === enclosure(e)) }).toEqual({ e, gpodder: latest.value });
    }
  });
});
