import { isPlayed } from '../episodes/service';
import type { EpisodeStateRow } from './episode-repo';
import type { EntityRow } from './repo';
import type { SyncEpisode, SyncSubscription } from './types';

/**
 * A record as the sync endpoint shows it. While the latest change of the record was a sync action's (its
 * note's stamp is the record's change stamp), the app's times of that action count; after a change
 * through another door (gpodder, /v1, the web page), the server's time of that change does.
 */
export function subscriptionOf(row: EntityRow): SyncSubscription {
  const subscribed = row.is_subscribed && row.deleted === null;
  const noted = row.stamp !== null && row.stamp.getTime() === row.changed.getTime();
  const base = { syncId: row.sync_id, guid: row.guid, feedUrl: row.feed_url, changed: row.changed };
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

const newest = <T extends { at: Date }>(a: T, b: T): T => (b.at > a.at ? b : a);

/**
 * An episode from its latest action of each kind: its position is its latest play's; it is played when
 * that play reached the end and no later "new" (marked unplayed) undid it, as /v1/episodes says.
 */
export function episodeOf(rows: EpisodeStateRow[]): SyncEpisode {
  const by = new Map(rows.map((r) => [r.action, r]));
  const play = by.get('play');
  const marked = by.get('new');
  const favourite = by.get('favourite');
  const first = rows[0]!;
  const named = play ?? first;
  let played = { value: false, at: rows.reduce(newest).at };
  if (play && play.position !== null) played = { value: isPlayed(play.position, play.total), at: play.at };
  if (marked && (!play || marked.at > play.at)) played = { value: false, at: marked.at };
  return {
    syncId: first.sync_id,
    podcastGuid: rows.find((r) => r.podcast_guid !== null)?.podcast_guid ?? undefined,
    podcastUrl: named.podcast_url,
    enclosureUrl: named.episode_url,
    ...(play && play.position !== null && { position: { value: play.position, at: play.at } }),
    played,
    ...(favourite && { favourite: { value: favourite.favourite === true, at: favourite.at } }),
    changed: rows.map((r) => r.changed).reduce((a, b) => (b > a ? b : a)),
  };
}

/** The episodes of these rows, by sync id. */
export function episodesOf(rows: EpisodeStateRow[]): Map<string, SyncEpisode> {
  const grouped = new Map<string, EpisodeStateRow[]>();
  for (const r of rows) grouped.set(r.sync_id, [...(grouped.get(r.sync_id) ?? []), r]);
  return new Map([...grouped].map(([id, rs]) => [id, episodeOf(rs)]));
}
