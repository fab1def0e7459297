import fs from 'node:fs';
import path from 'node:path';
import type { JobHelpers } from 'graphile-worker';
import pino from 'pino';
import * as repo from '../../src/notifications/repo';
import {
  CLEANUP_TASK,
  RETENTION_DAYS,
  notificationCleanupTasks,
  removeExpired,
} from '../../src/notifications/retention';
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

/** The nightly task, run as the worker runs it. */
async function runCleanup(): Promise<void> {
  const list = notificationCleanupTasks({ db: t.db, logger: pino({ level: 'silent' }) });
  expect(list.crontab).toEqual([`30 4 * * * ${CLEANUP_TASK}`]);
  await list.tasks[CLEANUP_TASK]!({}, {} as JobHelpers);
}

type Status = 'pending' | 'sent' | 'failed' | 'dropped' | 'gone';
/**
 * A delivery of the person's (its channel names it here), as the delivery job leaves it: made `days` days
 * ago and last due then (`dueDays`, negative: due later), sent `sentDays` days ago if it was.
 */
async function delivery(
  userId: number,
  channel: string,
  d: { status: Status; days: number; dueDays?: number; sentDays?: number; batch?: string },
): Promise<string> {
  const r = await t.db.query<{ batch: string }>(
    `INSERT INTO notification_deliveries (user_id, batch, channel, status, attempts, created_at, next_at, sent_at)
     VALUES ($1, coalesce($2::uuid, gen_random_uuid()), $3, $4, 1, now() - make_interval(secs => $5::float8 * 86400),
             now() - make_interval(secs => $6::float8 * 86400),
             CASE WHEN $4 = 'sent' THEN now() - make_interval(secs => $7::float8 * 86400) END)
     RETURNING batch::text`,
    [userId, d.batch ?? null, channel, d.status, d.days, d.dueDays ?? d.days, d.sentDays ?? d.days],
  );
  return r.rows[0]!.batch;
}

const channelsLeft = async (userId: number) =>
  (
    await t.db.query<{ channel: string }>(
      'SELECT channel FROM notification_deliveries WHERE user_id = $1 ORDER BY channel',
      [userId],
    )
  ).rows.map((r) => r.channel);

test('settled deliveries older than RETENTION_DAYS go; pending ones stay whatever their age, recent ones stay', async () => {
  const u = await t.user();
  const old = RETENTION_DAYS + 10;
  for (const status of ['sent', 'failed', 'dropped', 'gone'] as const) {
    await delivery(u.id, `old ${status}`, { status, days: old });
    await delivery(u.id, `recent ${status}`, { status, days: RETENTION_DAYS - 1 });
  }
  await delivery(u.id, 'old pending', { status: 'pending', days: old });
  await delivery(u.id, 'old pending, retried later', { status: 'pending', days: old, dueDays: -1 });
  // Made long ago (the worker was down, or it was put off), sent an hour ago: the daily limit counts it.
  const late = await delivery(u.id, 'old, sent an hour ago', { status: 'sent', days: old, sentDays: 1 / 24 });
  const counted = await repo.sentToday(t.db, u.id, late);
  await runCleanup();
  expect(await channelsLeft(u.id)).toEqual([
    'old pending',
    'old pending, retried later',
    'old, sent an hour ago',
    'recent dropped',
    'recent failed',
    'recent gone',
    'recent sent',
  ]);
  expect(await repo.sentToday(t.db, u.id, late)).toEqual(counted);
  expect(counted).toEqual({ others: 0, this_batch: true });
});

/** An event of the person's in `batch`: noted `noted` days ago, of an item dated `dated` days ago (null: none). */
async function event(
  userId: number,
  feedHash: string,
  key: string,
  batch: string,
  e: { noted: number; dated: number | null },
): Promise<void> {
  await t.db.query(
    `INSERT INTO notification_events (user_id, batch, feed_hash, item_key, item_id, title, created_at, published_at)
     VALUES ($1, $2, $3, $4, 0, $4, now() - make_interval(secs => $5::float8 * 86400),
             now() - make_interval(secs => $6::float8 * 86400))`,
    [userId, batch, feedHash, key, e.noted, e.dated],
  );
}

test('an old event goes once its message is settled; of a waiting message, recent, undated or recently dated, it stays', async () => {
  const u = await t.user();
  const hash = await feedListing({});
  const old = RETENTION_DAYS + 10;
  const waiting = await delivery(u.id, 'hook', { status: 'pending', days: old, dueDays: -1 });
  const sent = await delivery(u.id, 'hook', { status: 'sent', days: old });
  const recent = await delivery(u.id, 'hook', { status: 'sent', days: 1 });
  await event(u.id, hash, 'old, message waiting', waiting, { noted: old, dated: old });
  await event(u.id, hash, 'old, message sent', sent, { noted: old, dated: old });
  await event(u.id, hash, 'old, deliveries removed', crypto.randomUUID(), { noted: old, dated: old });
  await event(u.id, hash, 'old, undated', sent, { noted: old, dated: null });
  await event(u.id, hash, 'old, dated after it was noted', sent, { noted: old, dated: RETENTION_DAYS - 1 });
  await event(u.id, hash, 'noted recently, dated long ago', recent, { noted: RETENTION_DAYS - 1, dated: old });
  await event(u.id, hash, 'recent', recent, { noted: 1, dated: 1 });
  const message = await repo.batchEvents(t.db, u.id, waiting);
  expect(message.map((e) => e.title)).toEqual(['old, message waiting']);
  await runCleanup();
  const left = await t.db.query<{ item_key: string }>(
    'SELECT item_key FROM notification_events WHERE user_id = $1 ORDER BY item_key',
    [u.id],
  );
  expect(left.rows.map((r) => r.item_key)).toEqual([
    'noted recently, dated long ago',
    'old, dated after it was noted',
    'old, message waiting',
    'old, undated',
    'recent',
  ]);
  // The message still waiting is made of the same events when it is tried again.
  expect(await repo.batchEvents(t.db, u.id, waiting)).toEqual(message);
});

test('two runs at once both finish, neither waits for rows another holds; what a run that died held goes next time', async () => {
  const u = await t.user();
  // More than one statement removes: 25,000 old failed deliveries.
  await t.db.query(
    `INSERT INTO notification_deliveries (user_id, batch, channel, status, attempts, created_at, next_at)
     SELECT $1, gen_random_uuid(), 'hook', 'failed', 7, now() - make_interval(days => $2), now() - make_interval(days => $2)
       FROM generate_series(1, 25000)`,
    [u.id, RETENTION_DAYS + 10],
  );
  const count = async () =>
    (await t.db.query('SELECT count(*)::int AS n FROM notification_deliveries WHERE user_id = $1', [u.id])).rows[0].n;
  // Another run's statement holds 100 of them, then its process dies (its transaction rolls back).
  const other = await t.db.connect();
  try {
    await other.query('BEGIN');
    await other.query('SELECT 1 FROM notification_deliveries WHERE user_id = $1 LIMIT 100 FOR UPDATE', [u.id]);
    const [a, b] = await Promise.all([removeExpired(t.db), removeExpired(t.db)]);
    expect(a.deliveries + b.deliveries).toBe(24_900);
    expect(await count()).toBe(100);
  } finally {
    await other.query('ROLLBACK');
    other.release();
  }
  expect(await removeExpired(t.db)).toEqual({ deliveries: 100, events: 0 });
  expect(await count()).toBe(0);
});
