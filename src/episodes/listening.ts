import type { Queryable } from '../db/pool';
import * as episodes from './actions';
import { InvalidInput, NotFound } from '../errors';
import { urlHashOf } from '../subscriptions/service';
import * as player from './player-repo';
import { readStatesAmong, type EpisodeState } from './state';
import * as repo from './state-repo';

// Listening: a feed's episodes with where the user is in each (docs/web.md), from the items the fetcher
// read and the episode actions every app uploaded; and the web player's writes, which are episode actions
// like an app's (device "web").

/** The device the web page's player writes as. */
export const WEB_DEVICE = 'web';

/** One episode as its feed lists it (the feeds' item), and the user's state of it (none: no app said anything of it). */
export type Episode = {
  guid: string | null;
  title: string | null;
  enclosureUrl: string | null;
  enclosureType: string | null;
  publishedAt: Date | null;
  link: string | null;
  artworkUrl: string | null;
  season: number | null;
  episode: number | null;
  id: string;
  podcastTitle: string | null;
  /** The feed's artwork (an episode without its own shows it). */
  podcastArtworkUrl: string | null;
  feedUrl: string;
  /** The show notes, markup as the feed gives it (unsanitised): when episode() is asked for them, else null. */
  notes: string | null;
  /** Seconds: the state's length (the latest play's total, else the feed's), else the feed's. */
  duration: number | null;
  state: EpisodeState | undefined;
  /** The latest play: where it stopped, when, on which device; none if never played. */
  position: number | null;
  playedAt: Date | null;
  device: string | null;
  /** The one played rule's answer (played.ts), as every door gives it. */
  played: boolean;
  /** 0-1, when both the position and the length are known. */
  progress: number | null;
  downloaded: boolean;
  deleted: boolean;
};

/** An item and the user's state of it, as the pages show them (the state is presented, never decided, here). */
function episodeOf(r: repo.ItemRow, state: EpisodeState | undefined): Episode {
  const length = state?.length ?? r.duration;
  const position = state?.position;
  return {
    id: r.id,
    podcastTitle: r.podcast_title,
    podcastArtworkUrl: r.podcast_artwork_url,
    feedUrl: r.feed_url,
    notes: r.notes ?? null,
    guid: r.guid,
    title: r.title,
    enclosureUrl: r.enclosure_url,
    enclosureType: r.enclosure_type,
    publishedAt: r.published_at,
    duration: length,
    link: r.link,
    artworkUrl: r.artwork_url,
    season: r.season,
    episode: r.episode,
    state,
    position: position?.value ?? null,
    playedAt: position?.at ?? null,
    device: position?.device ?? null,
    played: state?.played.value ?? false,
    progress: position && length ? Math.min(1, position.value / length) : null,
    downloaded: state?.downloaded?.value === true,
    deleted: state?.downloaded?.value === false,
  };
}

/** The items with the user's state of each. */
export async function episodesOf(db: Queryable, userId: number, rows: repo.ItemRow[]): Promise<Episode[]> {
  const states = await readStatesAmong(
    db,
    userId,
    rows.map((r) => r.hashes),
  );
  return rows.map((r, i) => episodeOf(r, states[i]));
}

/** A page of the episodes of a feed the user has a record of, newest first, titles containing `search`. */
export async function feedEpisodes(
  db: Queryable,
  userId: number,
  feedUrl: string,
  query: { search: string; page: number; perPage: number },
): Promise<{ episodes: Episode[]; total: number }> {
  const hash = urlHashOf(feedUrl);
  if (hash === undefined) return { episodes: [], total: 0 };
  const { rows, total } = await repo.feedItems(db, userId, hash, {
    search: query.search,
    limit: query.perPage,
    offset: (query.page - 1) * query.perPage,
  });
  return { episodes: await episodesOf(db, userId, rows), total };
}

/** One episode of a feed the user has a record of, its show notes with it when asked for; NotFound otherwise. */
export async function episode(db: Queryable, userId: number, id: string, { notes = false } = {}): Promise<Episode> {
  const row = /^\d{1,18}$/.test(id) ? await repo.item(db, userId, id, notes) : undefined;
  if (!row) throw new NotFound();
  const [e] = await episodesOf(db, userId, [row]);
  return e!;
}

/** Of these items (ids), those the user has played, by the one rule. */
export async function playedAmong(db: Queryable, userId: number, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const shown = await episodesOf(db, userId, await repo.itemsWithIds(db, userId, ids));
  return new Set(shown.filter((e) => e.played).map((e) => e.id));
}

/** What to continue: the episodes the user played lately and has not finished, newest play first. */
export async function inProgress(db: Queryable, userId: number, limit = 50): Promise<Episode[]> {
  const rows = await repo.recentlyPlayedItems(db, userId, 200);
  return (await episodesOf(db, userId, rows)).filter((e) => !e.played && (e.position ?? 0) > 0).slice(0, limit);
}

/**
 * The web player's position, stored as an app's would be: a play from `started` to `position` of
 * `total` seconds, device "web", now.
 */
export async function savePosition(
  db: Queryable,
  userId: number,
  id: string,
  at: { started?: number | undefined; position: number; total?: number | undefined; when?: Date | undefined },
): Promise<void> {
  const e = await episode(db, userId, id);
  if (e.enclosureUrl === null) throw new NotFound();
  await episodes.record(db, userId, [
    {
      podcastUrl: e.feedUrl,
      episodeUrl: e.enclosureUrl,
      guid: e.guid ?? undefined,
      action: 'play',
      // The browser's time of the play (a position kept while offline is sent later); never ahead of now.
      at: at.when !== undefined && at.when < new Date() ? at.when : new Date(),
      started: at.started,
      position: at.position,
      total: at.total ?? e.duration ?? undefined,
      device: WEB_DEVICE,
    },
  ]);
}

/**
 * Marks the episode played: a play to its end (its length as known, else one second) that starts there, as
 * `/v1`'s and the sync draft's played marks are written: marking is no listening (docs/stats.md).
 */
export async function markPlayed(db: Queryable, userId: number, id: string): Promise<void> {
  const e = await episode(db, userId, id);
  const length = e.duration ?? 1;
  await savePosition(db, userId, id, { started: length, position: length, total: length });
}

/** The speeds the web player offers (0.5x to 3x). */
export const SPEEDS = [0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3] as const;

/** The speed the user plays the episode's podcast at on the web page: the one chosen for it, else their own. */
export async function speedFor(db: Queryable, userId: number, e: Episode, personal: number): Promise<number> {
  const hash = urlHashOf(e.feedUrl);
  return (hash === undefined ? undefined : await player.speedOf(db, userId, hash)) ?? personal;
}

const checkSpeed = (speed: number) => {
  if (!(SPEEDS as readonly number[]).includes(speed)) throw new InvalidInput(`speed: one of ${SPEEDS.join(', ')}`);
};

/** Keeps the speed for the podcast of the episode `id` (one of SPEEDS, else an InvalidInput). */
export async function setSpeed(db: Queryable, userId: number, id: string, speed: number): Promise<void> {
  checkSpeed(speed);
  const e = await episode(db, userId, id);
  const hash = urlHashOf(e.feedUrl);
  if (hash) await player.setSpeed(db, userId, hash, speed, (await playerSettings(db, userId)).speed);
}

/** The skip lengths the web player offers, back and forward, in seconds. */
export const SKIPS = { back: [5, 10, 15, 30, 45, 60], forward: [10, 15, 30, 45, 60, 90, 120] } as const;
export const DEFAULT_PLAYER: player.PlayerSettings = { back: 10, forward: 30, speed: 1 };

/** The user's web player: skip lengths (10 s back and 30 s forward) and own speed (1), unless they chose others. */
export async function playerSettings(db: Queryable, userId: number): Promise<player.PlayerSettings> {
  return (await player.settingsOf(db, userId)) ?? DEFAULT_PLAYER;
}

/** Keeps the user's skip lengths (each one of SKIPS) and own speed (one of SPEEDS), else an InvalidInput. */
export async function setPlayerSettings(db: Queryable, userId: number, settings: player.PlayerSettings): Promise<void> {
  for (const way of ['back', 'forward'] as const) {
    const allowed: readonly number[] = SKIPS[way];
    if (!allowed.includes(settings[way])) throw new InvalidInput(`skip ${way}: one of ${allowed.join(', ')} seconds`);
  }
  checkSpeed(settings.speed);
  await player.setSettings(db, userId, settings);
}
