import express, { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import { currentUser } from '../http/credentials';
import { route } from '../http/method';
import { error, json, type Documenter } from '../http/openapi';
import { z } from '../http/zod';
import { exportOpml, importOpml } from '../opml/service';
import { authErrors, secured } from './auth';
import { presentOutcomes } from './present';
import { postResponse, type PostResult } from './schemas';

const opmlText = express.text({ type: () => true, limit: '4mb' });

/** GET and POST /v1/subscriptions.opml: the user's list out as OPML 2.0, and an OPML file in. */
export function opmlRoutes(ctx: ApiContext, user: RequestHandler): Router {
  const r = Router();
  route(
    r,
    '/subscriptions.opml',
    {
      get: async (req, res) => {
        res
          .type('text/x-opml; charset=utf-8')
          .attachment('castsync-subscriptions.opml')
          .send(await exportOpml(ctx.db, currentUser(req)));
      },
      post: [
        opmlText,
        async (req, res) => {
          const parts = await importOpml(ctx.db, currentUser(req), typeof req.body === 'string' ? req.body : '');
          // Any number of feeds, in parts of what one POST takes, answered as one POST.
          const result: PostResult = { success: [], failure: [] };
          for (const done of parts) {
            const part = presentOutcomes(done.changedAt, done.outcomes);
            result.success.push(...part.success);
            result.failure.push(...part.failure);
          }
          res.json(result);
        },
      ],
    },
    [user],
  );
  return r;
}

export const documentOpml: Documenter = (r) => {
  r.registerPath({
    method: 'get',
    path: '/v1/subscriptions.opml',
    summary: 'Export the subscribed feeds as OPML 2.0',
    security: secured,
    responses: {
      200: { description: 'OPML', content: { 'text/x-opml': { schema: z.string() } } },
      ...authErrors,
    },
  });
  r.registerPath({
    method: 'post',
    path: '/v1/subscriptions.opml',
    summary: 'Import an OPML file (outlines at any depth, xmlUrl or url); any number of feeds',
    security: secured,
    request: { body: { content: { 'text/x-opml': { schema: z.string() } } } },
    responses: {
      200: json(postResponse, 'One success or failure entry per feed, in document order'),
      ...authErrors,
      405: error('Not OPML'),
      413: error('Body over 4 MiB'),
    },
  });
};
