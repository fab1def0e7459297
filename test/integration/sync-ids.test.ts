import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';

// A subscription's sync_id (the sync draft's name for it) is the guid its record was made with; the record
// stores it only once its guid changes (migration 1763800000095), so that making a record writes no index
// of its own for the id. An id never changes, whatever door changes the guid; ids made before the
// migration (stored) keep naming their records.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

type Sub = { sync_id: string; guid: string; feed_url: string };
const CLIENT = 'cca4ad10-dc35-4572-8f11-125dc465428a';
const action = (action: string, data: Record<string, unknown>) => ({
  type: 'subscription',
  action,
  action_id: randomUUID(),
  occurred_at: new Date().toISOString(),
  data,
});
async function sync(u: TestUser, requests: unknown[]) {
  const r = await as(t, u).post('/api/v1/sync', { requests }).set('Client-ID', CLIENT);
  expect(r.status).toBe(200);
  return r.body.results as { status: string; data?: Sub }[];
}
/** The user's subscriptions as the sync draft lists them, by feed URL. */
async function listed(u: TestUser): Promise<Map<string, Sub>> {
  const r = await as(t, u).get('/api/v1/sync');
  expect(r.status).toBe(200);
  return new Map((r.body.results as { data: Sub }[]).map((x) => [x.data.feed_url, x.data]));
}
const one = (u: TestUser, syncId: string) => as(t, u).get(`/api/v1/subscriptions/${syncId}`);
async function stored(u: TestUser): Promise<Map<string, string | null>> {
  const r = await t.db.query<{ feed_url: string; sync_id: string | null }>(
    'SELECT feed_url, sync_id::text FROM subscriptions WHERE user_id = $1',
    [u.id],
  );
  return new Map(r.rows.map((x) => [x.feed_url, x.sync_id]));
}

test('a record is named by the guid it was made with, whichever door made it, and stores no id', async () => {
  const u = await t.user();
  const feeds = ['https://ids.example/v1', 'https://ids.example/gpodder', 'https://ids.example/sync'];
  expect((await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: feeds[0] }] })).status).toBe(200);
  const gpodder = await as(t, u).post(`/api/2/subscriptions/${u.name}/phone.json`, { add: [feeds[1]], remove: [] });
  expect(gpodder.status).toBe(200);
  const [made] = await sync(u, [action('subscribe', { feed_url: feeds[2] })]);
  expect(made!.status).toBe('applied');
  expect(made!.data!.sync_id).toBe(made!.data!.guid);

  const subs = await listed(u);
  for (const feed of feeds) {
    const s = subs.get(feed)!;
    expect(s.sync_id).toBe(s.guid);
    expect((await one(u, s.sync_id)).body).toMatchObject({ sync_id: s.sync_id, feed_url: feed });
  }
  expect([...(await stored(u)).values()]).toEqual([null, null, null]);
});

test('a guid change through /v1 or the sync draft keeps the id, and the new guid is no id', async () => {
  const u = await t.user();
  const feed = 'https://ids.example/changing';
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed }] });
  const id = (await listed(u)).get(feed)!.sync_id;
  const [g1, g2] = [randomUUID(), randomUUID()];

  expect((await as(t, u).patch(`/v1/subscriptions/${id}`, { new_guid: g1 })).status).toBe(200);
  expect((await listed(u)).get(feed)).toMatchObject({ sync_id: id, guid: g1 });
  expect((await stored(u)).get(feed)).toBe(id);
  expect((await one(u, g1)).status).toBe(404);

  const [updated] = await sync(u, [action('update', { sync_id: id, guid: g2 })]);
  expect(updated).toMatchObject({ status: 'applied', data: { sync_id: id, guid: g2 } });
  expect((await one(u, id)).body).toMatchObject({ sync_id: id, guid: g2 });

  // Back to the guid it was made with: the id is the same, and stays stored.
  expect((await as(t, u).patch(`/v1/subscriptions/${g2}`, { new_guid: id })).status).toBe(200);
  expect((await listed(u)).get(feed)).toMatchObject({ sync_id: id, guid: id });
  expect((await one(u, id)).body).toMatchObject({ sync_id: id, guid: id });
  const [unsubscribed] = await sync(u, [action('unsubscribe', { sync_id: id })]);
  expect(unsubscribed!.status).toBe('applied');
});

test("a POST that gives a known feed a guid of the app's keeps the id", async () => {
  const u = await t.user();
  const feed = 'https://ids.example/given-guid';
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed }] });
  const id = (await listed(u)).get(feed)!.sync_id;
  const given = randomUUID();
  const r = await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed, guid: given }] });
  expect(r.body.success).toEqual([expect.objectContaining({ guid: given })]);
  expect((await listed(u)).get(feed)).toMatchObject({ sync_id: id, guid: given });
  expect((await stored(u)).get(feed)).toBe(id);
});

test('a guid merge keeps the id of the record the other one joins', async () => {
  const u = await t.user();
  const [x, y] = ['https://ids.example/x', 'https://ids.example/y'];
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: x }, { feed_url: y }] });
  const before = await listed(u);
  const [xId, yId] = [before.get(x)!.sync_id, before.get(y)!.sync_id];
  // y takes a new guid (its first one becomes earlier); then x takes y's first guid: x joins y, whose
  // guid is that one again.
  expect((await as(t, u).patch(`/v1/subscriptions/${yId}`, { new_guid: randomUUID() })).status).toBe(200);
  expect((await as(t, u).patch(`/v1/subscriptions/${xId}`, { new_guid: yId })).status).toBe(200);
  const r = await t.db.query<{ sync_id: string | null; guid: string }>(
    'SELECT sync_id::text, guid::text FROM subscriptions WHERE user_id = $1',
    [u.id],
  );
  expect(r.rows).toEqual([{ sync_id: yId, guid: yId }]);
  expect((await one(u, yId)).body).toMatchObject({ sync_id: yId, guid: yId });
  expect((await one(u, xId)).status).toBe(404);
});

test('an id made before the migration (stored) keeps naming its record; its guid does not', async () => {
  const u = await t.user();
  const feed = 'https://ids.example/older';
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed }] });
  const older = randomUUID();
  await t.db.query('UPDATE subscriptions SET sync_id = $2 WHERE user_id = $1', [u.id, older]);
  const s = (await listed(u)).get(feed)!;
  expect(s.sync_id).toBe(older);
  expect((await one(u, older)).body).toMatchObject({ sync_id: older, guid: s.guid });
  expect((await one(u, s.guid)).status).toBe(404);
  const [unsubscribed] = await sync(u, [action('unsubscribe', { sync_id: older })]);
  expect(unsubscribed).toMatchObject({ status: 'applied', data: { sync_id: older } });
  // Another user's record of the same feed has the same guid, and so the same id: each user's own.
  const other = await t.user();
  await as(t, other).post('/v1/subscriptions', { subscriptions: [{ feed_url: feed }] });
  expect((await one(other, s.guid)).body).toMatchObject({ sync_id: s.guid });
  expect((await one(other, older)).status).toBe(404);
});

const migration = (name: string) => fs.readFileSync(path.join(__dirname, '../../migrations', name), 'utf8');

test("the migration's way down stores each record's id as it is, and new records get one of their own", async () => {
  const u = await t.user();
  await as(t, u).post('/v1/subscriptions', {
    subscriptions: [{ feed_url: 'https://ids.example/down/a' }, { feed_url: 'https://ids.example/down/b' }],
  });
  const before = await listed(u);
  const down = migration('1763800000095_sync-id-from-guid.sql').split('-- Down Migration')[1]!;
  const client = await t.db.connect();
  try {
    await client.query('BEGIN');
    await client.query(down);
    const r = await client.query<{ feed_url: string; sync_id: string }>(
      'SELECT feed_url, sync_id::text FROM subscriptions WHERE user_id = $1',
      [u.id],
    );
    expect(new Map(r.rows.map((x) => [x.feed_url, x.sync_id]))).toEqual(
      new Map([...before].map(([feed, s]) => [feed, s.sync_id])),
    );
    const made = await client.query<{ sync_id: string }>(
      `INSERT INTO subscriptions (user_id, guid, feed_url, url_hash, subscription_changed)
       VALUES ($1, gen_random_uuid(), 'https://ids.example/down/c', gen_random_uuid(), now()) RETURNING sync_id::text`,
      [u.id],
    );
    expect(made.rows[0]!.sync_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
});

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The Unix milliseconds a version 7 UUID carries in its first 48 bits. */
const millisOf = (uuid: string) => parseInt(uuid.replace(/-/g, '').slice(0, 12), 16);

// The way down of 1763800000095 makes new records' ids with castsync_time_ordered_uuid() again (migration
// 1763800000093). On PostgreSQL before 18 that function sets the bits of a version 7 UUID in SQL: the
// expression is checked here, since the tests run on PostgreSQL 18.
test("migration 1763800000093's SQL for PostgreSQL before 18 makes version 7 ids", async () => {
  const sql = migration('1763800000093_time-ordered-sync-ids.sql');
  const fallback = /ELSE\s+CREATE FUNCTION[^\n]*\n\s*RETURN ([\s\S]*?);\n/.exec(sql)?.[1];
  expect(fallback).toContain('gen_random_uuid()');
  const before = Date.now();
  const r = await t.db.query<{ id: string }>(`SELECT (${fallback!})::text AS id FROM generate_series(1, 50)`);
  const after = Date.now();
  for (const { id } of r.rows) {
    expect(id).toMatch(V7);
    expect(millisOf(id)).toBeGreaterThanOrEqual(before - 1000);
    expect(millisOf(id)).toBeLessThanOrEqual(after + 1000);
  }
  expect(new Set(r.rows.map((x) => x.id)).size).toBe(50);
});
