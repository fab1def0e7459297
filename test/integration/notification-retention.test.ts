import fs from 'node:fs';
import path from 'node:path';
import { testApp, type TestApp } from '../helpers/app';

// What the notifications keep, and for how long (docs/notifications.md): the rows of notification_events
// and notification_deliveries, written here as the notifications room writes them, with their times set
// back.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY);

/** A feed (never fetched again) that lists these items, by key: each item's date, or null for none. */
async function feedListing(items: Record<string, Date | null>): Promise<string> {
  const r = await t.db.query<{ hash: string }>(
    `INSERT INTO feeds (url_hash, feed_url, next_fetch_at)
     SELECT h, 'https://retention.example/' || h, now() + interval '1 year' FROM gen_random_uuid() h
     RETURNING url_hash::text AS hash`,
  );
  const hash = r.rows[0]!.hash;
  await t.db.query(
    `INSERT INTO feed_items (feed_hash, item_key, guid, published_at, ord)
     SELECT $1, k, k, p, o::int FROM unnest($2::text[], $3::timestamptz[]) WITH ORDINALITY AS i (k, p, o)`,
    [hash, Object.keys(items), Object.values(items)],
  );
  return hash;
}

const migration = (name: string) => fs.readFileSync(path.join(__dirname, '../../migrations', name), 'utf8');

test("the migration gives the events noted before it their item's date as the feed lists it now, else none", async () => {
  const u = await t.user();
  const hash = await feedListing({ dated: daysAgo(40), undated: null });
  const [up, down] = migration('1763800000097_notification-event-dates.sql')
    .split('-- Down Migration')
    .map((part) => part.replace('-- Up Migration', ''));
  const client = await t.db.connect();
  try {
    await client.query('BEGIN');
    await client.query(down!);
    await client.query(
      `INSERT INTO notification_events (user_id, batch, feed_hash, item_key, item_id)
       SELECT $1, gen_random_uuid(), $2, k, 0 FROM unnest(ARRAY['dated', 'undated', 'no longer listed']) k`,
      [u.id, hash],
    );
    await client.query(up!);
    const r = await client.query<{ item_key: string; published_at: Date | null }>(
      'SELECT item_key, published_at FROM notification_events WHERE user_id = $1 ORDER BY item_key',
      [u.id],
    );
    expect(r.rows).toEqual([
      { item_key: 'dated', published_at: expect.any(Date) },
      { item_key: 'no longer listed', published_at: null },
      { item_key: 'undated', published_at: null },
    ]);
    expect(Math.abs(r.rows[0]!.published_at!.getTime() - daysAgo(40).getTime())).toBeLessThan(60_000);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
});
