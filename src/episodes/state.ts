import type { Queryable } from '../db/pool';
import { lengthOf, playedOf } from './played';
import { STATE_ACTIONS, stateRows, type StateAction, type StateRow } from './state-repo';

// Episode state (docs/glossary.md, docs/decisions/episode-state.md): what one user's apps together say of
// one episode, derived from the stored actions by `stateOf` and nowhere else. Every reader of an
// episode's state (/v1/episodes, the sync draft, the web page's episodes, Continue, Up next, favourites)
// gets it from `readStates` or `readStatesAmong` below; each door presents it in its own shape, none
// derives it again. Played is the rule's (played.ts).

/** A value of an episode's state, the time (the app's) it took that value, and the device that said so. */
export type Stamped<T> = { value: T; at: Date; device?: string | null };

export type EpisodeState = {
  /** The sync id: the key of the enclosure URL the apps name the episode by. */
  syncId: string;
  podcastUrl: string;
  /** The guid of the user's subscription to the podcast; none when the podcast is not one. */
  podcastGuid: string | null;
  episodeGuid: string | null;
  enclosureUrl: string;
  /** What the podcast's feed lists for the episode, when a feed lists it. */
  title: string | null;
  publishedAt: Date | null;
  episodeUrl: string | null;
  /** Seconds: the latest play's total when the app sent one, else the feed's duration. */
  length: number | null;
  position?: Stamped<number>;
  played: Stamped<boolean>;
  isNew?: Stamped<boolean>;
  downloaded?: Stamped<boolean>;
  favourite?: Stamped<boolean>;
  /** The server's change stamp of the episode's latest change: what `since` compares. */
  changed: Date;
};

const latest = <T extends { at: Date }>(a: T | undefined, b: T): T => (a === undefined || b.at > a.at ? b : a);

/** Of the rows, the latest of each type (the rows of several keys of one episode may name a type twice). */
function latestByAction(rows: StateRow[]): Map<StateAction, StateRow> {
  const by = new Map<StateAction, StateRow>();
  for (const r of rows) by.set(r.action, latest(by.get(r.action), r));
  return by;
}

const stamped = <T>(value: T, r: StateRow): Stamped<T> => ({ value, at: r.at, device: r.device });

/** One episode's state from its stored rows (at least one): each piece from its latest action. */
export function stateOf(rows: StateRow[]): EpisodeState {
  const by = latestByAction(rows);
  const [play, marked, download, del, favourite] = STATE_ACTIONS.map((a) => by.get(a));
  const actions = [play, marked, download, del].filter((r) => r !== undefined);
  const newest = (actions.length > 0 ? actions : rows).reduce((a, b) => latest(a, b));
  const named = play ?? newest;
  const duration = play?.duration ?? rows.find((r) => r.duration !== null)?.duration ?? null;
  const played = playedOf(play, marked, duration);
  // The action that decided played (a later "new", else the play), whose device said so.
  const decidedBy = marked && (!play || marked.at > play.at) ? marked : play;
  const kept = download && del ? latest(download, del) : (download ?? del);
  return {
    syncId: named.episode_hash,
    podcastUrl: named.podcast_url,
    podcastGuid: rows.find((r) => r.podcast_guid !== null)?.podcast_guid ?? null,
    episodeGuid: rows.find((r) => r.episode_guid !== null)?.episode_guid ?? named.item_guid,
    enclosureUrl: named.episode_url,
    title: named.title,
    publishedAt: named.published_at,
    episodeUrl: named.link,
    length: lengthOf(play?.total, duration),
    ...(play && play.position !== null && { position: stamped(play.position, play) }),
    played: played ? { ...played, device: decidedBy?.device ?? null } : { value: false, at: newest.at, device: null },
    ...(marked && {
      isNew: marked.at > (play?.at ?? new Date(-8.64e15)) ? stamped(true, marked) : stamped(false, play!),
    }),
    ...(kept && { downloaded: stamped(kept === download, kept) }),
    ...(favourite && { favourite: { value: favourite.favourite === true, at: favourite.at, device: null } }),
    changed: rows.map((r) => r.changed).reduce((a, b) => (b > a ? b : a)),
  };
}

/** The user's rows of these episodes (sync ids), by sync id. */
async function rowsByKey(db: Queryable, userId: number, hashes: string[]): Promise<Map<string, StateRow[]>> {
  const grouped = new Map<string, StateRow[]>();
  for (const r of await stateRows(db, userId, [...new Set(hashes)])) {
    grouped.set(r.episode_hash, [...(grouped.get(r.episode_hash) ?? []), r]);
  }
  return grouped;
}

/** The one reader: the state of each of these episodes (sync ids) the user has, by sync id. */
export async function readStates(db: Queryable, userId: number, syncIds: string[]): Promise<Map<string, EpisodeState>> {
  const grouped = await rowsByKey(db, userId, syncIds);
  return new Map([...grouped].map(([k, rows]) => [k, stateOf(rows)]));
}

/**
 * The state of each of these episodes, each named by several keys (a feed's item: its enclosure's, and
 * those the user's actions name it by); none where the user has nothing of it.
 */
export async function readStatesAmong(
  db: Queryable,
  userId: number,
  keys: string[][],
): Promise<(EpisodeState | undefined)[]> {
  const grouped = await rowsByKey(db, userId, keys.flat());
  return keys.map((ks) => {
    const rows = ks.flatMap((k) => grouped.get(k) ?? []);
    return rows.length === 0 ? undefined : stateOf(rows);
  });
}
