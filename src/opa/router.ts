import { Router, type RequestHandler } from 'express';
import type { ApiContext } from '../api-context';
import { notFound } from '../http/error-handler';
import { UnsupportedMediaType } from './errors';
import type { AuthLimits } from '../http/limits';
import { route } from '../http/method';
import { json, type Documenter } from '../http/openapi';
import { z } from '../http/zod';
import { accountRoutes, documentAccount } from './account';
import { authRoutes, documentAuth, requireUser } from './auth';
import { deletionRoutes, documentDeletions } from './deletions';
import { documentEpisodes, episodeRoutes } from './episodes';
import { documentFeeds, feedRoutes } from './feeds';
import { opaErrors, urlRefused } from './errors';
import { jsonParser, storableInput } from '../http/text-edge';
import { documentOpml, opmlRoutes } from './opml';
import { documentSessions, sessionRoutes } from './sessions';
import { documentQueue, queueRoutes } from './queue';
import { documentStats, statsRoutes } from './stats';
import { documentSubscriptions, subscriptionRoutes } from './subscriptions';

const JSON_TYPES = ['application/json', 'application/*+json'];

/** A body that is there must be JSON by its Content-Type: 415 otherwise. */
const requireJsonBody: RequestHandler = (req, _res, next) => {
  const length = req.headers['content-length'];
  const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (hasBody && !req.is(JSON_TYPES)) throw new UnsupportedMediaType();
  next();
};

export const capabilitiesResponse = z
  .object({
    capabilities: z.record(z.string(), z.record(z.string(), z.object({ status: z.string(), root: z.string() }))),
  })
  .openapi('Capabilities');

/** The Open Podcast API under /v1. */
export function opaRouter(ctx: ApiContext, limits: AuthLimits): Router {
  const v1 = Router();
  v1.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  v1.use(storableInput(urlRefused));
  route(v1, '/capabilities', {
    get: (_req, res) => {
      res.json({
        capabilities: {
          'urn:opa:core': { '0.1.0': { status: 'STABLE', root: '/v1' } },
          // GET and POST /v1/episodes in the shape of the episodes draft, which may change (docs/clients.md).
          'urn:opa:episodes': { '0.0.0-draft': { status: 'UNSTABLE', root: '/v1' } },
          // POST and GET /api/v1/sync in the shape of the sync draft, which may change (docs/opa-sync.md).
          'urn:opa:sync': { '0.0.0-draft': { status: 'UNSTABLE', root: '/api/v1' } },
          // GET /v1/stats, castsync's own listening statistics (docs/stats.md).
          'urn:castsync:stats': { '0.0.0-draft': { status: 'UNSTABLE', root: '/v1' } },
          // /v1/queue, Up next kept for every device, proposed for the Open Podcast API (docs/queue.md).
          'urn:castsync:queue': { '0.0.0-draft': { status: 'UNSTABLE', root: '/v1' } },
          // /v1/account/settings, new-episode notifications among them (docs/notifications.md).
          'urn:castsync:account-settings': { '0.0.0-draft': { status: 'UNSTABLE', root: '/v1' } },
        },
      });
    },
  });
  const user = requireUser(ctx, limits.failedAuth);
  // OPML comes in as XML, before JSON bodies are required.
  v1.use(opmlRoutes(ctx, user));
  v1.use(requireJsonBody, jsonParser({ limit: '1mb', type: JSON_TYPES }));
  // Each route authenticates once it is known, so that an unknown path is a 404 and a wrong method a 405
  // whatever the credentials, and the request log and metrics name the route of a 401 too.
  v1.use(
    authRoutes(ctx, limits, user),
    sessionRoutes(ctx, user),
    subscriptionRoutes(ctx, user),
    deletionRoutes(ctx, user),
    episodeRoutes(ctx, user),
    feedRoutes(ctx, user),
    statsRoutes(ctx, user),
    queueRoutes(ctx, user),
    accountRoutes(ctx, user),
  );
  v1.use(notFound);
  v1.use(opaErrors);
  return v1;
}

export const documentOpa: Documenter = (r) => {
  r.registerPath({
    method: 'get',
    path: '/v1/capabilities',
    summary: 'What this server supports',
    responses: { 200: json(capabilitiesResponse, 'Capabilities') },
  });
  documentAuth(r);
  documentSessions(r);
  documentSubscriptions(r);
  documentOpml(r);
  documentDeletions(r);
  documentEpisodes(r);
  documentFeeds(r);
  documentStats(r);
  documentQueue(r);
  documentAccount(r);
};
