import type { EpisodeState } from '../../episodes/service';
import type { Entity, Outcome, Stamped, SyncAction, SyncSubscription } from '../../sync/service';
import { iso } from '../../timestamps';
import { uuidV5 } from '../../uuid';

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

/** The namespace of the ids of GET /api/v1/sync's changes (a random UUID, fixed once). */
const CHANGE_NAMESPACE = Buffer.from('f6a93c2302214b1c818ebdebccc1f8a8', 'hex');

/** The app's time of the latest of the episode's values, else the server's time of its latest change. */
function episodeOccurredAt(x: EpisodeState): Date {
  const times = [x.position, x.played, x.favourite].flatMap((s) => (s ? [s.at.getTime()] : []));
  return times.length > 0 ? new Date(Math.max(...times)) : x.changed;
}

/**
 * A change in GET /api/v1/sync, in both shapes the draft gives it. sync.md's: its type, the server's time of
 * it (`last_updated`), the entity now (`data`). schema.yml's ActionObject adds `action` (`create` for every
 * entity of a first sync, without `since`; then `update`, or `delete` for a record deleted through /v1),
 * `action_id` (the same UUID each time this change is read, a new one for the entity's next change) and
 * `occurred_at` (the app's time of the latest change, or the server's for a change through another door).
 */
export function presentChange(e: Entity, firstSync: boolean) {
  const changed = e.type === 'subscription' ? e.subscription.changed : e.episode.changed;
  const syncId = e.type === 'subscription' ? e.subscription.syncId : e.episode.syncId;
  const deleted = e.type === 'subscription' && e.subscription.deleted;
  return {
    type: e.type,
    action: firstSync ? 'create' : deleted ? 'delete' : 'update',
    action_id: uuidV5(CHANGE_NAMESPACE, `${e.type} ${syncId} ${iso(changed)}`),
    occurred_at: iso(e.type === 'subscription' ? e.subscription.lastUpdated : episodeOccurredAt(e.episode)),
    last_updated: iso(changed),
    data: presentEntity(e),
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
