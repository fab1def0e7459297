import type { Config } from '../config';
import type { Db } from '../db/pool';
import { nightly } from '../jobs/batches';
import type { TaskList } from '../jobs/worker';
import type { Logger } from '../logger';
import * as repo from './retention-repo';

// The history retention, for big instances (EPISODE_HISTORY_RETENTION_DAYS, docs/idle-accounts.md): the
// episode actions stored more than N days ago that a later action of the same episode and type
// supersedes are removed; what every episode's state is stays.

const USERS_AT_ONCE = 500;
const ACTIONS_AT_ONCE = 5000;

/**
 * Removes every user's superseded actions stored before `before`, a bounded batch per statement. It takes
 * no change stamp and no lock of the user's: it removes only what no reader needs for any episode's state,
 * and adds nothing a `since` could miss (docs/decisions/sync-stamps.md). Returns how many went.
 */
export async function pruneHistory(db: Db, before: Date, signal?: AbortSignal): Promise<number> {
  let removed = 0;
  for (let after = 0; ;) {
    const users = await repo.userIdsAfter(db, after, USERS_AT_ONCE);
    for (const userId of users) {
      if (signal?.aborted) return removed;
      let n: number;
      do {
        n = await repo.deleteSuperseded(db, userId, before, ACTIONS_AT_ONCE);
        removed += n;
      } while (n === ACTIONS_AT_ONCE);
    }
    if (users.length < USERS_AT_ONCE) return removed;
    after = users.at(-1)!;
  }
}

export const PRUNE_HISTORY_TASK = 'prune_episode_history';

/** With EPISODE_HISTORY_RETENTION_DAYS: every night, the history older than that many days pruned. */
export function retentionTasks({ db, logger, config }: { db: Db; logger: Logger; config: Config }): TaskList {
  const days = config.episodeHistoryRetentionDays;
  if (days === undefined) return { tasks: {} };
  return nightly(PRUNE_HISTORY_TASK, '0 4', async (signal) => {
    const before = new Date(Date.now() - days * 24 * 3600_000);
    const removed = await pruneHistory(db, before, signal);
    logger.info({ removed, before }, 'superseded episode actions removed');
  });
}
