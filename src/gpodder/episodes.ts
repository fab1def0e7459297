import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import * as episodes from '../episodes/service';
import { currentUser } from '../http/credentials';
import { BadRequest } from './errors';
import { route } from '../http/method';
import { anyJson } from './http';
import { NEXTCLOUD_PREFIXES } from './nextcloud';
import { clientTimestamp, parseSince } from './sync-time';

/** `YYYY-MM-DDTHH:MM:SS`, with an optional fraction and `Z`: UTC either way. */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?Z?$/;

function parseTimestamp(raw: string): Date | undefined {
  const m = TIMESTAMP.exec(raw);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac = ''] = m;
  const at = new Date(
    Date.UTC(
      Number(y),
      Number(mo) - 1,
      Number(d),
      Number(h),
      Number(mi),
      Number(s),
      Number(frac.padEnd(3, '0').slice(0, 3)),
    ),
  );
  // Date.UTC rolls 2026-02-30 over to March: such a date is refused, not moved.
  return at.getUTCDate() === Number(d) && at.getUTCHours() === Number(h) ? at : undefined;
}

/** How clients write times back: UTC, to the second, no zone (mygpoclient and AntennaPod parse only that). */
const formatTimestamp = (d: Date): string => d.toISOString().slice(0, 19);

const seconds = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined;

/** One action of a request body, as the domain takes it; a 400 names its index and what is wrong. */
function parseAction(raw: unknown, i: number, received: Date): episodes.EpisodeAction {
  const fail = (why: string) => new BadRequest(`Invalid action ${i}: ${why}`);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw fail('not an object');
  const a = raw as Record<string, unknown>;
  const str = (k: string, required: boolean): string | undefined => {
    const v = a[k];
    if (v === undefined || v === null) {
      if (required) throw fail(`${k} is required`);
      return undefined;
    }
    if (typeof v !== 'string') throw fail(`${k} must be a string`);
    return v;
  };
  const action = str('action', true)!.toLowerCase();
  if (!(episodes.ACTIONS as readonly string[]).includes(action))
    throw fail(`action: one of ${episodes.ACTIONS.join(', ')}`);
  const stamp = str('timestamp', false);
  const at = stamp === undefined ? received : parseTimestamp(stamp);
  if (!at) throw fail('timestamp: YYYY-MM-DDTHH:MM:SS');
  const out: episodes.EpisodeAction = {
    podcastUrl: str('podcast', true)!,
    episodeUrl: str('episode', true)!,
    guid: str('guid', false),
    action: action as episodes.ActionName,
    at,
    device: str('device', false),
  };
  if (action === 'play') {
    if (a.position === undefined) throw fail('position is required for play');
    out.position = seconds(a.position);
    if (out.position === undefined) throw fail('position: seconds, at least 0');
    // Clients write -1 for "unknown": left out.
    out.started = seconds(a.started);
    out.total = seconds(a.total);
  }
  return out;
}

function parseActions(body: unknown): episodes.EpisodeAction[] {
  const list = body ?? [];
  if (!Array.isArray(list)) throw new BadRequest('The body must be a JSON array of actions');
  if (list.length > episodes.MAX_ACTIONS)
    throw new BadRequest(`At most ${episodes.MAX_ACTIONS} actions in one request`);
  const received = new Date();
  return list.map((a, i) => parseAction(a, i, received));
}

/** An action as clients parse it: only the fields they know, absent ones left out. */
function presentAction(a: episodes.StoredAction): Record<string, string | number> {
  const out: Record<string, string | number> = { podcast: a.podcastUrl, episode: a.episodeUrl };
  if (a.guid !== undefined) out.guid = a.guid;
  out.action = a.action;
  out.timestamp = formatTimestamp(a.at);
  if (a.device !== undefined) out.device = a.device;
  if (a.started !== undefined) out.started = a.started;
  if (a.position !== undefined) out.position = a.position;
  if (a.total !== undefined) out.total = a.total;
  return out;
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
  const upload = async (body: unknown, userId: number) => {
    const done = await episodes.record(ctx.db, userId, parseActions(body));
    return { timestamp: clientTimestamp(done.changedAt), update_urls: done.rewritten };
  };
  const download = async (query: Record<string, unknown>, userId: number) => {
    const found = await episodes.since(ctx.db, userId, {
      since: parseSince(query.since),
      podcast: text(query.podcast, 'podcast'),
      device: text(query.device, 'device'),
      aggregated: flag(query.aggregated),
    });
    return { actions: found.actions.map(presentAction), timestamp: clientTimestamp(found.readAt) };
  };
  route(
    r,
    '/api/2/episodes/:user.json',
    {
      get: async (req, res) => {
        res.json(await download(req.query as Record<string, unknown>, currentUser(req)));
      },
      post: [
        anyJson,
        async (req, res) => {
          res.json(await upload(req.body, currentUser(req)));
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
        get: async (req, res) => {
          res.json(await download(req.query as Record<string, unknown>, currentUser(req)));
        },
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
            const done = await upload(req.body, currentUser(req));
            res.json({ timestamp: done.timestamp });
          },
        ],
      },
      [user],
    );
  }
  return r;
}
