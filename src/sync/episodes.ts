import type { Queryable } from '../db/pool';
import * as episodes from '../episodes/service';
import { urlHash } from '../subscriptions/service';
import * as episodeRepo from './episode-repo';
import type { Decision, EpisodeAction } from './types';

// The episode actions of a sync batch, stored as the episode records of /v1/episodes store them (as the
// episode actions every door reads): a play here is a position to a gpodder app, and the other way round.

type Context = { tx: Queryable; userId: number; clientId: string | undefined; maxFavourites: number };

/** The kinds of episode action whose latest time a sync action must be strictly later than. */
const COMPARED: Record<Exclude<EpisodeAction['action'], 'favourite'>, string[]> = {
  create: ['play', 'new', 'download', 'delete'],
  played: ['play', 'new'],
  unplayed: ['play', 'new'],
  position: ['play'],
};

/** The episode record write that says what the action says. */
function writeOf(a: EpisodeAction): episodes.RecordWrite {
  const named = a.episode;
  const at = a.occurredAt;
  switch (a.action) {
    case 'create':
      return { ...named, isNew: { value: true, at } };
    case 'played':
    case 'unplayed':
      return { ...named, played: { value: a.action === 'played', at } };
    case 'position':
      return { ...named, position: { value: a.position, at } };
    case 'favourite':
      throw new Error('a favourite is not an episode record write');
  }
}

/** A favourite set or cleared: stored when it is later than the episode's stored favourite (docs/opa-sync.md). */
async function favourite(c: Context, a: EpisodeAction & { action: 'favourite' }): Promise<Decision> {
  const [e] = await episodes.resolveEpisodes(c.tx, c.userId, [a.episode]);
  if (e === undefined || typeof e === 'string') return { status: 'rejected', reason: e ?? 'no episode' };
  const stored = await episodes.favouriteTime(c.tx, c.userId, e.syncId);
  if (stored && stored >= a.occurredAt) return naming('ignored', e.syncId);
  const change = { episode: e, value: a.favourite, at: a.occurredAt, index: 0 };
  const [refused] = await episodes.changeFavourites(c.tx, c.userId, [change], c.maxFavourites);
  if (refused) return { status: 'rejected', reason: refused.reason };
  await episodeRepo.noteEpisode(c.tx, c.userId, e.syncId, c.clientId ?? null);
  return naming('applied', e.syncId);
}

const naming = (status: 'applied' | 'ignored', syncId: string): Decision => ({
  status,
  ref: { type: 'episode', syncId },
});

export async function episodeAction(c: Context, a: EpisodeAction): Promise<Decision> {
  if (a.action === 'favourite') return favourite(c, a);
  const e = a.episode;
  const hash = e.syncId ?? (e.enclosureUrl ? urlHash(e.enclosureUrl) : undefined);
  const times = hash === undefined ? [] : await episodeRepo.episodeStates(c.tx, c.userId, [hash]);
  const latest = times.filter((t) => COMPARED[a.action].includes(t.action));
  const known = times[0];
  if (known && (a.action === 'create' || latest.some((t) => t.at >= a.occurredAt))) {
    return naming('ignored', known.sync_id);
  }
  const [saved] = await episodes.save(c.tx, c.userId, [writeOf(a)], c);
  if (!saved) throw new Error('an episode record was not saved');
  if (!saved.ok) return { status: 'rejected', reason: saved.message };
  await episodeRepo.noteEpisode(c.tx, c.userId, saved.syncId, c.clientId ?? null);
  return naming('applied', saved.syncId);
}
