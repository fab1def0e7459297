import { Router, type Request, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import * as devices from '../devices/service';
import { DEVICE_ID } from '../devices/service';
import * as episodes from '../episodes/service';
import { recordInterchange } from '../episodes/service';
import { currentUser } from '../http/credentials';
import { BadRequest } from './errors';
import { route } from '../http/method';
import { sendStreamed } from '../http/stream';
import { anyJson } from './http';
import { NEXTCLOUD_PREFIXES } from './nextcloud';
import { clientTimestamp, parseSince } from './sync-time';
import { error, json, jsonBody, type Documenter } from '../http/openapi';
import { z } from '../http/zod';
import { authErrors, byUser, episodeAction, gpodderPath, gpodder, nextcloudPath } from './docs';
import { sinceQuery } from './schemas';

/** The actions of a request body, as they came. A body that is not a JSON array, or over the limit, is a 400. */
function actionList(body: unknown): unknown[] {
  // No body at all is an empty batch; JSON null, like any other non-list, is not a batch.
  const list = body === undefined ? [] : body;
  if (!Array.isArray(list)) throw new BadRequest('The body must be a JSON array of actions');
  if (list.length > episodes.MAX_ACTIONS)
    throw new BadRequest(`At most ${episodes.MAX_ACTIONS} actions in one request`);
  return list;
}

const flag = (v: unknown) => v === 'true' || v === '1';
const text = (v: unknown, name: string): string | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new BadRequest(`Invalid ${name}: give it once`);
  return v;
};

/** The `device` filter: a device id by its rules (400 otherwise), or empty, which filters nothing. */
const deviceFilter = (v: unknown): string | undefined => {
  const device = text(v, 'device');
  return device === undefined || device === '' ? device : devices.checkDeviceId(device);
};

/**
 * The download's answer from its first pages and the rest: the same bytes as one string would be. Each
 * page goes as PostgreSQL wrote it, the brackets and commas as pieces of their own: a page joined to
 * another text would be copied whole first.
 */
async function* actionsAnswer(read: string[], rest: AsyncGenerator<string, Date, undefined>) {
  try {
    yield '{"actions":[';
    yield read[0]!;
    yield ',';
    yield read[1]!;
    for (let next = await rest.next(); ; next = await rest.next()) {
      if (next.done) {
        yield `],"timestamp":${clientTimestamp(next.value)}}`;
        return;
      }
      yield ',';
      yield next.value;
    }
  } finally {
    // The client went away or a write failed: no more pages (a finished reading ignores this).
    await rest.return(new Date(0));
  }
}

/**
 * Stores what it can of a batch and answers 200 (apps re-send a whole batch after any failure): what was
 * skipped is logged with its index and reason, and named in the answer's extra key `skipped`.
 */
async function upload(ctx: ApiContext, req: Request) {
  const userId = currentUser(req);
  const list = actionList(req.body);
  const done = await recordInterchange(ctx.db, userId, list, new Date());
  const skipped = done.skipped;
  // The device of the report: the one the actions name, if they name one valid device id (Nextcloud-mode
  // apps name none; a hostile one is no device).
  const named = new Set(list.map((a) => (a as { device?: unknown } | null)?.device));
  const only = named.size === 1 ? [...named][0] : undefined;
  const device = typeof only === 'string' && DEVICE_ID.test(only) ? only : undefined;
  if (skipped.length > 0) {
    ctx.logger.warn(
      { component: 'gpodder', userId, device, skipped: skipped.slice(0, 20), count: skipped.length },
      'episode actions skipped',
    );
  }
  await devices.noteReport(ctx.db, userId, {
    device,
    client: req.headers['user-agent'],
    kind: 'episode actions',
    sent: { actions: list.length },
    skipped: skipped.map((s) => ({ item: `action ${s.index}`, reason: s.reason })),
  });
  return {
    timestamp: clientTimestamp(done.changedAt),
    update_urls: done.rewritten,
    ...(skipped.length > 0 && { skipped }),
  };
}

/**
 * `{"actions":[...],"timestamp":T}`: the actions come as JSON text, written by PostgreSQL as clients read
 * them, a page at a time. An answer of one page goes at once, with its length; a longer one is written as
 * its pages come, and `timestamp` (which follows the actions) once the last is read
 * (docs/decisions/streamed-downloads.md).
 */
function downloadActions(ctx: ApiContext): RequestHandler {
  return async (req, res) => {
    const query = req.query as Record<string, unknown>;
    const pages = episodes.since(ctx.db, currentUser(req), {
      since: parseSince(query.since),
      podcast: text(query.podcast, 'podcast'),
      device: deviceFilter(query.device),
      aggregated: flag(query.aggregated),
    });
    // Two pieces read before the status: an error until then is answered as any other.
    const first = await pages.next();
    const second = first.done ? first : await pages.next();
    res.type('json');
    if (second.done) {
      res.send(`{"actions":[${first.done ? '' : first.value}],"timestamp":${clientTimestamp(second.value)}}`);
      return;
    }
    await sendStreamed(res, actionsAnswer([first.value as string, second.value], pages));
  };
}

/** Episode actions over gpodder.net v2 and the Nextcloud gpoddersync dialect. */
export function episodeRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  const download = downloadActions(ctx);
  route(
    r,
    '/api/2/episodes/:user.json',
    {
      get: download,
      post: [
        anyJson,
        async (req, res) => {
          res.json(await upload(ctx, req));
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
            const done = await upload(ctx, req);
            res.json({ timestamp: done.timestamp, ...(done.skipped && { skipped: done.skipped }) });
          },
        ],
      },
      [user],
    );
  }
  return r;
}

/** The episode-action routes of gpodder.net v2 and Nextcloud, documented beside them. */
export const documentEpisodes: Documenter = (r) => {
  const path = gpodderPath(r);
  const actions = z.array(episodeAction).openapi('EpisodeActions');
  const actionsResponse = json(z.object({ actions, timestamp: z.number().int() }), 'Actions, and the next since');
  const skipped = z
    .array(z.object({ index: z.number().int(), reason: z.string() }))
    .optional()
    .openapi({ description: 'Present when actions were skipped: their index in the body and why' });
  const episodesUploadResponse = z
    .object({ timestamp: z.number().int(), update_urls: z.array(z.tuple([z.string(), z.string()])), skipped })
    .openapi('GpodderEpisodeUploadResult');
  const episodesQuery = z.object({
    since: sinceQuery.shape.since,
    podcast: z.string().optional().openapi({ description: "One podcast's actions (any URL its subscription has had)" }),
    device: z
      .string()
      .regex(/^([A-Za-z0-9._-]{1,64})?$/)
      .optional()
      .openapi({
        description: "One device's actions, and those uploaded naming no device (the account's); empty: all",
      }),
    aggregated: z
      .string()
      .optional()
      .openapi({ description: 'true: only the latest action of each episode and action type' }),
  });
  path('get', '/api/2/episodes/{user}.json', 'Episode actions since a time', {
    request: { ...byUser, query: episodesQuery },
    responses: { 200: actionsResponse, 400: error('Bad since, podcast or device'), ...authErrors },
  });
  path('post', '/api/2/episodes/{user}.json', 'Upload episode actions (per action)', {
    description: 'Every valid action is stored; an invalid one is skipped, logged and named in `skipped`.',
    request: { ...byUser, ...jsonBody(actions) },
    responses: {
      200: json(episodesUploadResponse, 'The timestamp, podcast URLs rewritten, and the actions skipped'),
      400: error('A body that is not a JSON array, or more than 5,000 actions'),
      ...authErrors,
    },
  });
  for (const prefix of NEXTCLOUD_PREFIXES) {
    const nc = nextcloudPath(r, prefix);
    nc('get', '/apps/gpoddersync/episode_action', 'Episode actions since a time', {
      security: gpodder,
      request: { query: sinceQuery },
      responses: { 200: actionsResponse, ...authErrors },
    });
    nc('post', '/apps/gpoddersync/episode_action/create', 'Upload episode actions (per action)', {
      security: gpodder,
      request: jsonBody(actions),
      responses: {
        200: json(z.object({ timestamp: z.number().int(), skipped }), 'The timestamp, and the actions skipped'),
        400: error('A body that is not a JSON array'),
        ...authErrors,
      },
    });
  }
};
