import { run, type Runner } from 'graphile-worker';
import type { Context } from '../context';
import { deleteExpiredTokens } from '../auth/repo';
import { CLEANUP_TASK, DELETE_TASK, queueLogger } from './queue';
import { performDeletion } from './service';

/**
 * The background worker, on the same database as the API: deletions, and an hourly clean-up of expired
 * tokens. Jobs live in Postgres, so work accepted before a crash is done after the restart.
 */
export function startWorker(
  ctx: Pick<Context, 'db' | 'logger'>,
  { concurrency = 2, pollInterval = 1000 } = {},
): Promise<Runner> {
  return run({
    pgPool: ctx.db,
    concurrency,
    pollInterval,
    noHandleSignals: true,
    logger: queueLogger(ctx.logger),
    crontab: `0 * * * * ${CLEANUP_TASK}`,
    taskList: {
      [DELETE_TASK]: async (payload) => {
        await performDeletion(ctx, (payload as { deletionId: number }).deletionId);
      },
      [CLEANUP_TASK]: async () => {
        const n = await deleteExpiredTokens(ctx.db);
        if (n > 0) ctx.logger.info({ tokens: n }, 'expired tokens removed');
      },
    },
  });
}
