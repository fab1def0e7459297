import { discoverNewFeeds } from '../../src/feeds/discover';
import request from 'supertest';
import { AuthCache } from '../../src/auth/cache';
import { signInVouched } from '../../src/auth/identities';
import { approveLoginFlow, removeUser } from '../../src/auth/service';
import { moveFeed } from '../../src/subscriptions/service';
import { setSettings, setSpeed } from '../../src/episodes/player-repo';
import { setTimeZone } from '../../src/stats/service';
import { startImport } from '../../src/transfer/jobs';
import { as, testApp, type TestApp } from '../helpers/app';
import { rowsOfUser } from '../helpers/db';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const rowsOf = (userId: number) => rowsOfUser(t.db, userId);

test('user remove leaves no row with that user id in any table', async () => {
  const u = await t.user();
  const other = await t.user();
  const api = as(t, u);
  // Something in every table: tokens, records, an earlier guid, another URL, a deletion request.
  expect((await request(t.app).post('/v1/auth/login').send({ username: u.name, password: u.password })).status).toBe(
    200,
  );
  const posted = await api.post('/v1/subscriptions', {
    subscriptions: [{ feed_url: 'https://example.com/a' }, { feed_url: 'https://example.com/b' }],
  });
  const [a, b] = posted.body.success as { guid: string }[];
  expect(
    (await api.patch(`/v1/subscriptions/${a!.guid}`, { new_guid: '0b6f3d36-2c7e-4c55-9a3e-2f1f0d5d3b71' })).status,
  ).toBe(200);
  expect((await api.patch(`/v1/subscriptions/${b!.guid}`, { new_feed_url: 'https://example.com/b2' })).status).toBe(
    200,
  );
  expect((await api.del(`/v1/subscriptions/${b!.guid}`)).status).toBe(202);
  await as(t, other).post('/v1/subscriptions', { subscriptions: [{ feed_url: 'https://example.com/a' }] });
  // A device and a gpodder session, and an approved login flow.
  expect((await api.post(`/api/2/devices/${u.name}/phone.json`, { type: 'mobile' })).status).toBe(200);
  const flow = await request(t.app).post('/index.php/login/v2');
  const code = decodeURIComponent(new URL(flow.body.login as string).pathname.split('/').pop()!);
  expect(await approveLoginFlow(t.db, code, u.id)).toBe(true);
  // Episode actions, and with them each episode's latest.
  const played = await api.post(`/api/2/episodes/${u.name}.json`, [
    { podcast: 'https://example.com/a', episode: 'https://example.com/a/1.mp3', action: 'play', position: 5 },
  ]);
  expect(played.status).toBe(200);
  // The feed fetcher's look at the user's records.
  await discoverNewFeeds(t.db);
  // An upload with something skipped: a report for the Devices page.
  expect((await api.post(`/api/2/subscriptions/${u.name}/phone.json`, { add: ['not a url'], remove: [] })).status).toBe(
    200,
  );
  // An import started on the web page (its job never runs here).
  await startImport(t.db, u.id, { source: 'archive', upload: [Buffer.from('{}')] }, true);
  // A time zone for the statistics.
  await setTimeZone(t.db, u.id, 'Europe/Berlin');
  // A person at an OpenID provider, linked to the user.
  await signInVouched(
    t.db,
    { username: u.name, provider: { issuer: 'https://id.example', subject: 'u' } },
    { createUsers: false },
  );
  // A sync action (its id kept for retries, the app's times of the change).
  const synced = await api.post('/api/v1/sync', {
    requests: [
      {
        type: 'subscription',
        action: 'subscribe',
        action_id: '7d0cf4a4-0c35-4f0e-9f5e-4a9c1e2b3d4f',
        occurred_at: '2026-07-11T10:00:00Z',
        data: { feed_url: 'https://example.com/synced' },
      },
      {
        type: 'episode',
        action: 'position',
        action_id: '0b8c6d1e-58b2-4c1f-9a57-2f0f3c7e9d10',
        occurred_at: '2026-07-11T10:00:00Z',
        data: {
          podcast_url: 'https://example.com/synced',
          enclosure_url: 'https://example.com/synced/1.mp3',
          position: 5,
        },
      },
    ],
  });
  expect(synced.body.results.map((r: { status: string }) => r.status)).toEqual(['applied', 'applied']);

  // A favourite, and an episode in Up next (with the list's version).
  const episode = { podcast_url: 'https://example.com/synced', enclosure_url: 'https://example.com/synced/1.mp3' };
  const starred = await api.post('/v1/episodes', [
    { ...episode, favorite_status: { value: true, timestamp: '2026-07-11T10:00:00Z' } },
  ]);
  expect(starred.body.failure).toEqual([]);
  expect((await api.post('/v1/queue/items', episode)).status).toBe(201);

  // The web player's speed for a podcast, and its skip lengths.
  await setSpeed(t.db, u.id, '00000000-0000-4000-8000-000000000001', 1.5);
  await setSettings(t.db, u.id, { back: 15, forward: 45, speed: 1.5 });

  // An episode dismissed from New episodes (written as the episodes room writes it).
  await t.db.query(
    `INSERT INTO episode_dismissals (user_id, episode_hash, podcast_hash, episode_guid, dismissed_at)
     VALUES ($1, gen_random_uuid(), gen_random_uuid(), 'g-1', now())`,
    [u.id],
  );

  // New-episode notifications: the settings, a feed turned off, a browser, an event and its delivery (written
  // as the notifications room writes them).
  await t.db.query(
    `WITH s AS (INSERT INTO notification_settings (user_id, hook_url) VALUES ($1, 'https://hooks.example/castsync')),
          m AS (INSERT INTO notification_mutes (user_id, feed_hash) VALUES ($1, gen_random_uuid())),
          p AS (INSERT INTO push_subscriptions (user_id, endpoint, p256dh, auth) VALUES ($1, 'https://push.example/1', 'k', 'a')),
          e AS (INSERT INTO notification_events (user_id, batch, feed_hash, item_key, item_id)
                VALUES ($1, gen_random_uuid(), gen_random_uuid(), 'item', 1))
     INSERT INTO notification_deliveries (user_id, batch, channel) VALUES ($1, gen_random_uuid(), 'hook')`,
    [u.id],
  );

  // A move the feed fetcher followed, noted for the activity page.
  const moved = await moveFeed(t.db, u.id, a!.guid, {
    from: 'https://example.com/a',
    to: 'https://example.com/a-moved',
    source: 'redirect',
  });
  expect(moved).toBe('changed');

  const before = await rowsOf(u.id);
  expect(Object.keys(before).length).toBeGreaterThanOrEqual(5);
  for (const [table, n] of Object.entries(before)) expect([table, n > 0]).toEqual([table, true]);

  await removeUser({ db: t.db, authCache: new AuthCache(0) }, u.name);

  const after = await rowsOf(u.id);
  expect(Object.values(after).every((n) => n === 0)).toBe(true);
  expect(after).toEqual(Object.fromEntries(Object.keys(before).map((k) => [k, 0])));
  expect((await rowsOf(other.id)).subscriptions).toBe(1);
  const users = await t.db.query('SELECT 1 FROM users WHERE id = $1', [u.id]);
  expect(users.rowCount).toBe(0);
});
