import { takeChangeStamp } from '../db/change-stamp';
import { ONE_SNAPSHOT, withTransaction, type Db, type Queryable } from '../db/pool';
import { InvalidInput, isRefusal, NotFound, type Refusal, type RefusedItem } from '../errors';
import {
  readStates,
  resolveEpisodes,
  type EpisodeIdentity,
  type EpisodeState,
  type ResolvedEpisode,
} from '../episodes/service';
import { checkFeedUrl, parseGuid, urlHash } from '../subscriptions/service';
import * as repo from './repo';

// Up next: one ordered list of episodes per user, kept for every device (docs/queue.md). Every change runs
// in one transaction under the user's lock and change stamp, so two devices' edits are applied one after
// the other, never lost; a whole-list replace names the version it read and is refused when the list has
// changed since. An episode a device plays to the end after it was added leaves the list.

export type QueueItem = {
  id: string;
  syncId: string;
  podcastUrl: string;
  /** The guid of the user's subscription to the podcast, if it is one. */
  podcastGuid: string | null;
  enclosureUrl: string;
  episodeGuid: string | null;
  title: string | null;
  podcastTitle: string | null;
  /** The feed item's id (the web page's episode), if a feed lists the episode. */
  itemId: string | null;
  /** The episode's artwork, else its podcast's, when a feed gives one. */
  artworkUrl: string | null;
  /** The change stamp of the write that added it. */
  addedAt: Date;
  /** The user's state of the episode (src/episodes/state.ts), when any app said anything of it. */
  state: EpisodeState | undefined;
};

export type Queue = { version: number; items: QueueItem[] };

/** Where an episode goes: the end, the top ("play next"), or a position (0: the top; past the end: the end). */
export type Place = 'end' | 'next' | number;

export type Limits = { maxItems: number };

const itemOf = (r: repo.ItemRow, state: EpisodeState | undefined): QueueItem => ({
  id: r.id,
  syncId: r.sync_id,
  podcastUrl: r.podcast_url,
  podcastGuid: r.podcast_guid,
  enclosureUrl: r.enclosure_url,
  episodeGuid: r.episode_guid,
  title: r.title,
  podcastTitle: r.podcast_title,
  itemId: r.item_id,
  artworkUrl: r.artwork_url,
  addedAt: r.added,
  state,
});

const queueOf = async (db: Queryable, userId: number): Promise<Queue> => {
  const [version, rows] = await Promise.all([repo.version(db, userId), repo.items(db, userId)]);
  const states = await readStates(
    db,
    userId,
    rows.map((r) => r.sync_id),
  );
  return { version, items: rows.map((r) => itemOf(r, states.get(r.sync_id))) };
};

/** Takes the items played to the end off the list (in the caller's locked transaction). */
async function sweep(tx: Queryable, userId: number): Promise<void> {
  const played = await repo.playedItems(tx, userId);
  if (played.length > 0 && (await repo.remove(tx, userId, played)) > 0) await repo.bump(tx, userId);
}

/** Runs a change of the list under the user's lock and stamp, with played items gone first; the list after it. */
async function changing(
  db: Db,
  userId: number,
  change: (tx: Queryable, stamp: Date) => Promise<boolean>,
): Promise<Queue> {
  return withTransaction(db, async (tx) => {
    const stamp = await takeChangeStamp(tx, userId);
    await sweep(tx, userId);
    if (await change(tx, stamp)) await repo.bump(tx, userId);
    return queueOf(tx, userId);
  });
}

/** The user's list in order, with its version. */
export async function read(db: Db, userId: number): Promise<Queue> {
  // Played items are taken off under the lock, only when there are some (a read is otherwise a read).
  if ((await repo.playedItems(db, userId)).length > 0) return changing(db, userId, () => Promise.resolve(false));
  // The version and the items in one snapshot: read apart, a change committing between them could pair the
  // list before it with the version after it, and a device writing that list back with it (If-Match) would
  // undo the change without a 412.
  return withTransaction(db, (tx) => queueOf(tx, userId), ONE_SNAPSHOT);
}

/** The row an episode is kept as. */
function writeOf(e: ResolvedEpisode): repo.ItemWrite {
  const podcast = checkFeedUrl(e.podcastUrl);
  return {
    episodeHash: e.syncId,
    podcastUrl: e.podcastUrl,
    podcastHash: podcast.ok ? urlHash(podcast.key) : urlHash(e.podcastUrl),
    enclosureUrl: e.enclosureUrl,
    episodeGuid: e.episodeGuid ?? null,
  };
}

const positionOf = (place: Place, length: number) =>
  place === 'next' ? 0 : place === 'end' ? length : Math.max(0, Math.min(place, length));

/**
 * Puts an episode on the list at a place; one the list has already moves there, named by the sync id the
 * list gives it too (orQueued). An episode that cannot be named (unknown podcast, no enclosure URL) or a
 * full list is an InvalidInput with the reason.
 */
export async function add(
  db: Db,
  userId: number,
  episode: EpisodeIdentity,
  place: Place,
  limits: Limits,
): Promise<{ queue: Queue; id: string }> {
  const named = await resolveEpisodes(db, userId, [episode]);
  let id = '';
  const queue = await changing(db, userId, async (tx, stamp) => {
    const [e] = await orQueued(tx, userId, [episode], named);
    if (e === undefined || isRefusal(e)) throw new InvalidInput(e?.reason ?? 'no episode');
    const length = await repo.count(tx, userId);
    const had = await repo.itemOf(tx, userId, e.episodeHash);
    if (had) {
      id = had.id;
      return repo.move(tx, userId, had.id, Math.min(positionOf(place, length), length - 1));
    }
    if (length >= limits.maxItems) throw new InvalidInput(`Up next holds at most ${limits.maxItems} episodes`);
    id = await repo.insert(tx, userId, e, positionOf(place, length), stamp);
    return true;
  });
  return { queue, id };
}

/** Moves an item to a position (0: the top; past the end: the end). */
export async function move(db: Db, userId: number, id: string, to: number): Promise<Queue> {
  return changing(db, userId, async (tx) => {
    const length = await repo.count(tx, userId);
    if (!(await repo.move(tx, userId, id, Math.max(0, Math.min(to, length - 1))))) throw new NotFound();
    return true;
  });
}

/** Takes items off the list; a NotFound when none of them is on it. */
export async function remove(db: Db, userId: number, ids: string[]): Promise<Queue> {
  return changing(db, userId, async (tx) => {
    if ((await repo.remove(tx, userId, ids)) === 0) throw new NotFound();
    return true;
  });
}

/** Empties the list. */
export const clear = (db: Db, userId: number): Promise<Queue> =>
  changing(db, userId, async (tx) => {
    await repo.deleteAll(tx, userId);
    return false;
  });

/** A replace that read an older version than the list's: the list as it is. */
export type Stale = { stale: true; queue: Queue };

/**
 * Makes the list these episodes in this order, if its version is still one of `expected` (`*`: whatever it
 * is, checked under the lock like a version, so that another device's edit meanwhile cannot refuse it); each
 * episode that cannot be named is a failure with its index and reason, and the others make the list (at
 * most maxItems). An episode named twice keeps its first place.
 */
export async function replace(
  db: Db,
  userId: number,
  expected: number[] | '*',
  episodes: (EpisodeIdentity | Refusal)[],
  limits: Limits,
): Promise<Stale | { stale: false; queue: Queue; failures: RefusedItem[] }> {
  if (episodes.length > limits.maxItems) throw new InvalidInput(`Up next holds at most ${limits.maxItems} episodes`);
  const named = await resolveEpisodes(db, userId, episodes);
  let failures: RefusedItem[] = [];
  let stale = false;
  const queue = await changing(db, userId, async (tx, stamp) => {
    if (expected !== '*' && !expected.includes(await repo.version(tx, userId))) {
      stale = true;
      return false;
    }
    const resolved = await orQueued(tx, userId, episodes, named);
    failures = [];
    const seen = new Set<string>();
    const rows: repo.ItemWrite[] = [];
    resolved.forEach((e, index) => {
      if (isRefusal(e)) failures.push({ index, reason: e.reason });
      else if (!seen.has(e.episodeHash)) {
        seen.add(e.episodeHash);
        rows.push(e);
      }
    });
    await repo.replace(tx, userId, rows, stamp);
    return true;
  });
  return stale ? { stale: true, queue } : { stale: false, queue, failures };
}

/**
 * The rows the named episodes are kept as. An episode named by a sync id of the list's (what GET /v1/queue
 * answers) is that item's episode, when nothing else names it: an episode known only to Up next (never
 * played, in no feed fetched) is not lost when a device writes the list back by the sync ids it read, and
 * moves when a device adds it again by its sync id.
 */
async function orQueued(
  tx: Queryable,
  userId: number,
  sent: (EpisodeIdentity | Refusal)[],
  named: (ResolvedEpisode | Refusal)[],
): Promise<(repo.ItemWrite | Refusal)[]> {
  const syncIdOf = (i: number) => {
    const w = sent[i];
    const id = w !== undefined && !isRefusal(w) && isRefusal(named[i]) ? w.syncId : undefined;
    return id === undefined ? undefined : parseGuid(id);
  };
  const wanted = named.flatMap((_, i) => syncIdOf(i) ?? []);
  const queued = await repo.writesOf(tx, userId, wanted);
  return named.map((e, i) => {
    const q = queued.get(syncIdOf(i) ?? '');
    return q ?? (isRefusal(e) ? e : writeOf(e));
  });
}

/** Adds the episodes the list does not have at its end, in order, as far as it has room (a restore). */
export async function append(db: Db, userId: number, episodes: EpisodeIdentity[], limits: Limits) {
  if (episodes.length === 0) return;
  const named = await resolveEpisodes(db, userId, episodes);
  await changing(db, userId, async (tx, stamp) => {
    let length = await repo.count(tx, userId);
    let added = false;
    for (const e of named) {
      if (isRefusal(e) || length >= limits.maxItems || (await repo.itemOf(tx, userId, e.syncId))) continue;
      await repo.insert(tx, userId, writeOf(e), length++, stamp);
      added = true;
    }
    return added;
  });
}

/** The items of a podcast (any of its URLs) the list has: what the web page asks about at a removal. */
export async function itemsOfPodcast(db: Queryable, userId: number, feedUrls: string[]): Promise<string[]> {
  const hashes = feedUrls.flatMap((u) => {
    const c = checkFeedUrl(u);
    return c.ok ? [urlHash(c.key)] : [];
  });
  return hashes.length === 0 ? [] : repo.itemsOfPodcast(db, userId, hashes);
}
