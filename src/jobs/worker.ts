import { EventEmitter } from 'node:events';
import { run, type Task, type WorkerEvents } from 'graphile-worker';
import type { Db } from '../db/pool';
import type { Logger } from '../logger';
import { watchLiveness } from './liveness';
import { queueLogger } from './queue';

/**
 * What a feature contributes to the worker: its tasks by name, crontab lines that queue them, and what to
 * do first when the worker stops (a task that could run for long ends early, as the drain allows).
 */
export type TaskList = { tasks: Record<string, Task>; crontab?: string[]; stop?: () => void };

export type Worker = { stop: () => Promise<void> };

/**
 * The background worker, on the same database as the API, running the tasks the features contribute.
 * Jobs live in Postgres, so work accepted before a crash is done after the restart, within seconds
 * (liveness.ts).
 */
export async function startWorker(
  { db, databaseUrl, logger }: { db: Db; databaseUrl: string; logger: Logger },
  lists: TaskList[],
  { concurrency = 2, pollInterval = 1000 } = {},
): Promise<Worker> {
  const events: WorkerEvents = new EventEmitter();
  const liveness = watchLiveness(databaseUrl, events, logger);
  const runner = await run({
    pgPool: db,
    concurrency,
    pollInterval,
    noHandleSignals: true,
    events,
    logger: queueLogger(logger),
    crontab: lists.flatMap((l) => l.crontab ?? []).join('\n'),
    taskList: Object.assign({}, ...lists.map((l) => l.tasks)) as Record<string, Task>,
  });
  return {
    stop: async () => {
      for (const l of lists) l.stop?.();
      await runner.stop();
      await liveness.stop();
    },
  };
}
