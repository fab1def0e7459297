import { Router, type Request, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import * as reports from '../devices/reports';
import * as episodes from '../episodes/service';
import { currentUser } from '../http/credentials';
import { BadRequest } from './errors';
import { route } from '../http/method';
import { parseTimestamp } from '../http/timestamps';
import { anyJson } from './http';
import { NEXTCLOUD_PREFIXES } from './nextcloud';
import { clientTimestamp, parseSince } from './sync-time';

const seconds = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined;

/** One action of a request body as the domain takes it, or why it is refused. */
function parseAction(raw: unknown, received: Date): episodes.EpisodeAction | string {
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
    return typeof v === 'string' ? v : undefined;
  };
  const podcastUrl = str('podcast', true);
  const episodeUrl = str('episode', true);
  const guid = str('guid', false);
  const device = str('device', false);
  // Any case (the Nextcloud app has written upper case): emitted in lower case.
  const action = str('action', true)?.toLowerCase();
  if (action !== undefined && !(episodes.ACTIONS as readonly string[]).includes(action)) {
    problems.push(`action: one of ${episodes.ACTIONS.join(', ')}`);
  }
  // No zone is UTC; a fraction, Z or an offset is honoured; missing or empty is the time received.
  const stamp = str('timestamp', false);
  const at = stamp === undefined || stamp === '' ? received : parseTimestamp(stamp, { zonelessIsUtc: true });
  if (!at) problems.push('timestamp: YYYY-MM-DDTHH:MM:SS, optionally with a fraction and Z or an offset');
  const out = { podcastUrl, episodeUrl, guid, action, at, device } as episodes.EpisodeAction;
  if (action === 'play') {
    out.position = seconds(a.position);
    if (out.position === undefined) problems.push('position: seconds, at least 0, required for play');
    // Clients write -1 for "unknown": left out.
    out.started = seconds(a.started);
    out.total = seconds(a.total);
  }
  return problems.length > 0 ? problems.join('; ') : out;
}

/**
 * The actions of a request body: the ones to store, and the ones skipped with their index in the body and
 * the reason. A body that is not a JSON array, or over the limit, is a 400.
 */
function parseActions(body: unknown): { actions: episodes.EpisodeAction[]; at: number[]; skipped: episodes.Skipped[] } {
  const list = body ?? [];
  if (!Array.isArray(list)) throw new BadRequest('The body must be a JSON array of actions');
  if (list.length > episodes.MAX_ACTIONS)
    throw new BadRequest(`At most ${episodes.MAX_ACTIONS} actions in one request`);
  const received = new Date();
  const actions: episodes.EpisodeAction[] = [];
  const at: number[] = [];
  const skipped: episodes.Skipped[] = [];
  list.forEach((raw: unknown, index) => {
    const parsed = parseAction(raw, received);
    if (typeof parsed === 'string') {
      skipped.push({ index, reason: parsed });
      return;
    }
    actions.push(parsed);
    at.push(index);
  });
  return { actions, at, skipped };
}

const flag = (v: unknown) => v === 'true' || v === '1';
const text = (v: unknown, name: string): string | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new BadRequest(`Invalid ${name}: give it once`);
  return v;
};

/** Episode actions over gpodder.net v2 and the Nextcloud gpoddersync dialect. */
export function episodeRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  /**
   * Stores what it can of a batch and answers 200 (apps re-send a whole batch after any failure): what was
   * skipped is logged with its index and reason, and named in the answer's extra key `skipped`.
   */
  const upload = async (req: Request) => {
    const userId = currentUser(req);
    const parsed = parseActions(req.body);
    const done = await episodes.record(ctx.db, userId, parsed.actions);
    const skipped = [...parsed.skipped, ...done.skipped.map((s) => ({ ...s, index: parsed.at[s.index]! }))].sort(
      (a, b) => a.index - b.index,
    );
    // The device of the report: the one the actions name, if they name one (Nextcloud-mode apps name none).
    const named = new Set((req.body as unknown[]).map((a) => (a as { device?: unknown } | null)?.device));
    const only = named.size === 1 ? [...named][0] : undefined;
    const device = typeof only === 'string' ? only : undefined;
    if (skipped.length > 0) {
      ctx.logger.warn(
        { component: 'gpodder', userId, device, skipped: skipped.slice(0, 20), count: skipped.length },
        'episode actions skipped',
      );
    }
    await reports.note(ctx.db, userId, {
      device,
      client: req.headers['user-agent'],
      kind: 'episode actions',
      sent: { actions: parsed.actions.length + parsed.skipped.length },
      skipped: skipped.map((s) => ({ item: `action ${s.index}`, reason: s.reason })),
    });
    return {
      timestamp: clientTimestamp(done.changedAt),
      update_urls: done.rewritten,
      ...(skipped.length > 0 && { skipped }),
    };
  };
  /** `{"actions":[...],"timestamp":T}`: the actions come as JSON text, written by PostgreSQL as clients read them. */
  const download: RequestHandler = async (req, res) => {
    const query = req.query as Record<string, unknown>;
    const found = await episodes.since(ctx.db, currentUser(req), {
      since: parseSince(query.since),
      podcast: text(query.podcast, 'podcast'),
      device: text(query.device, 'device'),
      aggregated: flag(query.aggregated),
    });
    res.type('json').send(`{"actions":[${found.json}],"timestamp":${clientTimestamp(found.readAt)}}`);
  };
  route(
    r,
    '/api/2/episodes/:user.json',
    {
      get: download,
      post: [
        anyJson,
        async (req, res) => {
          res.json(await upload(req));
        },
      ],
    },
    [user],
  );
  for (const prefix of NEXTCLOUD_PREFIXES) {
    route(
      r,
      `${prefix}/apps/gpoddersync/episode_action`,
      {
        get: download,
      },
      [user],
    );
    route(
      r,
      `${prefix}/apps/gpoddersync/episode_action/create`,
      {
        post: [
          anyJson,
          async (req, res) => {
            const done = await upload(req);
            res.json({ timestamp: done.timestamp, ...(done.skipped && { skipped: done.skipped }) });
          },
        ],
      },
      [user],
    );
  }
  return r;
}
