import type { JobHelpers } from 'graphile-worker';
import pino from 'pino';
import { CLEANUP_TASK, KEPT_DAYS, syncCleanupTasks } from '../../src/sync/retention';
import { as, testApp, type TestApp, type TestUser } from '../helpers/app';
import { sub as subscribe, unsub as unsubscribe } from '../helpers/sync-actions';

// How long the sync draft keeps an action id (docs/opa-sync.md, "Retries"): KEPT_DAYS after it came, then a
// batch sent again is judged again by its times.

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

/** The nightly task, run as the worker runs it. */
async function runCleanup(): Promise<void> {
  const list = syncCleanupTasks({ db: t.db, logger: pino({ level: 'silent' }) });
  expect(list.crontab).toEqual([`45 4 * * * ${CLEANUP_TASK}`]);
  await list.tasks[CLEANUP_TASK]!({}, {} as JobHelpers);
}

async function sync(u: TestUser, requests: unknown[]) {
  const r = await as(t, u).post('/api/v1/sync', { requests });
  expect(r.status).toBe(200);
  return r.body.results as { status: string; data?: { sync_id: string; unsubscribed_at?: string } }[];
}

/** Sets back when the user's kept action ids came. */
const age = (u: TestUser, days: number) =>
  t.db.query(`UPDATE sync_actions SET received = now() - make_interval(days => $2) WHERE user_id = $1`, [u.id, days]);
const kept = async (u: TestUser) =>
  (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sync_actions WHERE user_id = $1', [u.id])).rows[0]!
    .n;

test('action ids older than the kept days are forgotten; younger ones stay', async () => {
  const [old, young] = [await t.user(), await t.user()];
  await sync(old, [subscribe('https://kept.example/old', '2026-11-01T10:00:00Z')]);
  await sync(young, [subscribe('https://kept.example/young', '2026-11-01T10:00:00Z')]);
  await age(old, KEPT_DAYS + 1);
  await age(young, KEPT_DAYS - 1);
  await runCleanup();
  expect([await kept(old), await kept(young)]).toEqual([0, 1]);
});

test('a batch sent again after its ids were forgotten is judged by its times: a later change stands', async () => {
  const u = await t.user();
  const first = subscribe('https://kept.example/feed', '2026-11-01T10:00:00Z');
  const [applied] = await sync(u, [first]);
  const syncId = applied!.data!.sync_id;
  await sync(u, [unsubscribe(syncId, '2026-11-02T10:00:00Z')]);
  await age(u, KEPT_DAYS + 1);
  await runCleanup();
  // The subscribe comes again a month on (a phone that was offline): older than the unsubscribe, ignored.
  const [again] = await sync(u, [first]);
  expect(again).toMatchObject({ status: 'ignored', data: { sync_id: syncId } });
  expect(again!.data!.unsubscribed_at).toBeDefined();
  expect((await as(t, u).get('/v1/subscriptions')).body.subscriptions).toEqual([
    expect.objectContaining({ feed_url: 'https://kept.example/feed', is_subscribed: false }),
  ]);
});
