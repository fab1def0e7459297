import type { Queryable } from '../db/pool';
import { storable, UNSTORABLE_REASON } from '../text';
import { parseTimestamp } from '../timestamps';
import type { RefusedItem } from '../errors';
import { ACTIONS, record, type EpisodeAction } from './actions';

// The gpodder.net episode-action format: what apps upload and download over gpodder.net v2 and the
// Nextcloud dialect, and what other sync servers (gpodder.net, Nextcloud, opodsync) give when their history
// is imported. One reader for all of them.

const seconds = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined;

/**
 * One action in the interchange format as the domain takes it, or why it is refused. The action in any
 * case (the Nextcloud app has written upper case); a timestamp with no zone is UTC, a fraction, `Z` or an
 * offset is honoured, missing or empty is `received`; `started`, `position` and `total` only on a play,
 * where -1 or null ("unknown", as the Nextcloud app and gpodder.net write it) is left out.
 */
export function parseInterchangeAction(raw: unknown, received: Date): EpisodeAction | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not an object';
  const a = raw as Record<string, unknown>;
  const problems: string[] = [];
  const str = (k: string, required: boolean): string | undefined => {
    const v = a[k];
    if (v === undefined || v === null) {
      if (required) problems.push(`${k} is required`);
      return undefined;
    }
    if (typeof v !== 'string') problems.push(`${k} must be a string`);
    else if (!storable(v)) problems.push(`${k} ${UNSTORABLE_REASON}`);
    return typeof v === 'string' ? v : undefined;
  };
  const podcastUrl = str('podcast', true);
  const episodeUrl = str('episode', true);
  const guid = str('guid', false);
  const device = str('device', false);
  const action = str('action', true)?.toLowerCase();
  if (action !== undefined && !(ACTIONS as readonly string[]).includes(action)) {
    problems.push(`action: one of ${ACTIONS.join(', ')}`);
  }
  const stamp = str('timestamp', false);
  const at = stamp === undefined || stamp === '' ? received : parseTimestamp(stamp, { zonelessIsUtc: true });
  if (!at) {
    problems.push(
      'timestamp: YYYY-MM-DDTHH:MM:SS in the years 1 to 9999, optionally with a fraction and Z or an offset',
    );
  }
  const out = { podcastUrl, episodeUrl, guid, action, at, device } as EpisodeAction;
  if (action === 'play') {
    out.position = seconds(a.position);
    if (out.position === undefined) problems.push('position: seconds, at least 0, required for play');
    out.started = seconds(a.started);
    out.total = seconds(a.total);
  }
  return problems.length > 0 ? problems.join('; ') : out;
}

/**
 * The intake of actions in the interchange format, for every door and importer that takes them: reads each
 * (received: the time of an action without one), stores what the rules take as `record` does, and names
 * each refused one, by its index in `raw`, whether it could not be read or the rules refused it. Returns
 * what `record` returns, and the actions read (in order).
 */
export async function recordInterchange(db: Queryable, userId: number, raw: readonly unknown[], received: Date) {
  const actions: EpisodeAction[] = [];
  const indexOf: number[] = [];
  const skipped: RefusedItem[] = [];
  raw.forEach((x, index) => {
    const parsed = parseInterchangeAction(x, received);
    if (typeof parsed === 'string') skipped.push({ index, reason: parsed });
    else {
      actions.push(parsed);
      indexOf.push(index);
    }
  });
  const done = await record(db, userId, actions);
  for (const s of done.skipped) skipped.push({ index: indexOf[s.index]!, reason: s.reason });
  skipped.sort((a, b) => a.index - b.index);
  return { ...done, actions, skipped };
}
