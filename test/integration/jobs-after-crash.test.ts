import http from 'node:http';
import type net from 'node:net';
import pg from 'pg';
import pino from 'pino';
import { deletionTasks } from '../../src/deletions/service';
import { holdLiveness } from '../../src/jobs/liveness';
import { startWorker, type Worker } from '../../src/jobs/worker';
import { IMPORT_RUNS, startImport, transferTasks } from '../../src/transfer/jobs';
import { as, sleep, testApp, type TestApp, type TestUser } from '../helpers/app';

// A job locked by a worker pool that died stays locked for 4 hours in graphile-worker. castsync's workers
// hold a liveness lock per pool (src/jobs/liveness.ts); these tests lock jobs as a pool would, by hand.

let t: TestApp;
let u: TestUser;
let worker: Worker | undefined;
beforeAll(async () => {
  t = await testApp({ IMPORT_ALLOW_PRIVATE: 'true' });
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

test('an import cut off by every run ends failed, says why, and the next import may start', async () => {
  // The other server never answers: each run waits on it until the worker stops, as a restart would.
  const hangs = http.createServer(() => undefined);
  await new Promise<void>((resolve) => hangs.listen(0, '127.0.0.1', resolve));
  const serverUrl = `http://127.0.0.1:${(hangs.address() as net.AddressInfo).port}`;
  const from = { source: 'nextcloud', serverUrl, remoteUser: 'ada', password: 'nc-password' } as const;
  const importer = await t.user('cutoff');
  const row = async (id: number) =>
    (
      await t.db.query<{ state: string; runs: number; error: string | null }>(
        'SELECT state, runs, error FROM imports WHERE id = $1',
        [id],
      )
    ).rows[0]!;
  const withImports = () =>
    startWorker(
      { db: t.db, databaseUrl: t.url, logger: pino({ level: 'silent' }) },
      [transferTasks({ db: t.db, logger: pino({ level: 'silent' }), config: t.config })],
      { pollInterval: 100 },
    );
  // Due at once, as after the queue's back-off.
  const dueNow = () => t.db.query('UPDATE graphile_worker._private_jobs SET run_at = now()');
  try {
    const id = await startImport(t.db, importer.id, from, false);
    for (let run = 1; run <= IMPORT_RUNS; run++) {
      await dueNow();
      worker = await withImports();
      for (const end = Date.now() + 10_000; (await row(id)).runs < run && Date.now() < end;) await sleep(100);
      await worker.stop();
      worker = undefined;
      expect(await row(id)).toMatchObject({ state: 'running', runs: run });
    }
    await dueNow();
    worker = await withImports();
    for (const end = Date.now() + 10_000; (await row(id)).state === 'running' && Date.now() < end;) await sleep(100);
    expect(await row(id)).toMatchObject({
      state: 'failed',
      error: `Stopped ${IMPORT_RUNS} times before it could end (the server restarted or failed): start it again`,
    });
    await expect(startImport(t.db, importer.id, from, true)).resolves.toEqual(expect.any(Number));
  } finally {
    hangs.closeAllConnections();
    await new Promise<void>((resolve) => hangs.close(() => resolve()));
  }
});
