import { record, since } from '../../src/episodes/service';
import { as, testApp, type TestApp } from '../helpers/app';
import { readAll } from '../helpers/episodes';

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ DB_POOL_MAX: '20' });
});
afterAll(() => t.close());

describe('concurrent writers of one user', () => {
  test('concurrent POSTs of the same feeds never create two records for one feed', async () => {
    const user = await t.user('racer');
    const urls = Array.from({ length: 25 }, (_, i) => `https://race.example.org/${i}.xml`);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, c) => {
        // Every client sends the same feeds, in its own order and URL spelling.
        const mine = urls.map((u, i) => ({
          feed_url: i % 2 === c % 2 ? u : u.replace('https://race.', 'HTTPS://RACE.'),
        }));
        if (c % 3 === 0) mine.reverse();
        return as(t, user).post('/v1/subscriptions', { subscriptions: mine });
      }),
    );
    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.body.failure).toEqual([]);
    }
    const list = (await as(t, user).get('/v1/subscriptions?per_page=500')).body;
    expect(list.total).toBe(urls.length);
    const { rows } = await t.db.query('SELECT count(*)::int AS n FROM subscriptions WHERE user_id = $1', [user.id]);
    expect(rows[0].n).toBe(urls.length);
  });

  test('concurrent POST, PATCH and DELETE of the same feeds: no 5xx, no duplicates', async () => {
    const user = await t.user('mixed');
    const urls = Array.from({ length: 10 }, (_, i) => `https://mixed.example.org/${i}.xml`);
    const c = as(t, user);
    const first = await c.post('/v1/subscriptions', { subscriptions: urls.map((feed_url) => ({ feed_url })) });
    const guids: string[] = first.body.success.map((s: { guid: string }) => s.guid);
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 15; i++) {
          const g = guids[(i + w) % guids.length]!;
          const op = (i + w) % 3;
          const r =
            op === 0
              ? await as(t, user).post('/v1/subscriptions', { subscriptions: urls.map((feed_url) => ({ feed_url })) })
              : op === 1
                ? await as(t, user).patch(`/v1/subscriptions/${g}`, { is_subscribed: i % 2 === 0 })
                : await as(t, user).del(`/v1/subscriptions/${g}`);
          statuses.push(r.status);
        }
      }),
    );
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.every((s) => [200, 202, 410].includes(s))).toBe(true);
    const { rows } = await t.db.query('SELECT count(*)::int AS n FROM subscriptions WHERE user_id = $1', [user.id]);
    expect(rows[0].n).toBe(urls.length);
  });
});

describe('a write that waits for a read is stamped after it', () => {
  // A read holds the user's row (FOR SHARE) while it reads; a write that comes meanwhile waits. The write
  // must take its stamp after the wait: stamped before it, the change would be older than a read that did
  // not see it, and a client syncing from that read would never get it.
  test.each([
    [
      'an episode action upload',
      (u: { name: string }) => `/api/2/episodes/${u.name}.json`,
      () => [{ podcast: 'https://wait.example/feed.xml', episode: 'https://wait.example/1.mp3', action: 'download' }],
    ],
    [
      'a POST of new feeds',
      () => '/v1/subscriptions',
      () => ({ subscriptions: [{ feed_url: 'https://wait.example/new.xml' }] }),
    ],
    [
      'a gpodder upload with a removal',
      (u: { name: string }) => `/api/2/subscriptions/${u.name}/d.json`,
      () => ({
        add: ['https://wait.example/a.xml'],
        remove: ['https://wait.example/b.xml'],
      }),
    ],
  ])('%s', async (_, path, body) => {
    const u = await t.user();
    if (path(u).includes('/api/2/subscriptions/')) {
      await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://wait.example/b.xml' }] });
    }
    const reader = await t.db.connect();
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT 1 FROM users WHERE id = $1 FOR SHARE', [u.id]);
      const write = as(t, u)
        .post(path(u), body())
        .then((r) => r);
      await new Promise((r) => setTimeout(r, 300));
      const readAt = (await reader.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]!.now;
      await reader.query('COMMIT');
      expect((await write).status).toBe(200);
      const stamp = (await t.db.query<{ last_change: Date }>('SELECT last_change FROM users WHERE id = $1', [u.id]))
        .rows[0]!.last_change;
      // Stamps are whole milliseconds: the same millisecond as the read is after it, to the precision kept.
      expect(stamp.getTime()).toBeGreaterThanOrEqual(readAt.getTime());
    } finally {
      reader.release();
    }
  });
});

describe('a download while a write of the user is under way', () => {
  // The download reads in one statement when no write of the user is under way; a write that holds the
  // user's row (here: stored, not yet committed) makes it wait for the write and read after it. Read
  // without waiting, the action would be missing from this download and stamped before its timestamp:
  // lost for a client that syncs from it.
  test.each([
    ['full', '?since=0'],
    ['aggregated', '?since=0&aggregated=true'],
  ])('%s: waits for the write and includes it', async (_, query) => {
    const u = await t.user();
    const action = (n: number) => ({
      podcastUrl: 'https://inflight.example/feed.xml',
      episodeUrl: `https://inflight.example/${n}.mp3`,
      action: 'download' as const,
      at: new Date('2026-11-20T10:00:00Z'),
    });
    await record(t.db, u.id, [action(1)]);
    const writer = await t.db.connect();
    try {
      await writer.query('BEGIN');
      await record(writer, u.id, [action(2)]);
      let answered = false;
      const download = as(t, u)
        .get(`/api/2/episodes/${u.name}.json${query}`)
        .then((r) => {
          answered = true;
          return r;
        });
      await new Promise((r) => setTimeout(r, 300));
      expect(answered).toBe(false);
      await writer.query('COMMIT');
      const r = await download;
      expect(r.body.actions.map((a: { episode: string }) => a.episode)).toEqual([
        'https://inflight.example/1.mp3',
        'https://inflight.example/2.mp3',
      ]);
    } finally {
      writer.release();
    }
  });
});

test('a write that commits while the download reads (after its snapshot) is not lost', async () => {
  // A download of many actions reads for a while before it locks the user's row; a write that was under
  // way when the read began and commits meanwhile is not in the read, and its stamp is earlier than the
  // read's clock. The download must notice (the row's last change moved) and read again after it.
  const u = await t.user();
  await t.db.query(
    `INSERT INTO episode_actions (user_id, podcast_url, podcast_hash, episode_url, episode_hash, action, at, changed, json)
     SELECT $1, 'https://many.example/feed.xml', gen_random_uuid(), 'https://many.example/' || n || '.mp3',
            gen_random_uuid(), 'download', now(), now() - interval '1 day', '{"episode":"seed"}'
       FROM generate_series(1, 100000) n`,
    [u.id],
  );
  const writer = await t.db.connect();
  try {
    await writer.query('BEGIN');
    const written = await record(writer, u.id, [
      {
        podcastUrl: 'https://many.example/feed.xml',
        episodeUrl: 'https://many.example/late.mp3',
        action: 'download',
        at: new Date('2026-11-20T10:00:00Z'),
      },
    ]);
    const reading = readAll(since(t.db, u.id, {}));
    await new Promise((r) => setTimeout(r, 30));
    await writer.query('COMMIT');
    const read = await reading;
    // Either the read has it, or it is stamped at or after the read's clock (a sync from there gets it).
    const lost = !read.json.includes('late.mp3') && written.changedAt < read.readAt;
    expect(lost).toBe(false);
  } finally {
    writer.release();
  }
});
