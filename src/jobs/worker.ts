import { run, type Runner, type Task } from 'graphile-worker';
import type { Db } from '../db/pool';
import type { Logger } from '../logger';
import { queueLogger } from './queue';

/** What a feature contributes to the worker: its tasks by name, and crontab lines that queue them. */
export type TaskList = { tasks: Record<string, Task>; crontab?: string[] };

/**
 * The background worker, on the same database as the API, running the tasks the features contribute.
 * Jobs live in Postgres, so work accepted before a crash is done after the restart.
 */
export function startWorker(
  { db, logger }: { db: Db; logger: Logger },
  lists: TaskList[],
  { concurrency = 2, pollInterval = 1000 } = {},
): Promise<Runner> {
  return run({
    pgPool: db,
    concurrency,
    pollInterval,
    noHandleSignals: true,
    logger: queueLogger(logger),
    crontab: lists.flatMap((l) => l.crontab ?? []).join('\n'),
    taskList: Object.assign({}, ...lists.map((l) => l.tasks)) as Record<string, Task>,
  });
}
