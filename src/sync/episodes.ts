import type { Queryable } from '../db/pool';
import * as records from '../listening/records';
import { urlHash } from '../subscriptions/urls';
import * as episodeRepo from './episode-repo';
import type { Decision, EpisodeAction } from './types';

// The episode actions of a sync batch, stored as the episode records of /v1/episodes store them (as the
// episode actions every door reads): a play here is a position to a gpodder app, and the other way round.

type Context = { tx: Queryable; userId: number; clientId: string | undefined };

/** The kinds of episode action whose latest time a sync action must be strictly later than. */
const COMPARED: Record<Exclude<EpisodeAction['action'], 'favourite'>, string[]> = {
  create: ['play', 'new', 'download', 'delete'],
  played: ['play', 'new'],
  unplayed: ['play', 'new'],
  position: ['play'],
};

/** The episode record write that says what the action says. */
function writeOf(a: EpisodeAction): records.RecordWrite {
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

/**
 * Favourites: what the favourites store keeps, once this server has one (docs/opa-sync.md, "favourite").
 * The one place to wire it: name the episode as episodeAction does, `setFavourite(c.tx, c.userId, episode,
 * a.favourite, a.occurredAt)`, and answer `ignored` when the stored favourite is as late or later.
 */
function favourite(_c: Context, _a: EpisodeAction & { action: 'favourite' }): Promise<Decision> {
  return Promise.resolve({ status: 'rejected', reason: 'favourites are not kept by this server yet' });
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
  const [saved] = await records.save(c.tx, c.userId, [writeOf(a)]);
  if (!saved) throw new Error('an episode record was not saved');
  if (!saved.ok) return { status: 'rejected', reason: saved.message };
  await episodeRepo.noteEpisode(c.tx, c.userId, saved.syncId, c.clientId ?? null);
  return naming('applied', saved.syncId);
}
