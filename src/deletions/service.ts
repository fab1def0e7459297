import type { Context } from '../context';
import { lockUser, takeChangeStamp } from '../db/change-stamp';
import { isDatabaseUnavailable } from '../db/errors';
import { withTransaction } from '../db/pool';
import { Gone, NotFound } from '../http/errors';
import * as subscriptions from '../subscriptions/repo';
import { DELETE_TASK, addJob } from './queue';
import * as repo from './repo';

export const ACCEPTED_MESSAGE = 'Deletion request was received and will be processed';

/**
 * Accepts a deletion: the request row and its job are written in one transaction, so a 202 always
 * has a job that will run, after a crash too. Asking again while one is pending returns that one.
 */
export async function requestDeletion(ctx: Context, userId: number, guid: string): Promise<number> {
  return withTransaction(ctx.db, async (tx) => {
    await lockUser(tx, userId);
    const row = await subscriptions.findByGuid(tx, userId, guid);
    if (!row) throw new NotFound();
    if (row.deleted) throw new Gone();
    const pending = await repo.findPending(tx, userId, row.id);
    if (pending) return pending.id;
    const id = await repo.insertDeletion(tx, userId, row.id);
    await addJob(tx, DELETE_TASK, { deletionId: id });
    return id;
  });
}

export async function deletionStatus(ctx: Context, userId: number, id: number): Promise<repo.DeletionRow> {
  const row = await repo.findDeletion(ctx.db, userId, id);
  if (!row) throw new NotFound();
  return row;
}

/**
 * The job: in one transaction the record becomes deleted and the request SUCCESS. If that fails, it is
 * rolled back and the request is marked FAILURE; if even that cannot be written (database gone), the
 * job throws and the queue retries it later.
 */
export async function performDeletion(ctx: Pick<Context, 'db' | 'logger'>, deletionId: number): Promise<void> {
  try {
    await withTransaction(ctx.db, async (tx) => {
      const d = await repo.lockDeletion(tx, deletionId);
      if (!d || d.status !== 'PENDING') return;
      const stamp = await takeChangeStamp(tx, d.user_id);
      if (await repo.markSubscriptionDeleted(tx, d.user_id, d.subscription_id, stamp)) {
        await repo.finishDeletion(tx, d.id, 'SUCCESS', 'Subscription deleted');
      } else {
        await repo.finishDeletion(tx, d.id, 'FAILURE', 'The subscription was already deleted');
      }
    });
  } catch (err) {
    if (isDatabaseUnavailable(err)) throw err;
    ctx.logger.error({ err, deletionId }, 'deletion failed');
    await repo.finishDeletion(ctx.db, deletionId, 'FAILURE', 'Deletion failed; the subscription was left unchanged');
  }
}
