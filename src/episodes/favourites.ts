import type { RefusedItem } from '../errors';
import type { Db, Queryable } from '../db/pool';
import { checkFeedUrl, urlHash } from '../subscriptions/service';
import * as repo from './favourite-repo';
import { readStates, type EpisodeState } from './state';

// Favourites: per user and episode (named as /v1/episodes names it), set or cleared at a time the app
// gives; the later time wins, whichever device sends it and in whatever order (docs/queue.md).

/** An episode as a request named it, as the server knows it. */
export type NamedEpisode = {
  syncId: string;
  podcastUrl: string;
  enclosureUrl: string;
  episodeGuid?: string | undefined;
};

/** A favourite set (value true) or cleared at a time; `index`: its place in the caller's batch. */
export type FavouriteChange = { episode: NamedEpisode; value: boolean; at: Date; index: number };

/** Of several changes of one episode in a batch, the latest (the others lose to it, as they would one by one). */
function latestPerEpisode(changes: FavouriteChange[]): FavouriteChange[] {
  const latest = new Map<string, FavouriteChange>();
  for (const c of changes) {
    const seen = latest.get(c.episode.syncId);
    if (!seen || c.at > seen.at) latest.set(c.episode.syncId, c);
  }
  return [...latest.values()];
}

/** The row a change writes, or why not. */
function rowOf(c: FavouriteChange): repo.FavouriteWrite | string {
  const podcast = checkFeedUrl(c.episode.podcastUrl);
  if (!podcast.ok) return `podcast_url: ${podcast.problem}`;
  return {
    episodeHash: c.episode.syncId,
    podcastUrl: podcast.feedUrl,
    podcastHash: urlHash(podcast.key),
    enclosureUrl: c.episode.enclosureUrl,
    episodeGuid: c.episode.episodeGuid ?? null,
    favourite: c.value,
    at: c.at,
  };
}

/**
 * Stores favourites set and cleared, in one stamped write; a set beyond `max` favourites is refused (a
 * second device's batch at the same moment may pass the bound by its own size). Returns the refused.
 */
export async function change(
  db: Queryable,
  userId: number,
  changes: FavouriteChange[],
  max: number,
): Promise<RefusedItem[]> {
  const refused: RefusedItem[] = [];
  const rows: repo.FavouriteWrite[] = [];
  const kept = latestPerEpisode(changes);
  const sets = kept.filter((c) => c.value).map((c) => c.episode.syncId);
  const already = sets.length === 0 ? new Set<string>() : await repo.setOf(db, userId, sets);
  let room = sets.length === 0 ? 0 : max - (await repo.count(db, userId));
  for (const c of kept) {
    const row = rowOf(c);
    if (typeof row === 'string') {
      refused.push({ index: c.index, reason: row });
      continue;
    }
    if (c.value && !already.has(row.episodeHash) && room-- <= 0) {
      refused.push({ index: c.index, reason: `At most ${max} favourites: clear one first` });
      continue;
    }
    rows.push(row);
  }
  await repo.upsert(db, userId, rows);
  return refused;
}

/** A favourite as the pages and the gpodder door show it. */
export type Favourite = {
  syncId: string;
  podcastUrl: string;
  podcastTitle: string | null;
  enclosureUrl: string;
  episodeGuid: string | null;
  /** The feed item's id (the web page's episode), if a feed lists the episode. */
  itemId: string | null;
  /** The episode's artwork, else its podcast's, when a feed gives one. */
  artworkUrl: string | null;
  title: string | null;
  link: string | null;
  publishedAt: Date | null;
  /** When it was set (the app's time). */
  at: Date;
  /** The user's state of the episode, as every door reads it. */
  state: EpisodeState | undefined;
};

/** The user's favourites, the newest set first. */
export async function list(db: Queryable, userId: number, limit: number): Promise<Favourite[]> {
  const rows = await repo.list(db, userId, limit);
  const states = await readStates(
    db,
    userId,
    rows.map((r) => r.episode_hash),
  );
  return rows.map((r) => ({
    syncId: r.episode_hash,
    podcastUrl: r.podcast_url,
    podcastTitle: r.podcast_title,
    enclosureUrl: r.enclosure_url,
    episodeGuid: r.episode_guid,
    itemId: r.item_id,
    artworkUrl: r.artwork_url,
    title: r.title,
    link: r.link,
    publishedAt: r.published_at,
    at: r.at,
    state: states.get(r.episode_hash),
  }));
}

/** The app's time of the episode's favourite (set or cleared), if it has one. */
export const favouriteTime = (db: Queryable, userId: number, syncId: string): Promise<Date | undefined> =>
  repo.timeOf(db, userId, syncId);

/** Every favourite row of the user, cleared ones included, for the archive. */
export const archived = (db: Db, userId: number) => repo.all(db, userId);
