import type { Queryable } from '../db/pool';
import { NotFound } from '../errors';
import { subscriptionOf } from './entities';
import * as repo from './repo';
import type { SyncSubscription } from './types';

// Reading for the sync endpoint: the user's changes in the order of their change stamps, and the
// subscriptions in creation order.

export type ChangesPage = {
  subscriptions: SyncSubscription[];
  hasMore: boolean;
  /** What to send as the next `since`: this page's last stamp, or the user's last change when none is left. */
  nextSince: Date;
  /** Where a page that ends at this page's `since` starts: null for the first change; none without `since`. */
  previousSince?: Date | null;
};

const same = (a: Date, b: Date) => a.getTime() === b.getTime();

/**
 * A page of the user's records changed after `since`, by change stamp, leaving out those whose latest change
 * was a sync action of `ownClient`. A page never splits the changes of one stamp (a client that sends its
 * last stamp back as `since` would miss the rest): it ends before them, or, when they alone are more than
 * `limit`, holds all of them.
 */
export async function changes(
  db: Queryable,
  userId: number,
  q: { since?: Date | undefined; limit: number; ownClient?: string | undefined },
): Promise<ChangesPage> {
  const read = await repo.changedAfter(db, userId, { since: q.since, ownClient: q.ownClient, limit: q.limit + 1 });
  let rows = read.rows;
  const hasMore = rows.length > q.limit;
  if (hasMore) {
    const cut = rows[q.limit]!.changed;
    rows = rows.slice(0, q.limit).filter((r) => !same(r.changed, cut));
    if (rows.length === 0) rows = await repo.changedAt(db, userId, { at: cut, ownClient: q.ownClient });
  }
  const last = rows.at(-1)?.changed;
  const nextSince = hasMore ? last! : last && last > read.lastChange ? last : read.lastChange;
  const page: ChangesPage = { subscriptions: rows.map(subscriptionOf), hasMore, nextSince };
  if (q.since) page.previousSince = await previousSince(db, userId, q.since, q.limit, q.ownClient);
  return page;
}

/** The `since` of a page of at most `limit` changes that ends at `since` (null: from the first change). */
async function previousSince(db: Queryable, userId: number, since: Date, limit: number, ownClient?: string) {
  const stamps = await repo.stampsUntil(db, userId, { until: since, ownClient, limit: limit + 1 });
  if (stamps.length <= limit) return null;
  const start = stamps[limit]!;
  if (!same(start, stamps[0]!)) return start;
  // One stamp has more than `limit` changes: the page before starts before them and holds them whole.
  const [before] = await repo.stampsUntil(db, userId, { until: new Date(start.getTime() - 1), ownClient, limit: 1 });
  return before ?? null;
}

/** A page of the user's subscriptions in creation order after the cursor `after` (0: from the first). */
export async function subscriptionsPage(
  db: Queryable,
  userId: number,
  q: { after: number; includeUnsubscribed: boolean; limit: number },
): Promise<{ subscriptions: SyncSubscription[]; next?: number }> {
  const rows = await repo.recordsPage(db, userId, { after: q.after, all: q.includeUnsubscribed, limit: q.limit + 1 });
  const page = rows.slice(0, q.limit);
  return {
    subscriptions: page.map(subscriptionOf),
    ...(rows.length > q.limit && { next: page.at(-1)!.id }),
  };
}

/** The user's subscription with this sync id, whatever its state; another user's is not found. */
export async function subscription(db: Queryable, userId: number, syncId: string): Promise<SyncSubscription> {
  const [row] = await repo.bySyncIds(db, userId, [syncId]);
  if (!row) throw new NotFound();
  return subscriptionOf(row);
}
