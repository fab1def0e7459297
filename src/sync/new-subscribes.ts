import type { Db } from '../db/pool';
import * as subscriptions from '../subscriptions/service';
import * as repo from './repo';
import { subscribeItems } from './subscriptions';
import type { Outcome, SyncAction, SyncSubscription } from './types';

// The most common batch, an app's first sync or a podcast found: subscribes of feeds all new to the person.
// Each is applied (nothing to compare its time with), so the batch is written in one statement, records,
// notes and action ids, without the lock or the reads of the general way (batch.ts), and each answer is the
// record as written. Any other batch, or one that finds a feed, an action id or a write of the person's
// in between, writes nothing here and takes the general way.

/** The outcomes of a batch of subscribes of new feeds, written in one statement; undefined if it is not one. */
export async function subscribeNewFeeds(
  db: Db,
  userId: number,
  clientId: string | null,
  actions: SyncAction[],
): Promise<Outcome[] | undefined> {
  const items = subscribeItems(actions);
  if (items.length === 0 || items.length !== actions.length) return undefined;
  // Created in the order of their times, as the general way applies them.
  const order = actions
    .map((a, i) => ({ at: a.occurredAt, i }))
    .sort((x, y) => x.at.getTime() - y.at.getTime() || x.i - y.i)
    .map((x) => x.i);
  const subscribes = order.map((i) => ({
    guid: items[i]!.guid,
    at: actions[i]!.occurredAt,
    actionId: actions[i]!.actionId,
  }));
  const written = await subscriptions.subscribeAllNew<repo.CreatedRow>(
    db,
    userId,
    order.map((i) => items[i]!),
    repo.newSubscribesWrite(clientId, subscribes),
  );
  if (!written) return undefined;
  const created = new Map(written.rows.map((row) => [row.guid, row]));
  return actions.map((a, i) => {
    const row = created.get(items[i]!.guid)!;
    // As subscriptionOf shows a subscribed record whose note is this subscribe's: the app's time is its
    // subscription's and its last update's.
    const subscription: SyncSubscription = {
      syncId: row.sync_id,
      guid: row.guid,
      feedUrl: row.feed_url,
      subscribedAt: a.occurredAt,
      deleted: false,
      lastUpdated: a.occurredAt,
      changed: row.changed,
    };
    return { status: 'applied', entity: { type: 'subscription', subscription } };
  });
}
