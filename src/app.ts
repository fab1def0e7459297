import { randomUUID } from 'node:crypto';
import express, { type RequestHandler } from 'express';
import helmet from 'helmet';
import { pinoHttp } from 'pino-http';
import swaggerUi from 'swagger-ui-express';
import { AuthCache } from './auth/cache';
import { authLimits } from './auth/limits';
import { requireUser } from './auth/middleware';
import { logoutRoute, sessionRoutes } from './auth/routes';
import type { Config } from './config';
import type { Context } from './context';
import type { Db } from './db/pool';
import { deletionRoutes } from './deletions/routes';
import { errorHandler, notFound } from './http/error-handler';
import { ServiceUnavailable, UnsupportedMediaType } from './http/errors';
import type { Logger } from './logger';
import { createMetrics, routeTemplate } from './metrics';
import { openApiDocument } from './openapi';
import { subscriptionRoutes } from './subscriptions/routes';

export type AppState = { draining: boolean };

const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

const JSON_TYPES = ['application/json', 'application/*+json'];

/** A body that is there must be JSON by its Content-Type: 415 otherwise. */
const requireJsonBody: RequestHandler = (req, _res, next) => {
  const length = req.headers['content-length'];
  const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (hasBody && !req.is(JSON_TYPES)) throw new UnsupportedMediaType();
  next();
};

const jsonBody = [requireJsonBody, express.json({ limit: '1mb', type: JSON_TYPES })];

export function createApp({
  db,
  config,
  logger,
  authCache = new AuthCache(config.authCacheTtl * 1000),
  state = { draining: false },
}: {
  db: Db;
  config: Config;
  logger: Logger;
  authCache?: AuthCache;
  state?: AppState;
}) {
  const ctx: Context = { db, config, logger, authCache };
  const metrics = createMetrics(db);
  const limits = authLimits(config);
  const app = express();
  app.disable('x-powered-by');
  // API answers are no-store; an ETag would only cost a hash of every body.
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  app.set('query parser', 'simple');

  // Self-hosted servers are often reached over plain http on a LAN: no upgrade-insecure-requests.
  app.use(helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } }));
  app.use((req, res, next) => {
    const sent = req.headers['x-request-id'];
    req.id = typeof sent === 'string' && REQUEST_ID.test(sent) ? sent : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    next();
  });
  // One line per request at info level; below it, not even the per-request logger is made.
  if (logger.isLevelEnabled('info')) {
    app.use(
      pinoHttp({
        logger,
        genReqId: (req) => req.id,
        customProps: (req, res) => ({
          route: routeTemplate(req as express.Request),
          userId: (req as express.Request).userId,
          status: res.statusCode,
        }),
        serializers: {
          req: (req: { id: unknown; method: string; url: string }) => ({
            id: req.id,
            method: req.method,
            url: req.url,
          }),
          res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        },
        customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
      }),
    );
  }
  app.use(metrics.middleware);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    if (state.draining) throw new ServiceUnavailable();
    try {
      await db.query('SELECT 1');
    } catch {
      throw new ServiceUnavailable();
    }
    res.json({ status: 'ready' });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  const doc = openApiDocument();
  app.get('/openapi.json', (_req, res) => {
    res.json(doc);
  });
  app.use('/docs', swaggerUi.serve);
  app.get('/docs', swaggerUi.setup(doc, { customSiteTitle: 'castsync API' }));

  const v1 = express.Router();
  v1.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  v1.get('/capabilities', (_req, res) => {
    res.json({ capabilities: { 'urn:opa:core': { '0.1.0': { status: 'STABLE', root: '/v1' } } } });
  });
  v1.use(jsonBody);
  v1.use(sessionRoutes(ctx, limits));
  v1.use(requireUser(ctx, limits.failedAuth));
  v1.use(logoutRoute(ctx), subscriptionRoutes(ctx), deletionRoutes(ctx));
  v1.use(notFound);
  app.use('/v1', v1);
  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}
