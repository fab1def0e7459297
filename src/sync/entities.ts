import type { EntityRow } from './repo';
import type { SyncSubscription } from './types';

/**
 * A record as the sync endpoint shows it. While the latest change of the record was a sync action's (its
 * note's stamp is the record's change stamp), the app's times of that action count; after a change
 * through another door (gpodder, /v1, the web page), the server's time of that change does.
 */
export function subscriptionOf(row: EntityRow): SyncSubscription {
  const subscribed = row.is_subscribed && row.deleted === null;
  const noted = row.stamp !== null && row.stamp.getTime() === row.changed.getTime();
  const base = {
    syncId: row.sync_id,
    guid: row.guid,
    feedUrl: row.feed_url,
    changed: row.changed,
    deleted: row.deleted !== null,
  };
  if (noted) {
    return {
      ...base,
      subscribedAt: row.subscribed_at!,
      ...(!subscribed && { unsubscribedAt: row.unsubscribed_at ?? row.changed }),
      lastUpdated: row.occurred_at!,
    };
  }
  if (subscribed) return { ...base, subscribedAt: row.subscription_changed, lastUpdated: row.changed };
  return {
    ...base,
    subscribedAt: row.subscribed_at ?? row.subscription_changed,
    unsubscribedAt: row.deleted ?? row.subscription_changed,
    lastUpdated: row.changed,
  };
}

export const isSubscribed = (s: SyncSubscription): boolean => s.unsubscribedAt === undefined;
