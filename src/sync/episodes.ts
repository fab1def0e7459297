import { isRefusal } from '../errors';
import type { Queryable } from '../db/pool';
import * as episodes from '../episodes/service';
import { urlHash } from '../subscriptions/service';
import * as episodeRepo from './episode-repo';
import type { Decision, EpisodeAction } from './types';

// The episode actions of a sync batch, stored as the episode records of /v1/episodes store them (as the
// episode actions every door reads): a play here is a position to a gpodder app, and the other way round.

type Context = { tx: Queryable; userId: number; clientId: string | undefined; maxFavourites: number };

/**
 * A refusal of the episodes' rules, which name the fields as `/v1/episodes` has them, with the names this
 * draft has them under (`data.podcast_guid`), as its own reasons do.
 */
const rejected = (reason: string): Decision => ({
  status: 'rejected',
  reason: reason.replace(/\b(podcast_guid|podcast_url|enclosure_url|episode_guid|sync_id)\b/g, 'data.$1'),
});

/**
 * Whether the state already says as late or later what the action would change: the action is taken only
 * when strictly later (the app's times).
 */
function outdated(action: Exclude<EpisodeAction['action'], 'favourite'>, s: episodes.EpisodeState, at: Date): boolean {
  const asLate = (t: Date | undefined) => t !== undefined && t >= at;
  switch (action) {
    case 'create':
      return true;
    case 'played':
      // A "new" at the very time of a play loses to it (the played rule): only a later one outdates it.
      return asLate(s.position?.at) || (s.isNew?.value === true && s.isNew.at > at);
    case 'unplayed':
      // The latest play's and the latest "new"'s: the actions the played rule reads.
      return asLate(s.position?.at) || asLate(s.isNew?.at);
    case 'position':
      return asLate(s.position?.at);
  }
}

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
  if (e === undefined || isRefusal(e)) return rejected(e?.reason ?? 'no episode');
  const stored = await episodes.favouriteTime(c.tx, c.userId, e.syncId);
  if (stored && stored >= a.occurredAt) return naming('ignored', e.syncId);
  const change = { episode: e, value: a.favourite, at: a.occurredAt, index: 0 };
  const [refused] = await episodes.changeFavourites(c.tx, c.userId, [change], c.maxFavourites);
  if (refused) return rejected(refused.reason);
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
  const [known] = hash === undefined ? [] : (await episodes.readStates(c.tx, c.userId, [hash])).values();
  // A create of a known episode is ignored: the draft's create names an episode, it changes nothing.
  if (known && outdated(a.action, known, a.occurredAt)) {
    return naming('ignored', known.syncId);
  }
  const [saved] = await episodes.save(c.tx, c.userId, [writeOf(a)], c);
  if (!saved) throw new Error('an episode record was not saved');
  if (isRefusal(saved)) return rejected(saved.reason);
  await episodeRepo.noteEpisode(c.tx, c.userId, saved.syncId, c.clientId ?? null);
  return naming('applied', saved.syncId);
}
