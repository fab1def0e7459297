import pg from 'pg';
import pino from 'pino';
import { deletionTasks } from '../../src/deletions/service';
import { holdLiveness } from '../../src/jobs/liveness';
import { startWorker, type Worker } from '../../src/jobs/worker';
import { as, sleep, testApp, type TestApp, type TestUser } from '../helpers/app';

// A job locked by a worker pool that died stays locked for 4 hours in graphile-worker. castsync's workers
// hold a liveness lock per pool (src/jobs/liveness.ts); these tests lock jobs as a pool would, by hand.

let t: TestApp;
let u: TestUser;
let worker: Worker | undefined;
beforeAll(async () => {
  t = await testApp();
  u = await t.user();
});
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});
afterAll(() => t.close());

/** A deletion accepted while no worker runs, its job locked by `pool` since `secondsAgo`. */
async function lockedDeletion(pool: string, secondsAgo: number): Promise<number> {
  const api = as(t, u);
  const posted = await api.post('/v1/subscriptions', {
    subscriptions: [{ feed_url: `https://crash.example/${pool}` }],
  });
  const d = await api.del(`/v1/subscriptions/${posted.body.success[0].guid}`);
  expect(d.status).toBe(202);
  const locked = await t.db.query(
    `UPDATE graphile_worker._private_jobs SET locked_by = $1, locked_at = now() - make_interval(secs => $2)
      WHERE locked_by IS NULL RETURNING id`,
    [pool, secondsAgo],
  );
  expect(locked.rowCount).toBe(1);
  return d.body.deletion_id as number;
}

const status = async (id: number) => (await as(t, u).get(`/v1/deletions/${id}`)).body.status as string;

async function statusWithin(id: number, ms: number): Promise<string> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) {
    const s = await status(id);
    if (s !== 'PENDING') return s;
  }
  return status(id);
}

const start = () =>
  startWorker({ db: t.db, databaseUrl: t.url, logger: pino({ level: 'silent' }) }, [deletionTasks(t.db, pino())], {
    pollInterval: 100,
  });

test('a job locked by a worker pool that died is done within seconds, not hours', async () => {
  const id = await lockedDeletion('pool-dead-1', 10);
  worker = await start();
  expect(await statusWithin(id, 10_000)).toBe('SUCCESS');
});

test("a live pool's job is never taken from it, however long it runs; once that pool dies it is done", async () => {
  const alive = new pg.Client({ connectionString: t.url });
  await alive.connect();
  await holdLiveness(alive, 'pool-alive-1');
  const id = await lockedDeletion('pool-alive-1', 60);
  worker = await start();
  await sleep(3500);
  expect(await status(id)).toBe('PENDING');
  const stillLocked = await t.db.query(`SELECT locked_by FROM graphile_worker.jobs WHERE locked_by = 'pool-alive-1'`);
  expect(stillLocked.rowCount).toBe(1);
  await alive.end(); // the other instance dies: its session, and so its lock, is gone
  expect(await statusWithin(id, 10_000)).toBe('SUCCESS');
});
