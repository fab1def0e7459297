import type { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Logger } from '../logger';

/**
 * graphile-worker leaves a job locked by a worker pool that died (kill -9, a lost host) for 4 hours
 * before another pool may take it, so work accepted just before a crash would wait that long. Here each
 * castsync process holds, on a connection of its own, a session-level advisory lock named after each of
 * its worker pools. PostgreSQL releases such a lock the moment the session ends, whatever ended it. Every
 * process sweeps the queue each SWEEP_MS: a job locked (for longer than GRACE, so that a pool that has
 * just started has had time to take its lock) by a pool whose lock nobody holds is unlocked, and a live
 * worker runs it. A live pool's jobs are never unlocked, however long they run. docs/decisions/queue.md.
 */

/** The advisory-lock class of worker pools (the bytes of "cswk"); the object is hashtext(pool id). */
const LOCK_CLASS = 0x6373776b;
export const SWEEP_MS = 1000;
const GRACE = '2 seconds';

/** Takes the liveness lock of a pool on `client`'s session. */
export async function holdLiveness(client: pg.ClientBase, poolId: string): Promise<void> {
  await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK_CLASS, poolId]);
}

/** Unlocks the jobs of pools that are gone; returns the ids of those pools. */
async function sweep(client: pg.ClientBase, ours: Set<string>): Promise<string[]> {
  const locked = await client.query<{ locked_by: string }>(
    `SELECT DISTINCT locked_by FROM graphile_worker.jobs
      WHERE locked_by IS NOT NULL AND locked_at < now() - interval '${GRACE}'`,
  );
  const gone: string[] = [];
  for (const { locked_by: pool } of locked.rows) {
    // Our own session holds our pools' locks, and a session may take a lock it holds: skip them.
    if (ours.has(pool)) continue;
    const r = await client.query<{ free: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS free', [
      LOCK_CLASS,
      pool,
    ]);
    if (!r.rows[0]?.free) continue;
    await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS, pool]);
    gone.push(pool);
  }
  if (gone.length > 0) await client.query('SELECT graphile_worker.force_unlock_workers($1::text[])', [gone]);
  return gone;
}

/**
 * Holds the liveness locks of the pools `events` announces, and sweeps for dead pools' jobs, until
 * stopped. While its connection is down nothing is swept, and this process's pools may look dead to
 * others: a job may then run twice, so tasks must be idempotent (they are: each checks its state first).
 */
export function watchLiveness(
  databaseUrl: string,
  events: EventEmitter,
  logger: Logger,
): { stop: () => Promise<void> } {
  const ours = new Set<string>();
  let client: pg.Client | undefined;
  let stopped = false;
  events.on('pool:create', ({ workerPool }: { workerPool: { id: string } }) => {
    ours.add(workerPool.id);
    if (client) void holdLiveness(client, workerPool.id).catch(() => undefined);
  });
  const loop = (async () => {
    while (!stopped) {
      const c = new pg.Client({ connectionString: databaseUrl, application_name: 'castsync-liveness' });
      c.on('error', () => undefined);
      try {
        await c.connect();
        for (const id of ours) await holdLiveness(c, id);
        client = c;
        while (!stopped) {
          const gone = await sweep(c, ours);
          if (gone.length > 0) logger.warn({ pools: gone }, 'unlocked jobs of worker pools that are gone');
          await sleep(SWEEP_MS);
        }
      } catch (err) {
        if (!stopped) logger.debug({ err: (err as Error).message }, 'liveness connection lost');
      } finally {
        client = undefined;
        await c.end().catch(() => undefined);
      }
      if (!stopped) await sleep(SWEEP_MS);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await client?.end().catch(() => undefined);
      await loop;
    },
  };
}
