import fs from 'node:fs';
import path from 'node:path';
import { as, testApp, type TestApp } from '../helpers/app';

// A new record's sync_id is time-ordered (version 7), so that the (user_id, sync_id) index takes it at the
// right end of the user's range (migration 1763800000093). On PostgreSQL before 18 the migration sets the
// same bits in SQL: that expression is checked here too, since the tests run on PostgreSQL 18.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The Unix milliseconds a version 7 UUID carries in its first 48 bits. */
const millisOf = (uuid: string) => parseInt(uuid.replace(/-/g, '').slice(0, 12), 16);

test('records created by a POST get version 7 sync ids, in the order they were made, carrying their time', async () => {
  const u = await t.user();
  const before = Date.now();
  for (const batch of [0, 1]) {
    const feeds = Array.from({ length: 3 }, (_, k) => ({ feed_url: `https://v7.example/${batch}/${k}.xml` }));
    expect((await as(t, u).post('/v1/subscriptions', { subscriptions: feeds })).status).toBe(200);
  }
  const after = Date.now();
  const r = await t.db.query<{ sync_id: string }>(
    'SELECT sync_id::text FROM subscriptions WHERE user_id = $1 ORDER BY id',
    [u.id],
  );
  const ids = r.rows.map((x) => x.sync_id);
  expect(ids).toHaveLength(6);
  for (const id of ids) {
    expect(id).toMatch(V7);
    expect(millisOf(id)).toBeGreaterThanOrEqual(before - 1000); // the two clocks may differ a little
    expect(millisOf(id)).toBeLessThanOrEqual(after + 1000);
  }
  // The second POST's ids sort after the first's (made at least a millisecond later: the change stamp).
  expect(Math.min(...ids.slice(3).map(millisOf))).toBeGreaterThanOrEqual(Math.max(...ids.slice(0, 3).map(millisOf)));
  expect(new Set(ids).size).toBe(6);
});

test("the migration's SQL for PostgreSQL before 18 makes the same kind of id", async () => {
  const file = path.join(__dirname, '../../migrations/1763800000093_time-ordered-sync-ids.sql');
  const sql = fs.readFileSync(file, 'utf8');
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
