import { lockUser, takeChangeStamp } from '../db/change-stamp';
import { isDatabaseUnavailable } from '../db/errors';
import { withTransaction, type Db, type Queryable } from '../db/pool';
import { NotFound } from '../errors';
import { addJob } from '../jobs/queue';
import type { TaskList } from '../jobs/worker';
import type { Logger } from '../logger';
import * as episodes from '../episodes/service';
import * as subscriptions from '../subscriptions/service';
import * as repo from './repo';

export const DELETE_TASK = 'delete_subscription';
/** A request's message until the job has run. */
export const ACCEPTED_MESSAGE = 'Deletion request was received and will be processed';

export type Deletion = { id: number; status: repo.DeletionStatus; message: string };

/**
 * Accepts a deletion: the request row and its job are written in one transaction, so an accepted
 * request always has a job that will run, after a crash too. Asking again while one is pending returns
 * that one.
 */
export async function requestDeletion(db: Db, userId: number, guid: string): Promise<Deletion> {
  return withTransaction(db, async (tx) => {
    await lockUser(tx, userId);
    const id = await subscriptions.liveRecordId(tx, userId, guid);
    const pending = await repo.findPending(tx, userId, id);
    if (pending) return pending;
    const created = await repo.insertDeletion(tx, userId, id, ACCEPTED_MESSAGE);
    await addJob(tx, DELETE_TASK, { deletionId: created.id });
    return created;
  });
}

export async function deletionStatus(db: Queryable, userId: number, id: number): Promise<Deletion> {
  const row = await repo.findDeletion(db, userId, id);
  if (!row) throw new NotFound();
  return row;
}

/**
 * The job: in one transaction the record becomes deleted and the request SUCCESS. If that fails, it is
 * rolled back and the request is marked FAILURE; if even that cannot be written (database gone), the
 * job throws and the queue retries it later.
 */
export async function performDeletion(db: Db, logger: Logger, deletionId: number): Promise<void> {
  try {
    await withTransaction(db, async (tx) => {
      const d = await repo.lockDeletion(tx, deletionId);
      if (!d || d.status !== 'PENDING') return;
      const stamp = await takeChangeStamp(tx, d.user_id);
      if (await subscriptions.markDeleted(tx, d.user_id, d.subscription_id, stamp)) {
        // What the user played of the podcast goes with it (docs/clients.md).
        await episodes.forgetPodcast(tx, d.user_id, d.subscription_id, stamp);
        await repo.finishDeletion(tx, d.id, 'SUCCESS', 'Subscription deleted');
      } else {
        await repo.finishDeletion(tx, d.id, 'FAILURE', 'The subscription was already deleted');
      }
    });
  } catch (err) {
    if (isDatabaseUnavailable(err)) throw err;
    logger.error({ err, deletionId }, 'deletion failed');
    await repo.finishDeletion(db, deletionId, 'FAILURE', 'Deletion failed; the subscription was left unchanged');
  }
}

/** Forgets every deletion request of the user (with their records: start over, src/transfer/start-over.ts). */
export const forgetRequests = (tx: Queryable, userId: number): Promise<void> => repo.deleteAllRequests(tx, userId);

/** Deletion requests accepted and not yet processed (a metric). */
export const countPending = (db: Queryable): Promise<number> => repo.countPending(db);

export const deletionTasks = (db: Db, logger: Logger): TaskList => ({
  tasks: {
    [DELETE_TASK]: async (payload) => {
      await performDeletion(db, logger, (payload as { deletionId: number }).deletionId);
    },
  },
});
