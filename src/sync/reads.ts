import { ONE_SNAPSHOT, withTransaction, type Db, type Queryable } from '../db/pool';
import { NotFound } from '../errors';
import { readStates } from '../episodes/service';
import { subscriptionOf } from './entities';
import * as episodeRepo from './episode-repo';
import * as repo from './repo';
import type { Entity, Ref, SyncSubscription } from './types';

// Reading for the sync endpoint: the user's changes in the order of their change stamps, and the
// subscriptions in creation order.

export type ChangesPage = {
  /** Each changed entity once, in its current state, in the order of the change stamps. */
  changes: Entity[];
  hasMore: boolean;
  /** What to send as the next `since`: this page's last stamp, or the user's last change when none is left. */
  nextSince: Date;
  /** Where a page that ends at this page's `since` starts: null for the first change; none without `since`. */
  previousSince?: Date | null;
};

export type ChangesQuery = {
  since?: Date | undefined;
  limit: number;
  ownClient?: string | undefined;
  include: { subscriptions: boolean; episodes: boolean };
};

const same = (a: Date, b: Date) => a.getTime() === b.getTime();

type Changed = { ref: Ref; changed: Date; row?: repo.EntityRow };

/** The subscription and episode changes of the user after `since`, the first `limit` of each, in stamp order. */
async function changedAfter(db: Queryable, userId: number, q: ChangesQuery, limit: number) {
  const subs = await repo.changedAfter(db, userId, {
    since: q.since,
    ownClient: q.ownClient,
    limit: q.include.subscriptions ? limit : 0,
  });
  const episodes = q.include.episodes
    ? await episodeRepo.episodesChangedAfter(db, userId, { since: q.since, ownClient: q.ownClient, limit })
    : [];
  return { lastChange: subs.lastChange, changes: merged(subs.rows, episodes) };
}

/** Both kinds of change in the order of their stamps (subscriptions first within one stamp). */
function merged(rows: repo.EntityRow[], episodes: episodeRepo.EpisodeChange[]): Changed[] {
  const all: Changed[] = [
    ...rows.map((row) => ({ ref: { type: 'subscription' as const, syncId: row.sync_id }, changed: row.changed, row })),
    ...episodes.map((e) => ({ ref: { type: 'episode' as const, syncId: e.sync_id }, changed: e.changed })),
  ];
  return all.sort((a, b) => a.changed.getTime() - b.changed.getTime());
}

/** Every change at this one stamp (a page never splits a stamp). */
async function changedAt(db: Queryable, userId: number, q: ChangesQuery, at: Date): Promise<Changed[]> {
  const rows = q.include.subscriptions ? await repo.changedAt(db, userId, { at, ownClient: q.ownClient }) : [];
  const episodes = q.include.episodes
    ? await episodeRepo.episodesChangedAt(db, userId, { at, ownClient: q.ownClient })
    : [];
  return merged(rows, episodes);
}

/**
 * A page of the user's subscriptions and episodes changed after `since`, by change stamp, leaving out those
 * whose latest change was a sync action of `ownClient`. A page never splits the changes of one stamp (a
 * client that sends its last stamp back as `since` would miss the rest): it ends before them, or, when they
 * alone are more than `limit`, holds all of them. Its statements read one snapshot, the one the user's last
 * change stamp is read in, so whatever this page could not see is stamped after `nextSince`: a write that
 * commits between them (a subscribe and a play of one batch) is neither half read (its play read, its
 * subscribe not, and `nextSince` past both) nor read as gone.
 */
export function changes(db: Db, userId: number, q: ChangesQuery): Promise<ChangesPage> {
  return withTransaction(db, (tx) => changesIn(tx, userId, q), ONE_SNAPSHOT);
}

async function changesIn(db: Queryable, userId: number, q: ChangesQuery): Promise<ChangesPage> {
  const read = await changedAfter(db, userId, q, q.limit + 1);
  let page = read.changes.slice(0, q.limit + 1);
  const hasMore = page.length > q.limit;
  if (hasMore) {
    const cut = page[q.limit]!.changed;
    page = page.slice(0, q.limit).filter((c) => !same(c.changed, cut));
    if (page.length === 0) page = await changedAt(db, userId, q, cut);
  }
  const last = page.at(-1)?.changed;
  const nextSince = hasMore ? last! : last && last > read.lastChange ? last : read.lastChange;
  const episodes = await readStates(
    db,
    userId,
    page.flatMap((c) => (c.ref.type === 'episode' ? [c.ref.syncId] : [])),
  );
  const changes = page.flatMap((c): Entity[] => {
    if (c.row) return [{ type: 'subscription', subscription: subscriptionOf(c.row) }];
    const episode = episodes.get(c.ref.syncId);
    return episode ? [{ type: 'episode', episode }] : [];
  });
  const out: ChangesPage = { changes, hasMore, nextSince };
  if (q.since) out.previousSince = await previousSince(db, userId, { ...q, since: q.since });
  return out;
}

/** The stamps of the (up to `limit`) changes at or before `until`, newest first. */
async function stampsUntil(db: Queryable, userId: number, q: ChangesQuery, until: Date, limit: number) {
  const subs = q.include.subscriptions
    ? await repo.stampsUntil(db, userId, { until, ownClient: q.ownClient, limit })
    : [];
  const episodes = q.include.episodes
    ? await episodeRepo.episodeStampsUntil(db, userId, { until, ownClient: q.ownClient, limit })
    : [];
  return [...subs, ...episodes].sort((a, b) => b.getTime() - a.getTime()).slice(0, limit);
}

/** The `since` of a page of at most `limit` changes that ends at `since` (null: from the first change). */
async function previousSince(db: Queryable, userId: number, q: ChangesQuery & { since: Date }) {
  const stamps = await stampsUntil(db, userId, q, q.since, q.limit + 1);
  if (stamps.length <= q.limit) return null;
  const start = stamps[q.limit]!;
  if (!same(start, stamps[0]!)) return start;
  // One stamp has more than `limit` changes: the page before starts before them and holds them whole.
  const [before] = await stampsUntil(db, userId, q, new Date(start.getTime() - 1), 1);
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
