import type { Entity, Outcome, SyncAction, SyncSubscription } from '../sync/service';
import { iso } from '../timestamps';

// Entities and results in the draft's field names (snake_case, RFC 3339 times in UTC with milliseconds).

export const presentSubscription = (x: SyncSubscription) => ({
  sync_id: x.syncId,
  guid: x.guid,
  feed_url: x.feedUrl,
  subscribed_at: iso(x.subscribedAt),
  ...(x.unsubscribedAt && { unsubscribed_at: iso(x.unsubscribedAt) }),
});

function presentEntity(e: Entity) {
  if (e.type === 'subscription') return presentSubscription(e.subscription);
  const x = e.episode;
  return {
    sync_id: x.syncId,
    ...(x.podcastGuid && { podcast_guid: x.podcastGuid }),
    podcast_url: x.podcastUrl,
    enclosure_url: x.enclosureUrl,
  };
}

/** One action's result; the entity under both names the draft uses (`data` and `entity`). */
export function present(a: SyncAction, o: Outcome) {
  const entity = o.entity && presentEntity(o.entity);
  return {
    type: a.type,
    action: a.action,
    action_id: a.actionId,
    status: o.status,
    ...(o.status === 'rejected' && { reason: o.reason }),
    ...(entity && { data: entity, entity }),
  };
}
