import type { Tx } from '../db/pool';
import type { NewItem, NewItemsHook } from '../feeds/service';
import { addJob } from '../jobs/queue';
import * as subscriptions from '../subscriptions/service';
import * as repo from './repo';
import { RETENTION_DAYS } from './retention';

// What the fetcher's new items become: one new-episode event per subscriber and item, and the deliveries
// of each person's batch, in the fetch's transaction; the delivery job is queued in it too (deliver.ts).

export const DELIVER_TASK = 'notifications:deliver';

/** Queues the delivery job unless one waits already (its key names one waiting job). */
export const queueDelivery = (tx: Tx): Promise<void> =>
  addJob(tx, DELIVER_TASK, {}, { jobKey: DELIVER_TASK, maxAttempts: 3 });

/**
 * Notes the events of a fetch's new items for the feed's subscribers: never for a feed's first fetch (every
 * item is new to it then), nor for an item published before the person subscribed, nor for one dated more
 * than RETENTION_DAYS ago (an old episode a feed lists again, or for the first time, is not a new one).
 * Returns the deliveries queued.
 */
export async function noteNewItems(
  tx: Tx,
  feed: { hash: string; url: string; firstFetch: boolean },
  items: NewItem[],
): Promise<number> {
  if (feed.firstFetch || items.length === 0) return 0;
  const records = (await subscriptions.recordsOfFeed(tx, feed.url)).filter((r) => r.subscribed);
  if (records.length === 0) return 0;
  const queued = await repo.noteEvents(
    tx,
    feed.hash,
    { userIds: records.map((r) => r.userId), since: records.map((r) => r.since) },
    {
      ids: items.map((i) => i.id),
      keys: items.map((i) => i.key),
      titles: items.map((i) => i.title),
      enclosures: items.map((i) => i.enclosureUrl),
      published: items.map((i) => i.publishedAt),
    },
    RETENTION_DAYS,
  );
  if (queued > 0) await queueDelivery(tx);
  return queued;
}

/** The fetcher's hook (wired in the composition root). */
export const newItemsHook: NewItemsHook = async (tx, feed, items) => {
  await noteNewItems(tx, feed, items);
};
