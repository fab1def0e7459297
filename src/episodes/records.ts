import type { Db, Queryable } from '../db/pool';
import { Deleted, NotFound } from '../errors';
import * as episodes from './actions';
import * as subscriptions from '../subscriptions/service';
import { checkFeedUrl, urlHash } from '../subscriptions/service';
import { isPlayed } from './listening';
import * as favouriteService from './favourites';
import * as repo from './state-repo';

// Episode records: the user's episodes as the Open Podcast API's episodes draft describes them (one record
// per episode: what identifies it, and each piece of state as a value with the time it took that value),
// read from and written to the episode actions every app uploads (docs/clients.md, "Episodes, experimental").
// An episode is the enclosure URL the apps name it by; its sync id is that URL's key.

/** A value of an episode's state and the time (the app's) it took that value. */
export type Stamped<T> = { value: T; at: Date };

export type EpisodeRecord = {
  syncId: string;
  podcastUrl: string;
  /** The guid of the user's subscription to the podcast; none when the podcast is not one. */
  podcastGuid: string | null;
  episodeGuid: string | null;
  title: string | null;
  publishedAt: Date | null;
  enclosureUrl: string;
  episodeUrl: string | null;
  position?: Stamped<number>;
  played: Stamped<boolean>;
  isNew?: Stamped<boolean>;
  downloaded?: Stamped<boolean>;
  favourite?: Stamped<boolean>;
};

const later = <T extends { at: Date }>(a: T | undefined, b: T | undefined): T | undefined =>
  a === undefined || (b !== undefined && b.at > a.at) ? b : a;

/** One episode's record from its latest action of each type and its favourite (the first row names the episode). */
export function recordOf(rows: repo.LatestRow[]): EpisodeRecord {
  const first = rows[0]!;
  const favourite =
    first.favourite === null ? undefined : { value: first.favourite, at: first.favourite_at ?? new Date(0) };
  const acted = rows.filter((r): r is repo.LatestRow & { action: repo.ActionName } => r.action !== null);
  if (acted.length === 0) {
    // Only a favourite: the episode as the favourite names it.
    return {
      syncId: first.episode_hash,
      podcastUrl: first.podcast_url,
      podcastGuid: first.podcast_guid,
      episodeGuid: first.episode_guid ?? first.item_guid,
      title: first.title,
      publishedAt: first.published_at,
      enclosureUrl: first.episode_url,
      episodeUrl: first.link,
      played: { value: false, at: favourite!.at },
      favourite,
    };
  }
  return { ...stateOf(acted), ...(favourite && { favourite }) };
}

/** One episode's record from its latest action of each type. */
function stateOf(rows: (repo.LatestRow & { action: repo.ActionName })[]): EpisodeRecord {
  const by = new Map(rows.map((r) => [r.action, r]));
  const [play, isNew, download, del] = (['play', 'new', 'download', 'delete'] as const).map((a) => by.get(a));
  const latest = rows.reduce((a, b) => (b.at > a.at ? b : a));
  const named = play ?? latest;
  const record: EpisodeRecord = {
    syncId: named.episode_hash,
    podcastUrl: named.podcast_url,
    podcastGuid: rows.find((r) => r.podcast_guid !== null)?.podcast_guid ?? null,
    episodeGuid: rows.find((r) => r.episode_guid !== null)?.episode_guid ?? named.item_guid,
    title: named.title,
    publishedAt: named.published_at,
    enclosureUrl: named.episode_url,
    episodeUrl: named.link,
    // Played: the latest play reached the end, and no later "new" (AntennaPod's "mark unplayed") undid it.
    played: { value: false, at: latest.at },
  };
  if (play && play.position !== null) {
    record.position = { value: play.position, at: play.at };
    record.played = { value: isPlayed(play.position, play.total ?? play.duration), at: play.at };
  }
  if (isNew) {
    const newer = isNew.at > (play?.at ?? new Date(-8.64e15));
    record.isNew = { value: newer, at: newer ? isNew.at : play!.at };
    if (newer) record.played = { value: false, at: isNew.at };
  }
  const kept = later(download, del);
  if (kept) record.downloaded = { value: kept === download, at: kept.at };
  return record;
}

/**
 * A page of the user's episode records changed after `since`, and how many there are; `syncPoint` is
 * what to send as the next `since` (as for the episode actions: every later write is stamped after it).
 */
export async function page(
  db: Db,
  userId: number,
  q: { since?: Date | undefined; page: number; perPage: number },
): Promise<{ syncPoint: Date; total: number; records: EpisodeRecord[] }> {
  const r = await episodes.heldRead(db, userId, (tx) =>
    repo.latestActions(tx, userId, q.since, q.perPage, (q.page - 1) * q.perPage),
  );
  const grouped = new Map<string, repo.LatestRow[]>();
  for (const row of r.rows) grouped.set(row.episode_hash, [...(grouped.get(row.episode_hash) ?? []), row]);
  return {
    syncPoint: r.syncPoint,
    total: r.total,
    records: [...grouped.values()].map(recordOf),
  };
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

export type RecordOutcome =
  | { ok: true; syncId: string; podcastUrl: string; podcastGuid: string | null; enclosureUrl: string }
  | { ok: false; message: string };

/** An episode's sync id: the key of its enclosure URL, in the form of a UUID (as PostgreSQL writes it). */
export const syncIdOf = (enclosureUrl: string) =>
  urlHash(enclosureUrl).replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');

type Podcast = { url: string; guid: string | null };

type Subscription = { feedUrl: string; currentGuid: string } | undefined;

/** The podcast a record names: the user's subscription by any guid of its chain, else the URL sent. */
async function podcastOf(w: EpisodeIdentity, subscription: (guid: string) => Promise<Subscription>) {
  if (w.podcastGuid === undefined) return w.podcastUrl === undefined ? undefined : { url: w.podcastUrl, guid: null };
  const s = await subscription(w.podcastGuid);
  if (s) return { url: s.feedUrl, guid: s.currentGuid };
  // Not a subscription's guid (a podcast the user is not subscribed to): the URL sent names the podcast.
  if (w.podcastUrl !== undefined) return { url: w.podcastUrl, guid: w.podcastGuid };
  return 'Unknown podcast_guid: no subscription of this user has it';
}

/** The actions that say what a record says: each piece of state at its own time. */
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
    out.push(action('play', w.position.at, { position: w.position.value, ...(length !== null && { total: length }) }));
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
  const podcasts: (Podcast | string | undefined)[] = [];
  for (const w of writes) podcasts.push(await podcastOf(w, subscription));
  return podcasts;
}

/** What names each write's episode, to find it among the user's episodes and the feeds' items. */
const keysOf = (writes: EpisodeIdentity[], podcasts: (Podcast | string | undefined)[]): repo.EpisodeKey[] =>
  writes.map((w, i) => {
    const p = podcasts[i];
    const checked = typeof p === 'object' ? checkFeedUrl(p.url) : undefined;
    return {
      syncId: w.syncId ?? null,
      enclosureHash: w.enclosureUrl ? urlHash(w.enclosureUrl) : null,
      podcastHash: checked?.ok ? urlHash(checked.key) : null,
      guid: w.episodeGuid ?? null,
    };
  });

/** The episode a request names, from the podcast it names and what was found of its episode; or why not. */
function resolvedOf(w: EpisodeIdentity, named: Podcast | string | undefined, f: repo.FoundEpisode) {
  const known = f.podcast_url === null ? undefined : { url: f.podcast_url, guid: w.podcastGuid ?? null };
  // A known episode (by its sync id) keeps its podcast when the guid sent is not a subscription's.
  const p = named === undefined || (typeof named === 'string' && known) ? known : named;
  const enclosure = f.episode_url ?? (w.enclosureUrl || f.enclosure_url);
  if (typeof p === 'string') return p;
  if (p === undefined) return 'podcast_guid: required';
  if (!enclosure) return 'enclosure_url: required for an episode the server does not know';
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
 * sync id when the user has it, else by its enclosure URL, else by its guid among the podcast's items.
 */
export async function resolveEpisodes(
  db: Queryable,
  userId: number,
  named: EpisodeIdentity[],
): Promise<(ResolvedEpisode | string)[]> {
  const podcasts = await podcastsOf(db, userId, named);
  const found = await repo.findEpisodes(db, userId, keysOf(named, podcasts));
  return named.map((w, i) => resolvedOf(w, podcasts[i], found[i]!));
}

const outcomeOf = (e: ResolvedEpisode | string): RecordOutcome =>
  typeof e === 'string'
    ? { ok: false, message: e }
    : {
        ok: true,
        syncId: e.syncId,
        podcastUrl: e.podcastUrl,
        podcastGuid: e.podcastGuid,
        enclosureUrl: e.enclosureUrl,
      };

/**
 * Stores episode records as episode actions and favourites, each record on its own: one that cannot be
 * stored (its podcast or episode unknown, its URLs invalid, a favourite over the bound, or a reason the
 * door gives for a record it could not read) is reported with why, and the others are stored. One outcome
 * per record, in order.
 */
export async function save(
  db: Queryable,
  userId: number,
  sent: (RecordWrite | string)[],
  limits: { maxFavourites: number },
): Promise<RecordOutcome[]> {
  // A string is a record the door could not read: its reason is its outcome, and it names no episode.
  const writes = sent.map((w) => (typeof w === 'string' ? {} : w));
  const named = (await resolveEpisodes(db, userId, writes)).map((e, i) => {
    const refused = sent[i];
    return typeof refused === 'string' ? refused : e;
  });
  const outcomes = named.map(outcomeOf);
  const batch: { action: episodes.EpisodeAction; record: number }[] = [];
  writes.forEach((w, i) => {
    const e = named[i]!;
    if (typeof e === 'string') return;
    for (const action of actionsOf(w, e.podcastUrl, e.enclosureUrl, e.episodeGuid, e.duration)) {
      batch.push({ action, record: i });
    }
  });
  const { skipped } = await episodes.record(
    db,
    userId,
    batch.map((b) => b.action),
  );
  for (const s of skipped) outcomes[batch[s.index]!.record] = { ok: false, message: s.reason };
  const favourites = writes.flatMap((w, index) => {
    const e = named[index]!;
    return w.favourite && typeof e !== 'string' && outcomes[index]!.ok
      ? [{ episode: e, value: w.favourite.value, at: w.favourite.at, index }]
      : [];
  });
  const refused = await favouriteService.change(db, userId, favourites, limits.maxFavourites);
  for (const r of refused) outcomes[r.index] = { ok: false, message: r.reason };
  return outcomes;
}
