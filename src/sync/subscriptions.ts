import type { Queryable } from '../db/pool';
import * as subscriptions from '../subscriptions/service';
import { checkFeedUrl, parseGuid, urlHash } from '../subscriptions/service';
import { isSubscribed, subscriptionOf } from './entities';
import * as repo from './repo';
import type { BatchSubscribes } from './subscribe-reads';
import type { Decision, SubscriptionAction, SyncAction } from './types';

// The subscription actions of a sync batch, each in the batch's transaction under the user's lock, through
// the subscription service: last write wins by the app's time, and no action merges or hides another record.

type Context = { tx: Queryable; userId: number; clientId: string | undefined; subscribes: BatchSubscribes };

const NOT_FOUND = 'Entity not found';

const ref = (row: repo.EntityRow) => ({ type: 'subscription' as const, syncId: row.sync_id });
const ignored = (row: repo.EntityRow): Decision => ({ status: 'ignored', ref: ref(row) });
const applied = (row: repo.EntityRow): Decision => ({ status: 'applied', ref: ref(row) });
const rejected = (reason: string, row?: repo.EntityRow): Decision => ({
  status: 'rejected',
  reason,
  ref: row && ref(row),
});

/** Strictly later than the record's latest change: equal or earlier is stale. */
const isLater = (a: { occurredAt: Date }, row: repo.EntityRow) => a.occurredAt > subscriptionOf(row).lastUpdated;

async function bySyncId(c: Context, syncId: string) {
  return (await repo.bySyncIds(c.tx, c.userId, [syncId]))[0];
}

/** Subscribes: a record that is subscribed is left as it is; one unsubscribed earlier is subscribed again. */
type Subscribe = SubscriptionAction & { action: 'subscribe' };

const itemOf = (a: Subscribe) => subscriptions.checkFeed({ url: a.feedUrl, guid: a.guid });

/** The feeds of a batch's subscribe actions that pass the URL and guid rules: what the batch reads ahead. */
export function subscribeItems(actions: SyncAction[]): subscriptions.Item[] {
  return actions.flatMap((a) => {
    if (a.type !== 'subscription' || a.action !== 'subscribe') return [];
    const item = itemOf(a);
    return subscriptions.isItem(item) ? [item] : [];
  });
}

async function subscribe(c: Context, a: Subscribe): Promise<Decision> {
  const item = itemOf(a);
  if (!subscriptions.isItem(item)) {
    const reason = item.ok ? 'Invalid data' : item.reason;
    return rejected(`Invalid data.${reason === 'Invalid guid' ? 'guid' : 'feed_url'}: ${reason}`);
  }
  const read = await c.subscribes.readFor(item);
  const found = read.found;
  if (found && (isSubscribed(subscriptionOf(found)) || !isLater(a, found))) return ignored(found);
  return { status: 'applied', ref: c.subscribes.subscribe(item, read, a.occurredAt) };
}

async function unsubscribe(c: Context, a: SubscriptionAction & { action: 'unsubscribe' }): Promise<Decision> {
  const row = await bySyncId(c, a.syncId);
  if (!row) return rejected(NOT_FOUND);
  const shown = subscriptionOf(row);
  if (!isSubscribed(shown) || !isLater(a, row)) return ignored(row);
  await subscriptions.changeLocked(c.tx, c.userId, row.guid, { subscribed: false });
  await repo.noteChange(c.tx, c.userId, row.id, {
    subscribedAt: shown.subscribedAt,
    unsubscribedAt: a.occurredAt,
    occurredAt: a.occurredAt,
    clientId: c.clientId ?? null,
  });
  return applied(row);
}

/** Why an update's guid or URL cannot be taken: invalid, or another record's (which would merge or hide it). */
async function updateProblem(c: Context, row: repo.EntityRow, a: SubscriptionAction & { action: 'update' }) {
  if (a.guid !== undefined) {
    const guid = parseGuid(a.guid);
    if (!guid) return 'Invalid data.guid: not a UUID';
    const owner = await repo.guidOwner(c.tx, c.userId, guid);
    if (owner !== undefined && owner !== row.id) return 'Another subscription has this guid';
  }
  if (a.feedUrl !== undefined) {
    const url = checkFeedUrl(a.feedUrl);
    if (!url.ok) return `Invalid data.feed_url: ${url.problem}`;
    const owner = await subscriptions.recordIdByUrlHash(c.tx, c.userId, urlHash(url.key));
    if (owner !== undefined && owner !== row.id) return 'Another subscription has this feed_url';
  }
  return undefined;
}

/** Changes a record's guid or feed URL; a deleted record takes no change. */
async function update(c: Context, a: SubscriptionAction & { action: 'update' }): Promise<Decision> {
  const row = await bySyncId(c, a.syncId);
  if (!row) return rejected(NOT_FOUND);
  if (row.deleted) return rejected('The subscription was deleted', row);
  const problem = await updateProblem(c, row, a);
  if (problem) return rejected(problem, row);
  if (!isLater(a, row)) return ignored(row);
  const report = await subscriptions.changeLocked(c.tx, c.userId, row.guid, { feedUrl: a.feedUrl, guid: a.guid });
  // Values it already had change nothing, not even its stamp: nothing to note.
  if (report.subscriptionChanged || report.guidChanged) {
    const shown = subscriptionOf(row);
    await repo.noteChange(c.tx, c.userId, row.id, {
      subscribedAt: shown.subscribedAt,
      unsubscribedAt: shown.unsubscribedAt ?? null,
      occurredAt: a.occurredAt,
      clientId: c.clientId ?? null,
    });
  }
  return applied(row);
}

export function subscriptionAction(c: Context, a: SubscriptionAction): Promise<Decision> {
  switch (a.action) {
    case 'subscribe':
      return subscribe(c, a);
    case 'unsubscribe':
      return unsubscribe(c, a);
    case 'update':
      return update(c, a);
  }
}
