import { isRefusal } from '../errors';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { ApiContext } from '../api-context';
import { currentUser } from '../http/credentials';
import { entityTags, notModified } from '../http/entity-tags';
import { route } from '../http/method';
import { error, json, jsonBody, type Documenter } from '../http/openapi';
import { z } from '../http/zod';
import * as queue from '../queue/service';
import { podcastGuid } from '../subscriptions/service';
import { iso } from '../timestamps';
import { authErrors, secured } from './auth';
import { identityOf } from './episodes';
import { PreconditionFailed, PreconditionRequired, ValidationFailed } from './errors';
import { parseBody, parsePath } from './validate';

// Up next, experimental: castsync's own extension, a proposal for the Open Podcast API (docs/queue.md).

const EXPERIMENTAL = "Experimental: castsync's Up next extension (docs/queue.md), which may change.";

const identity = {
  sync_id: z.string().optional().openapi({ format: 'uuid', description: "The episode's sync id (/v1/episodes)" }),
  podcast_guid: z.string().optional().openapi({ format: 'uuid' }),
  podcast_url: z.string().optional(),
  episode_guid: z.string().nullable().optional(),
  enclosure_url: z.string().nullable().optional(),
};
const episodeIdentity = z.object(identity).openapi('EpisodeIdentity', {
  description: 'An episode as /v1/episodes names it: its sync_id, or its podcast with its guid or enclosure URL',
});

export const queueItem = z
  .object({
    id: z.string().openapi({ description: "The item's id in the list (stable while the episode is on it)" }),
    sync_id: z.string().openapi({ format: 'uuid' }),
    podcast_guid: z.string().openapi({ format: 'uuid' }),
    podcast_url: z.string(),
    episode_guid: z.string().nullable(),
    enclosure_url: z.string(),
    title: z.string().nullable(),
    added_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('QueueItem');
export const queueList = z.object({ items: z.array(queueItem) }).openapi('Queue', { description: EXPERIMENTAL });
const replaceBody = z.object({ items: z.array(episodeIdentity) }).openapi('QueueReplace');
const replaceResult = queueList
  .extend({ failure: z.array(z.object({ index: z.number().int(), message: z.string() })) })
  .openapi('QueueReplaced');
const place = z
  .union([z.enum(['end', 'next']), z.number().int().min(0)])
  .openapi({ description: '"end", "next" (the top) or a position, 0 the top; past the end is the end' });
const addBody = z.object({ ...identity, at: place.optional() }).openapi('QueueAdd');
const moveBody = z.object({ at: z.number().int().min(0) }).openapi('QueueMove');
const itemParams = z.object({ id: z.string().regex(/^[1-9][0-9]{0,17}$/, 'the item id is not one of this list') });

const present = (i: queue.QueueItem): z.infer<typeof queueItem> => ({
  id: i.id,
  sync_id: i.syncId,
  podcast_guid: i.podcastGuid ?? podcastGuid(i.podcastUrl),
  podcast_url: i.podcastUrl,
  episode_guid: i.episodeGuid,
  enclosure_url: i.enclosureUrl,
  title: i.title,
  added_at: iso(i.addedAt),
});

const etagOf = (q: queue.Queue) => `"${q.version}"`;

/** Answers with the list and its ETag. */
const send = (res: Response, q: queue.Queue, status = 200, extra: Record<string, unknown> = {}) => {
  res
    .status(status)
    .set('ETag', etagOf(q))
    .json({ ...extra, items: q.items.map(present) });
};

/**
 * The versions an If-Match names (any of them may be the list's), or `*` (whatever it is); a 428 when there
 * is none. A weak tag names its version too: the server's compression, or a proxy's, sends `W/"7"` for
 * `"7"`, and the version is the list's, whatever bytes carried it (docs/queue.md). An ETag this server
 * never gave names no version.
 */
function ifMatch(req: Request): number[] | '*' {
  const tags = entityTags(req.headers['if-match']);
  if (tags === undefined) {
    throw new PreconditionRequired('Send If-Match with the ETag of the list you read (GET /v1/queue)');
  }
  if (tags === '*') return '*';
  return tags.flatMap((t) => {
    const m = /^"(\d{1,15})"$/.exec(t.opaque);
    return m ? [Number(m[1])] : [];
  });
}

/** The episode a body names; a guid that is not a UUID is the contract's 405. */
function named(body: z.infer<typeof episodeIdentity>) {
  const identity = identityOf(body);
  if (isRefusal(identity)) throw new ValidationFailed(identity.reason);
  return identity;
}

export function queueRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  const limits = () => ({ maxItems: ctx.config.queueMaxItems });
  route(
    r,
    '/queue',
    {
      get: async (req, res) => {
        const q = await queue.read(ctx.db, currentUser(req));
        if (notModified(req, etagOf(q))) return void res.status(304).set('ETag', etagOf(q)).end();
        send(res, q);
      },
      put: async (req, res) => {
        const body = parseBody(replaceBody, req.body);
        const userId = currentUser(req);
        const done = await queue.replace(ctx.db, userId, ifMatch(req), body.items.map(identityOf), limits());
        if (done.stale) {
          const stale = new PreconditionFailed('Up next has changed since you read it: here it is as it is now');
          return send(res, done.queue, 412, { code: '412', message: stale.message });
        }
        const failure = done.failures.map((f) => ({ index: f.index, message: f.reason }));
        send(res, done.queue, 200, { failure });
      },
    },
    [user],
  );
  route(
    r,
    '/queue/items',
    {
      post: async (req, res) => {
        const body = parseBody(addBody, req.body);
        const done = await queue.add(ctx.db, currentUser(req), named(body), body.at ?? 'end', limits());
        send(res, done.queue, 201, { id: done.id });
      },
    },
    [user],
  );
  route(
    r,
    '/queue/items/:id',
    {
      patch: async (req, res) => {
        const { id } = parsePath(itemParams, req.params);
        const body = parseBody(moveBody, req.body);
        send(res, await queue.move(ctx.db, currentUser(req), id, body.at));
      },
      delete: async (req, res) => {
        const { id } = parsePath(itemParams, req.params);
        send(res, await queue.remove(ctx.db, currentUser(req), [id]));
      },
    },
    [user],
  );
  return r;
}

const listed = (description: string) => ({
  ...json(queueList, description),
  headers: {
    ETag: {
      description: 'The version of the list: send it as If-Match to replace the list',
      schema: { type: 'string' as const },
    },
  },
});

export const documentQueue: Documenter = (r) => {
  const path = (method: 'get' | 'put' | 'post' | 'patch' | 'delete', p: string, summary: string, rest: object) =>
    r.registerPath({ method, path: p, summary, description: EXPERIMENTAL, security: secured, ...rest } as never);
  path('get', '/v1/queue', 'Up next, in order (experimental)', {
    responses: {
      200: listed('The list'),
      304: { description: 'Unchanged since the ETag sent as If-None-Match' },
      ...authErrors,
    },
  });
  path('put', '/v1/queue', 'Replace Up next (experimental)', {
    description: `${EXPERIMENTAL} Needs If-Match with the ETag read; an episode that cannot be named is a failure with its index, the others make the list.`,
    request: jsonBody(replaceBody),
    responses: {
      200: json(replaceResult, 'The list now, and the episodes that could not be named'),
      ...authErrors,
      405: error('Body could not be validated, or more episodes than the list holds'),
      412: json(
        queueList.extend({ code: z.string(), message: z.string() }),
        'The list changed since it was read: the list as it is',
      ),
      428: error('No If-Match'),
    },
  });
  path('post', '/v1/queue/items', 'Add an episode to Up next (experimental)', {
    description: `${EXPERIMENTAL} An episode already on the list moves to the place given.`,
    request: jsonBody(addBody),
    responses: {
      201: json(queueList.extend({ id: z.string() }), "The list now, and the item's id"),
      ...authErrors,
      405: error('Body could not be validated, the episode could not be named, or the list is full'),
    },
  });
  const itemPath = '/v1/queue/items/{id}';
  path('patch', itemPath, 'Move an item of Up next (experimental)', {
    request: { params: itemParams, ...jsonBody(moveBody) },
    responses: {
      200: listed('The list now'),
      ...authErrors,
      404: error('No such item'),
      405: error('Body could not be validated'),
    },
  });
  path('delete', itemPath, 'Take an item off Up next (experimental)', {
    request: { params: itemParams },
    responses: { 200: listed('The list now'), ...authErrors, 404: error('No such item') },
  });
};
