import { lockUser, takeChangeStamp } from '../db/change-stamp';
import { withTransaction, type Db } from '../db/pool';
import * as deletions from '../deletions/service';
import * as episodes from '../episodes/service';
import * as subscriptions from '../subscriptions/service';
import * as sync from '../sync/service';

/**
 * Starts the user's sync state over: every subscription record (with its URL and guid history), every
 * episode action, every deletion request and every action id the sync draft kept is forgotten, in one
 * transaction. Nothing is marked removed, so the apps are sent no removal: each keeps its own list and
 * uploads it again at its next full sync. The account, its devices, app passwords and sessions stay, and
 * so do favourites and Up next (docs/queue.md). Returns what was forgotten.
 */
export async function startOver(db: Db, userId: number): Promise<{ records: number; actions: number }> {
  return withTransaction(db, async (tx) => {
    await lockUser(tx, userId);
    const actions = await episodes.forgetAll(tx, userId);
    const records = await subscriptions.forgetAll(tx, userId);
    await deletions.forgetRequests(tx, userId);
    await sync.forgetActions(tx, userId);
    // A new stamp: the list changed, for the clients and caches that compare it.
    await takeChangeStamp(tx, userId);
    return { records, actions };
  });
}
