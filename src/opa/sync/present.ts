import type { EpisodeState } from '../../episodes/service';
import type { Entity, Outcome, Stamped, SyncAction, SyncSubscription } from '../../sync/service';
import { iso } from '../../timestamps';

// Entities and results in the draft's field names (snake_case, RFC 3339 times in UTC with milliseconds).

export const presentSubscription = (x: SyncSubscription) => ({
  sync_id: x.syncId,
  guid: x.guid,
  feed_url: x.feedUrl,
  subscribed_at: iso(x.subscribedAt),
  ...(x.unsubscribedAt && { unsubscribed_at: iso(x.unsubscribedAt) }),
});

const stamped = <T>(s: Stamped<T>) => ({ value: s.value, timestamp: iso(s.at) });

/** An episode's one state in the shape of the OPA episodes draft's record (as /v1/episodes shows it). */
export const presentEpisode = (x: EpisodeState) => ({
  sync_id: x.syncId,
  ...(x.podcastGuid && { podcast_guid: x.podcastGuid }),
  podcast_url: x.podcastUrl,
  enclosure_url: x.enclosureUrl,
  ...(x.position && { playback_position: stamped(x.position) }),
  played_status: stamped(x.played),
  ...(x.favourite && { favorite_status: stamped(x.favourite) }),
});

const presentEntity = (e: Entity) =>
  e.type === 'subscription' ? presentSubscription(e.subscription) : presentEpisode(e.episode);

/** A change in GET /api/v1/sync: its type, the server's time of it, the entity now. */
export const presentChange = (e: Entity) => ({
  type: e.type,
  last_updated: iso(e.type === 'subscription' ? e.subscription.changed : e.episode.changed),
  data: presentEntity(e),
});

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
