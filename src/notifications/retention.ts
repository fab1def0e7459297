import type { Db } from '../db/pool';
import { inBatches, nightly } from '../jobs/batches';
import type { TaskList } from '../jobs/worker';
import type { Logger } from '../logger';
import * as repo from './repo';

// What the notifications keep, and for how long (docs/notifications.md, "What is kept, and for how long"):
// every night, the deliveries settled more than RETENTION_DAYS ago go, and the events of that age whose item
// is that old too and whose message is sent or given up. A pending delivery, and the events of its batch,
// stay whatever their age.

/**
 * The retention, in days. An item dated longer ago than this is not announced when a fetch finds it (a
 * feed that lists an old episode again, or for the first time, has no new episode), so the event of an
 * item that old is no longer what stops it from being announced twice. Longer than the day over which the
 * daily limit counts the sent deliveries (sentToday, repo.ts).
 */
export const RETENTION_DAYS = 30;

/**
 * Removes what the notifications no longer need, each statement on its own: a run stopped part way (a
 * shutdown, a crash) has removed only what it was allowed to, and the next run goes on; two runs at once
 * take different rows. Returns how many of each went.
 */
export async function removeExpired(db: Db, signal?: AbortSignal): Promise<{ deliveries: number; events: number }> {
  const deliveries = await inBatches((n) => repo.deleteSettledDeliveries(db, RETENTION_DAYS, n), signal);
  const events = await inBatches((n) => repo.deleteOldEvents(db, RETENTION_DAYS, n), signal);
  return { deliveries, events };
}

export const CLEANUP_TASK = 'notifications:cleanup';

/** Every night, the notifications' rows past the retention removed. */
export const notificationCleanupTasks = ({ db, logger }: { db: Db; logger: Logger }): TaskList =>
  nightly(CLEANUP_TASK, '30 4', async (signal) => {
    const removed = await removeExpired(db, signal);
    logger.info({ component: 'notifications', ...removed }, 'old notification events and deliveries removed');
  });
