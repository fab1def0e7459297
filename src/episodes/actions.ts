import { streamInTransaction, withTransaction, type Db, type Queryable } from '../db/pool';
import { InvalidInput, missingUser, type RefusedItem } from '../errors';
import { DEVICE_ID } from '../devices/service';
import * as subscriptions from '../subscriptions/service';
import { checkFeedUrl, urlHash } from '../subscriptions/service';
import * as repo from './repo';

export const ACTIONS = ['download', 'play', 'delete', 'new'] as const;
export type ActionName = (typeof ACTIONS)[number];

/** What a user did with an episode, as a client reports it (positions in whole seconds). */
export type EpisodeAction = {
  podcastUrl: string;
  episodeUrl: string;
  guid?: string | undefined;
  action: ActionName;
  /** The client's time of the action. */
  at: Date;
  started?: number | undefined;
  position?: number | undefined;
  total?: number | undefined;
  device?: string | undefined;
};

/** A stored action, and the change stamp of the write that stored it. */
export type StoredAction = EpisodeAction & { changed: Date };

/** Actions in one batch at most: clients send 30 (AntennaPod, Kasts) or 100 (gPodder). */
export const MAX_ACTIONS = 5000;

/** The most seconds a play's started, position or total can be: what the columns (integer) hold. */
const MAX_SECONDS = 2 ** 31 - 1;

/** A device or guid sent empty is none: Kasts in Nextcloud mode writes "device":"" on every action. */
const named = (v: string | undefined): string | undefined => (v === '' ? undefined : v);

/** One action as it is stored, or why it is refused. */
function checkAction(a: EpisodeAction): repo.ActionWrite | string {
  const podcast = checkFeedUrl(a.podcastUrl);
  if (!podcast.ok) return `podcast: ${podcast.problem}`;
  if (a.episodeUrl === '' || a.episodeUrl.length > 4096) return 'episode: a URL of 1-4096 characters';
  if (a.action === 'play' && a.position === undefined) return 'position: required for play';
  const device = named(a.device);
  if (device !== undefined && !DEVICE_ID.test(device)) return 'device: 1-64 characters of A-Z a-z 0-9 . _ -';
  const play = a.action === 'play';
  // Refused here, not by the statement: a value the columns cannot hold would fail the whole batch.
  for (const k of ['position', 'started', 'total'] as const) {
    const v = a[k];
    if (play && v !== undefined && !(Number.isInteger(v) && v >= 0 && v <= MAX_SECONDS)) {
      return `${k}: whole seconds, 0 to ${MAX_SECONDS}`;
    }
  }
  return {
    podcastUrl: podcast.feedUrl,
    podcastHash: urlHash(podcast.key),
    episodeUrl: a.episodeUrl,
    episodeHash: urlHash(a.episodeUrl),
    guid: named(a.guid) ?? null,
    action: a.action,
    at: a.at,
    started: play ? (a.started ?? null) : null,
    position: play ? (a.position ?? null) : null,
    total: play ? (a.total ?? null) : null,
    device: device ?? null,
  };
}

/** The actions of a batch the rules take, and the ones they refuse with their index and reason. */
function checkBatch(actions: EpisodeAction[]) {
  const rows: repo.ActionWrite[] = [];
  const skipped: RefusedItem[] = [];
  const rewritten = new Map<string, string>();
  actions.forEach((a, index) => {
    const row = checkAction(a);
    if (typeof row === 'string') {
      skipped.push({ index, reason: row });
      return;
    }
    rows.push(row);
    if (row.podcastUrl !== a.podcastUrl) rewritten.set(a.podcastUrl, row.podcastUrl);
  });
  return { rows, skipped, rewritten };
}

/**
 * Stores a batch of actions, one by one as far as their rules go: an action the rules refuse is skipped
 * (named in `skipped` with its index and reason) and the rest are stored, because apps re-send a whole
 * batch after any failure and one bad action would block them for good. One statement whatever the
 * batch's size. An action already stored (same podcast, episode, action, time, device and position) is
 * not stored again: clients retry whole batches. Returns the stamp of the write, how many actions were
 * new, and the podcast URLs rewritten by the URL rules.
 */
export async function record(
  db: Queryable,
  userId: number,
  actions: EpisodeAction[],
): Promise<{ changedAt: Date; stored: number; rewritten: [string, string][]; skipped: RefusedItem[] }> {
  const { rows, skipped, rewritten } = checkBatch(actions);
  const written =
    rows.length === 0
      ? { at: await subscriptions.lastChange(db, userId), stored: 0 }
      : await repo.insertActions(db, userId, rows);
  return { changedAt: written.at, stored: written.stored, rewritten: [...rewritten], skipped };
}

/** Actions in a page of a download: about 125 KB of JSON, what the process and PostgreSQL hold of one. */
export const DOWNLOAD_PAGE = 500;

/**
 * The user's actions stored at or after `since` (all without it), in the order stored; `aggregated`: only
 * each episode's latest action of each type (by the action's own time). `podcast` keeps one podcast's
 * actions, under any URL its subscription has had; `device` one device's and those that name no device
 * (the account's: an app that uploads without naming itself still reads its own with its device id). They
 * come a page at a time, as the elements of a JSON array in the gpodder.net episode-action format (the
 * interchange format of episode actions, which the gpodder and Nextcloud doors serve as they are), written
 * by PostgreSQL: each yielded piece is a page's actions, comma-separated, never empty. What it returns at
 * the end is `readAt`, the clock at the last page's read, taken while no write of the user was under way:
 * every action not yielded has a later stamp. A client can so be given a `since` close to now, and one that syncs until it has
 * caught up with its clock (Kasts) stops. A download whose consumer stops early (`return()`) reads no more.
 */
export async function* since(
  db: Db,
  userId: number,
  q: { since?: Date | undefined; podcast?: string | undefined; device?: string | undefined; aggregated?: boolean },
): AsyncGenerator<string, Date, undefined> {
  const filter: repo.ActionFilter = { device: named(q.device) };
  if (q.podcast !== undefined) {
    const podcast = checkFeedUrl(q.podcast);
    if (!podcast.ok) throw new InvalidInput(`Invalid podcast: ${podcast.problem}`);
    filter.podcastHash = urlHash(podcast.key);
    filter.subscriptionId = await subscriptions.recordIdByUrlHash(db, userId, filter.podcastHash);
  }
  const aggregated = q.aggregated === true;
  let after = repo.cursorAt(q.since);
  /** Pages from `after` on, to the last; returns the last. */
  async function* pages(on: Queryable): AsyncGenerator<string, repo.ActionPage, undefined> {
    for (;;) {
      const page = await repo.actionPage(on, userId, filter, aggregated, after, DOWNLOAD_PAGE);
      after = page.last ?? after;
      if (page.json !== '') yield page.json;
      if (!page.more) return page;
    }
  }
  const last = yield* pages(db);
  if (last.settled) return last.readAt;
  // A write of the user was under way at the end, or committed meanwhile: wait for it, then read the rest.
  return yield* streamInTransaction(db, async function* (tx) {
    await repo.holdWriters(tx, userId);
    const held = yield* pages(tx);
    if (!held.settled) throw missingUser(userId);
    return held.readAt;
  });
}

const storedOf = (x: repo.ActionRow): StoredAction => ({
  podcastUrl: x.podcast_url,
  episodeUrl: x.episode_url,
  guid: x.episode_guid ?? undefined,
  action: x.action as ActionName,
  at: x.at,
  started: x.started ?? undefined,
  position: x.position ?? undefined,
  total: x.total ?? undefined,
  device: x.device_id ?? undefined,
  changed: x.changed,
});

/**
 * Reads the user's episode state while no write of theirs is under way, for a paged view: `syncPoint` is
 * what to send as the next `since` (one millisecond before the read's clock, in whole milliseconds: every
 * later write is stamped after it).
 */
export async function heldRead<T extends { readAt: Date }>(
  db: Db,
  userId: number,
  read: (tx: Queryable) => Promise<T>,
): Promise<T & { syncPoint: Date }> {
  const r = await withTransaction(db, async (tx) => {
    await repo.holdWriters(tx, userId);
    return read(tx);
  });
  return { ...r, syncPoint: new Date(Math.floor(r.readAt.getTime()) - 1) };
}

export type { HistoryCursor } from './repo';

/**
 * The user's actions in the order stored, `limit` at a time, each page after the last action of the one
 * before (`next`, none after the last page), with the podcast's guid when the action belongs to a
 * subscription: the archive's read of the whole history.
 */
export async function history(
  db: Queryable,
  userId: number,
  after: repo.HistoryCursor | undefined,
  limit: number,
): Promise<{ actions: (StoredAction & { podcastGuid?: string })[]; next: repo.HistoryCursor | undefined }> {
  const rows = await repo.actionsAfter(db, userId, after, limit);
  const last = rows.at(-1);
  return {
    actions: rows.map((x) => ({ ...storedOf(x), ...(x.podcast_guid !== null && { podcastGuid: x.podcast_guid }) })),
    next: rows.length === limit && last ? { changed: last.changed, id: last.id } : undefined,
  };
}

/** Removes the actions of a subscription record's podcast (with the record's deletion, stamped `stamp`). */
export const forgetPodcast = (db: Queryable, userId: number, subscriptionId: number, stamp: Date): Promise<void> =>
  repo.deleteActionsOf(db, userId, subscriptionId, stamp);

/** The user's newest plays (what the web page's activity summary shows), newest first. */
export async function recentPlays(
  db: Queryable,
  userId: number,
  limit: number,
): Promise<(StoredAction & { podcastTitle: string | null; episodeTitle: string | null })[]> {
  const rows = await repo.recentPlays(db, userId, limit);
  return rows.map((x) => ({ ...storedOf(x), podcastTitle: x.podcast_title, episodeTitle: x.episode_title }));
}

/** Forgets every action of the user (a start-over, in the caller's transaction); returns how many. */
export const forgetAll = (tx: Queryable, userId: number): Promise<number> => repo.deleteAllActions(tx, userId);
