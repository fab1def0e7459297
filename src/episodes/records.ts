import type { Db, Queryable } from '../db/pool';
import { Deleted, isRefusal, NotFound, Refusal } from '../errors';
import * as episodes from './actions';
import * as subscriptions from '../subscriptions/service';
import { checkFeedUrl, urlHash } from '../subscriptions/service';
import { readStates, type EpisodeState, type Stamped } from './state';
import * as favouriteService from './favourites';
import * as repo from './state-repo';

// Episode records: the user's episodes as the Open Podcast API's episodes draft describes them (one record
// per episode: what identifies it, and each piece of state as a value with the time it took that value),
// read from and written to the episode actions every app uploads (docs/clients.md, "Episodes, experimental").
// An episode is the enclosure URL the apps name it by; its sync id is that URL's key.

export type { EpisodeState, Stamped } from './state';

/**
 * A page of the user's episode states changed after `since`, and how many there are; `syncPoint` is
 * what to send as the next `since` (as for the episode actions: every later write is stamped after it).
 */
export async function page(
  db: Db,
  userId: number,
  q: { since?: Date | undefined; page: number; perPage: number },
): Promise<{ syncPoint: Date; total: number; records: EpisodeState[] }> {
  const r = await episodes.heldRead(db, userId, async (tx) => {
    const changed = await repo.changedPage(tx, userId, {
      since: q.since,
      limit: q.perPage,
      offset: (q.page - 1) * q.perPage,
    });
    const states = await readStates(tx, userId, changed.hashes);
    return { ...changed, records: changed.hashes.flatMap((h) => states.get(h) ?? []) };
  });
  return { syncPoint: r.syncPoint, total: r.total, records: r.records };
}

/** What names an episode in a request: its sync id, or its podcast with its guid or enclosure URL. */
export type EpisodeIdentity = {
  podcastGuid?: string | undefined;
  podcastUrl?: string | undefined;
  syncId?: string | undefined;
  episodeGuid?: string | null | undefined;
  enclosureUrl?: string | null | undefined;
};

/** An episode record as an app sends it: what identifies the episode, and the state it changed. */
export type RecordWrite = EpisodeIdentity & {
  position?: Stamped<number> | undefined;
  played?: Stamped<boolean> | undefined;
  isNew?: Stamped<boolean> | undefined;
  downloaded?: Stamped<boolean> | undefined;
  favourite?: Stamped<boolean> | undefined;
};

/** An episode a request named, as the server knows it. */
export type ResolvedEpisode = {
  syncId: string;
  podcastUrl: string;
  /** The guid of the user's subscription to the podcast, or the one sent; none when neither. */
  podcastGuid: string | null;
  enclosureUrl: string;
  episodeGuid: string | undefined;
  /** Seconds, as its feed says. */
  duration: number | null;
};

/** A record stored: the episode as the server names it. */
export type Saved = { syncId: string; podcastUrl: string; podcastGuid: string | null; enclosureUrl: string };
export type RecordOutcome = Saved | Refusal;

/** An episode's sync id: the key of its enclosure URL, in the form of a UUID (as PostgreSQL writes it). */
export const syncIdOf = (enclosureUrl: string) =>
  urlHash(enclosureUrl).replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');

type Podcast = { url: string; guid: string | null };

type Subscription = { feedUrl: string; currentGuid: string } | undefined;

/** The podcast a record names: the user's subscription by any guid of its chain, else the URL sent. */
async function podcastOf(
  w: EpisodeIdentity,
  subscription: (guid: string) => Promise<Subscription>,
): Promise<Podcast | Refusal | undefined> {
  if (w.podcastGuid === undefined) return w.podcastUrl === undefined ? undefined : { url: w.podcastUrl, guid: null };
  const s = await subscription(w.podcastGuid);
  if (s) return { url: s.feedUrl, guid: s.currentGuid };
  // Not a subscription's guid (a podcast the user is not subscribed to): the URL sent names the podcast.
  if (w.podcastUrl !== undefined) return { url: w.podcastUrl, guid: w.podcastGuid };
  return new Refusal('Unknown podcast_guid: no subscription of this user has it');
}

/**
 * The actions that say what a record says: each piece of state at its own time. `length`: the episode's
 * in seconds (its state's: the latest play's total, else the feed's duration), null when unknown.
 */
export function actionsOf(
  w: RecordWrite,
  podcast: string,
  episode: string,
  guid: string | undefined,
  length: number | null,
) {
  const action = (
    name: episodes.ActionName,
    at: Date,
    play?: { started?: number; position: number; total?: number },
  ) => ({
    podcastUrl: podcast,
    episodeUrl: episode,
    guid,
    action: name,
    at,
    ...play,
  });
  const out: episodes.EpisodeAction[] = [];
  if (w.downloaded) out.push(action(w.downloaded.value ? 'download' : 'delete', w.downloaded.at));
  // Played is a play to the end (as AntennaPod uploads it), so a position no later than it is the end too.
  const playedAt = w.played?.value ? w.played.at : undefined;
  if (w.position && (playedAt === undefined || w.position.at > playedAt)) {
    // Started where it stopped (no listening is made up for the statistics), and the length when known:
    // AntennaPod takes a play's position only with started, position and total all given. A length
    // shorter than the position is not the episode's (a played mark with no length known wrote one of the
    // position it had, or 1 s): with it, the position would read as played.
    const p = w.position.value;
    const total = length !== null && length >= p ? { total: length } : {};
    out.push(action('play', w.position.at, { started: p, position: p, ...total }));
  }
  if (playedAt) {
    const end = length ?? Math.max(1, w.position?.value ?? 0);
    out.push(action('play', playedAt, { started: end, position: end, total: end }));
  }
  // Not played, or new: gpodder's "new" (what AntennaPod uploads when an episode is marked unplayed).
  if (w.played?.value === false) out.push(action('new', w.played.at));
  if (w.isNew?.value === true) out.push(action('new', w.isNew.at));
  return out;
}

/** The podcast each write names, each subscription guid looked up once (a batch names few podcasts, each many times). */
async function podcastsOf(db: Queryable, userId: number, writes: EpisodeIdentity[]) {
  const looked = new Map<string, Promise<Subscription>>();
  const lookUp = (guid: string): Promise<Subscription> =>
    subscriptions.getRecord(db, userId, guid).catch((err: unknown) => {
      if (err instanceof NotFound || err instanceof Deleted) return undefined;
      throw err;
    });
  const subscription = (guid: string) => {
    if (!looked.has(guid)) looked.set(guid, lookUp(guid));
    return looked.get(guid)!;
  };
  const podcasts: (Podcast | Refusal | undefined)[] = [];
  for (const w of writes) podcasts.push(await podcastOf(w, subscription));
  return podcasts;
}

/** What names each write's episode, to find it among the user's episodes and the feeds' items. */
const keysOf = (writes: EpisodeIdentity[], podcasts: (Podcast | Refusal | undefined)[]): repo.EpisodeKey[] =>
  writes.map((w, i) => {
    const p = podcasts[i];
    const checked = p !== undefined && !isRefusal(p) ? checkFeedUrl(p.url) : undefined;
    return {
      syncId: w.syncId ?? null,
      enclosureHash: w.enclosureUrl ? urlHash(w.enclosureUrl) : null,
      podcastHash: checked?.ok ? urlHash(checked.key) : null,
      guid: w.episodeGuid ?? null,
    };
  });

/** The episode a request names, from the podcast it names and what was found of its episode; or why not. */
function resolvedOf(
  w: EpisodeIdentity,
  named: Podcast | Refusal | undefined,
  f: repo.FoundEpisode,
): ResolvedEpisode | Refusal {
  const known = f.podcast_url === null ? undefined : { url: f.podcast_url, guid: w.podcastGuid ?? null };
  // A known episode (by its sync id) keeps its podcast when the guid sent is not a subscription's.
  const p = named === undefined || (isRefusal(named) && known) ? known : named;
  const enclosure = f.episode_url ?? (w.enclosureUrl || f.enclosure_url);
  if (isRefusal(p)) return p;
  if (p === undefined) return new Refusal('podcast_guid: required');
  if (!enclosure) return new Refusal('enclosure_url: required for an episode the server does not know');
  const episode: ResolvedEpisode = {
    syncId: syncIdOf(enclosure),
    podcastUrl: p.url,
    podcastGuid: p.guid,
    enclosureUrl: enclosure,
    episodeGuid: w.episodeGuid ?? f.episode_guid ?? f.item_guid ?? undefined,
    duration: f.duration,
  };
  return episode;
}

/**
 * The episodes a request names, in order, each as the server knows it or why it cannot be named (its
 * podcast unknown, no enclosure URL for an episode the server does not know). An episode is named by its
 * sync id when the user has it, else by its enclosure URL, else by its guid: among the user's episodes of
 * the podcast (by the URL their apps named it by), else among the podcast's items.
 */
export async function resolveEpisodes(
  db: Queryable,
  userId: number,
  sent: (EpisodeIdentity | Refusal)[],
): Promise<(ResolvedEpisode | Refusal)[]> {
  // An item the door refused already stays refused, and names no episode.
  const named = sent.map((w) => (isRefusal(w) ? {} : w));
  const podcasts = await podcastsOf(db, userId, named);
  const found = await repo.findEpisodes(db, userId, keysOf(named, podcasts));
  return named.map((w, i) => {
    const refused = sent[i]!;
    return isRefusal(refused) ? refused : resolvedOf(w, podcasts[i], found[i]!);
  });
}

const outcomeOf = (e: ResolvedEpisode | Refusal): RecordOutcome =>
  isRefusal(e)
    ? e
    : { syncId: e.syncId, podcastUrl: e.podcastUrl, podcastGuid: e.podcastGuid, enclosureUrl: e.enclosureUrl };

/**
 * Stores episode records as episode actions and favourites, each record on its own: one that cannot be
 * stored (its podcast or episode unknown, its URLs invalid, a favourite over the bound, or a reason the
 * door gives for a record it could not read) is reported with why, and the others are stored. One outcome
 * per record, in order.
 */
export async function save(
  db: Queryable,
  userId: number,
  sent: (RecordWrite | Refusal)[],
  limits: { maxFavourites: number },
): Promise<RecordOutcome[]> {
  const writes = sent.map((w) => (isRefusal(w) ? {} : w));
  const named = await resolveEpisodes(db, userId, sent);
  const outcomes = named.map(outcomeOf);
  // The length a play is written with is the state's (an app's total counts when the feed gives none), so
  // AntennaPod can read the play, and it ends where an app's player ends.
  const states = await readStates(
    db,
    userId,
    named.flatMap((e) => (isRefusal(e) ? [] : [e.syncId])),
  );
  const batch: { action: episodes.EpisodeAction; record: number }[] = [];
  writes.forEach((w, i) => {
    const e = named[i]!;
    if (isRefusal(e)) return;
    const length = states.get(e.syncId)?.length ?? e.duration;
    for (const action of actionsOf(w, e.podcastUrl, e.enclosureUrl, e.episodeGuid, length)) {
      batch.push({ action, record: i });
    }
  });
  const { skipped } = await episodes.record(
    db,
    userId,
    batch.map((b) => b.action),
  );
  for (const s of skipped) outcomes[batch[s.index]!.record] = new Refusal(s.reason);
  const favourites = writes.flatMap((w, index) => {
    const e = named[index]!;
    return w.favourite && !isRefusal(e) && !isRefusal(outcomes[index])
      ? [{ episode: e, value: w.favourite.value, at: w.favourite.at, index }]
      : [];
  });
  const refused = await favouriteService.change(db, userId, favourites, limits.maxFavourites);
  for (const r of refused) outcomes[r.index] = new Refusal(r.reason);
  return outcomes;
}
