import type { Db } from '../db/pool';
import { inBatches, nightly } from '../jobs/batches';
import type { TaskList } from '../jobs/worker';
import type { Logger } from '../logger';
import * as repo from './repo';

// How long the sync draft keeps an action id (docs/opa-sync.md, "Retries"): what it answers when an app
// sends a batch again, one whose answer it did not get. An app retries within minutes or days; past
// KEPT_DAYS an action sent again is judged again by its time, and one older than its entity's latest
// change is ignored, as any late action is.

/** Days an action id is kept after it came. */
export const KEPT_DAYS = 30;

export const CLEANUP_TASK = 'sync:cleanup';

/** Forgets the action ids kept longer than KEPT_DAYS, a batch at a time; how many went. */
export const forgetOldActions = (db: Db, signal?: AbortSignal): Promise<number> =>
  inBatches((n) => repo.deleteActionsBefore(db, KEPT_DAYS, n), signal);

/** Every night, the action ids past KEPT_DAYS forgotten. */
export const syncCleanupTasks = ({ db, logger }: { db: Db; logger: Logger }): TaskList =>
  nightly(CLEANUP_TASK, '45 4', async (signal) => {
    const actionIds = await forgetOldActions(db, signal);
    logger.info({ component: 'sync', actionIds }, 'old sync action ids forgotten');
  });
