import { Refusal } from '../../errors';
import { parseGuid } from '../../subscriptions/service';
import type { EpisodeRef, SyncAction } from '../../sync/service';
import { storable, unstorableAt, UNSTORABLE_REASON } from '../../text';
import { parseTimestamp } from '../../timestamps';

// One action of a POST /api/v1/sync batch, read leniently: whatever is wrong with it rejects it alone,
// with a reason that names the field (docs/opa-sync.md).

type Raw = Record<string, unknown>;
/** Within this file only: the reading stops at the first fault, which `parseAction` returns as a Refusal. */
class Unreadable extends Error {}

const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

function str(o: Raw, key: string, where: string, required: true): string;
function str(o: Raw, key: string, where: string, required: false): string | undefined;
function str(o: Raw, key: string, where: string, required: boolean): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) {
    if (required) throw new Unreadable(`Missing ${where}${key}`);
    return undefined;
  }
  if (typeof v !== 'string') throw new Unreadable(`Invalid ${where}${key}: not a string`);
  return v;
}

function uuid(o: Raw, key: string, where: string, required: boolean): string | undefined {
  const v = required ? str(o, key, where, true) : str(o, key, where, false);
  if (v === undefined) return undefined;
  const parsed = parseGuid(v);
  if (!parsed) throw new Unreadable(`Invalid ${where}${key}: not a UUID`);
  return parsed;
}

function subscriptionAction(action: string, data: Raw) {
  switch (action) {
    case 'subscribe':
      return {
        action,
        feedUrl: str(data, 'feed_url', 'data.', true),
        guid: str(data, 'guid', 'data.', false),
      } as const;
    case 'unsubscribe':
      return { action, syncId: uuid(data, 'sync_id', 'data.', true)! } as const;
    case 'update': {
      const change = { feedUrl: str(data, 'feed_url', 'data.', false), guid: str(data, 'guid', 'data.', false) };
      if (change.feedUrl === undefined && change.guid === undefined)
        throw new Unreadable('Missing data.guid or data.feed_url');
      return { action, syncId: uuid(data, 'sync_id', 'data.', true)!, ...change } as const;
    }
    default:
      throw new Unreadable(`Unknown action for type subscription: ${action} (subscribe, unsubscribe, update)`);
  }
}

function episodeRef(data: Raw): EpisodeRef {
  const ref = {
    syncId: uuid(data, 'sync_id', 'data.', false),
    podcastGuid: uuid(data, 'podcast_guid', 'data.', false),
    podcastUrl: str(data, 'podcast_url', 'data.', false),
    enclosureUrl: str(data, 'enclosure_url', 'data.', false),
    episodeGuid: str(data, 'episode_guid', 'data.', false),
  };
  if (ref.syncId === undefined && ref.enclosureUrl === undefined)
    throw new Unreadable('Missing data.sync_id or data.enclosure_url');
  return ref;
}

function episodeAction(action: string, data: Raw) {
  const episode = episodeRef(data);
  switch (action) {
    case 'create':
    case 'played':
    case 'unplayed':
      return { action, episode } as const;
    case 'position': {
      const p = data.position;
      if (p === undefined || p === null) throw new Unreadable('Missing data.position');
      if (typeof p !== 'number' || !Number.isInteger(p) || p < 0 || p > 2 ** 31 - 1)
        throw new Unreadable('Invalid data.position: whole seconds, 0 or more');
      return { action, episode, position: p } as const;
    }
    case 'favourite':
    case 'favorite': {
      const v = data.favourite ?? data.favorite ?? true;
      if (typeof v !== 'boolean') throw new Unreadable('Invalid data.favourite: not a boolean');
      return { action: 'favourite', episode, favourite: v } as const;
    }
    default:
      throw new Unreadable(
        `Unknown action for type episode: ${action} (create, played, unplayed, position, favourite)`,
      );
  }
}

/** The action as the domain takes it, or the refusal that says which field is wrong. */
export function parseAction(raw: unknown): SyncAction | Refusal {
  try {
    return readAction(raw);
  } catch (err) {
    if (err instanceof Unreadable) return new Refusal(err.message);
    throw err;
  }
}

function readAction(raw: unknown): SyncAction {
  if (!isObject(raw)) throw new Unreadable('An action must be an object');
  // Any string of the action, known field or not, a key too (src/text.ts).
  const unstorable = unstorableAt(raw);
  if (unstorable !== undefined) throw new Unreadable(`Invalid ${unstorable}: ${UNSTORABLE_REASON}`);
  const type = str(raw, 'type', '', true);
  const action = str(raw, 'action', '', true);
  const actionId = uuid(raw, 'action_id', '', true)!;
  const occurredAt = parseTimestamp(str(raw, 'occurred_at', '', true));
  if (!occurredAt)
    throw new Unreadable('Invalid occurred_at: expected an RFC 3339 date-time such as 2026-07-11T15:30:00.1Z');
  const data = raw.data ?? {};
  if (!isObject(data)) throw new Unreadable('Invalid data: not an object');
  const base = { actionId, occurredAt };
  // "subscriptions" and "episodes" too: the draft names the types both ways (docs/opa-sync.md).
  if (type === 'subscription' || type === 'subscriptions')
    return { ...base, type: 'subscription', ...subscriptionAction(action, data) };
  if (type === 'episode' || type === 'episodes') return { ...base, type: 'episode', ...episodeAction(action, data) };
  throw new Unreadable(`Unknown type: ${type} (subscription, episode)`);
}

/** What a rejected action is answered with: its type, action and id as sent (strings only). */
export function echo(raw: unknown): { type?: string; action?: string; action_id?: string } {
  if (!isObject(raw)) return {};
  const out: { type?: string; action?: string; action_id?: string } = {};
  for (const k of ['type', 'action', 'action_id'] as const) {
    const v = raw[k];
    if (typeof v === 'string' && storable(v)) out[k] = v;
  }
  return out;
}
