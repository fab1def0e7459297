import { Logger as QueueLogger, type LogFunctionFactory } from 'graphile-worker';
import type { Queryable } from '../db/pool';
import type { Logger } from '../logger';

/** graphile-worker's log lines, through pino. */
export function queueLogger(logger: Logger): QueueLogger {
  const factory: LogFunctionFactory = (scope) => (level, message, meta) => {
    const fields = { ...scope, ...meta, component: 'jobs' };
    if (level === 'error') logger.error(fields, message);
    else if (level === 'warning') logger.warn(fields, message);
    else logger.debug(fields, message);
  };
  return new QueueLogger(factory);
}

/**
 * Queues a job in the caller's transaction, so that the job exists exactly when the transaction that
 * asked for it commits (graphile-worker's add_job is plain SQL).
 */
export async function addJob(
  tx: Queryable,
  task: string,
  payload: object,
  { maxAttempts = 10, jobKey, queue }: { maxAttempts?: number; jobKey?: string; queue?: string } = {},
): Promise<void> {
  // A job key names one pending job: adding it again while it waits changes nothing (preserve_run_at).
  await tx.query(
    `SELECT graphile_worker.add_job($1, $2::json, max_attempts => $3, job_key => $4, queue_name => $5,
                                    job_key_mode => 'preserve_run_at')`,
    [task, JSON.stringify(payload), maxAttempts, jobKey ?? null, queue ?? null],
  );
}

/** Jobs waiting, running or waiting for a retry. */
export async function countJobs(db: Queryable): Promise<number> {
  const r = await db.query<{ n: number }>('SELECT count(*) AS n FROM graphile_worker.jobs');
  return r.rows[0]?.n ?? 0;
}
