import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import helmet from 'helmet';
import { pinoHttp } from 'pino-http';
import type { ApiContext } from './api-context';
import { AuthCache } from './auth/service';
import type { Config } from './config';
import type { Db } from './db/pool';
import * as deletions from './deletions/service';
import * as feeds from './feeds/service';
import { feedRegistry } from './feeds/service';
import { directoryRegistry } from './directory/service';
import { compression } from './http/compression';
import { errorHandler, notFound } from './http/error-handler';
import { authLimits, type AuthLimits } from './http/limits';
import { createMetrics } from './http/metrics';
import { routeTemplate } from './http/method';
import { opsRoutes } from './http/ops';
import { Foreground, idleForeground } from './jobs/foreground';
import { countJobs } from './jobs/queue';
import { requestUrlForLog, type Logger } from './logger';
import { gpodderRouter } from './gpodder/router';
import { opaRouter } from './opa/router';
import { opaSyncRouter } from './opa/sync/router';
import { openApiDocument } from './openapi';
import { webRouter } from './web/router';

export type AppState = { draining: boolean };

const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** What the request log adds to a finished request's line. */
const outcome = (req: IncomingMessage, res: ServerResponse) => ({
  route: routeTemplate(res as express.Response),
  userId: (req as express.Request).userId,
  status: res.statusCode,
  refused: (res as express.Response).locals.refused,
});

/** The app: its settings, then what every request passes in order, the doors, the safety net. */
export function createApp({
  db,
  config,
  logger,
  authCache = new AuthCache(config.authCacheTtl * 1000),
  limits = authLimits(config, db),
  state = { draining: false },
  foreground = idleForeground,
}: {
  db: Db;
  config: Config;
  logger: Logger;
  authCache?: AuthCache;
  /** The failed sign-in limits; the server keeps them in step with other instances' (failureBlocks). */
  limits?: AuthLimits;
  state?: AppState;
  /** Where requests are counted, so that background work gives way to them. */
  foreground?: Foreground;
}) {
  const ctx: ApiContext = { db, config, logger, authCache };
  const metrics = appMetrics(db);
  const app = express();
  settings(app, config);
  securityHeaders(app);
  requestIds(app, foreground);
  requestLog(app, logger);
  app.use(compression(config.compression, config.compressionMinBytes));
  app.use(metrics.middleware);
  app.use(opsRoutes(db, metrics, state, openApiDocument(), config.metricsToken));
  doors(app, ctx, limits);
  safetyNet(app, logger);
  return app;
}

/** The gauges /metrics reads from the database, beside the request counts and the registries' own. */
function appMetrics(db: Db) {
  return createMetrics(
    db,
    [
      {
        name: 'castsync_jobs_queued',
        help: 'Jobs in the queue (waiting, running or waiting for a retry)',
        count: () => countJobs(db),
      },
      {
        name: 'castsync_deletions_pending',
        help: 'Deletion requests accepted and not yet processed',
        count: () => deletions.countPending(db),
      },
      {
        name: 'castsync_feeds_due',
        help: 'Feeds due for a fetch (the fetch queue)',
        count: () => feeds.countDue(db),
      },
    ],
    [feedRegistry, directoryRegistry],
  );
}

/** Express's settings: no X-Powered-By, no ETag, the trusted proxies, plain query strings. */
function settings(app: express.Express, config: Config): void {
  app.disable('x-powered-by');
  // API answers are no-store; an ETag would only cost a hash of every body.
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  app.set('query parser', 'simple');
}

function securityHeaders(app: express.Express): void {
  // Self-hosted servers are often reached over plain http on a LAN: no upgrade-insecure-requests.
  app.use(helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } }));
}

/** Each request counted while it is in flight, and named by its X-Request-Id (the client's, if it is sane). */
function requestIds(app: express.Express, foreground: Foreground): void {
  app.use((_req, res, next) => {
    res.once('close', foreground.begin());
    next();
  });
  app.use((req, res, next) => {
    const sent = req.headers['x-request-id'];
    req.id = typeof sent === 'string' && REQUEST_ID.test(sent) ? sent : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    next();
  });
}

function requestLog(app: express.Express, logger: Logger): void {
  // One line per request at info level; below it, not even the per-request logger is made.
  if (logger.isLevelEnabled('info')) {
    app.use(
      pinoHttp({
        logger,
        genReqId: (req) => req.id,
        // Added to the one line written when the response is finished (customProps would be computed at
        // the start as well, and pino writes both copies of each key).
        customSuccessObject: (req, res, line: object) => ({ ...line, ...outcome(req, res) }),
        customErrorObject: (req, res, _err, line: object) => ({ ...line, ...outcome(req, res) }),
        serializers: {
          req: (req: { id: unknown; method: string; url: string; originalUrl?: string }) => ({
            id: req.id,
            method: req.method,
            url: requestUrlForLog(req.originalUrl ?? req.url),
          }),
          res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        },
        customLogLevel: (_req, res, err) =>
          err || res.statusCode >= 500 ? 'error' : (res as express.Response).locals.refused ? 'warn' : 'info',
      }),
    );
  }
}

/** Each protocol's door, in the order their paths must be tried. */
function doors(app: express.Express, ctx: ApiContext, limits: AuthLimits): void {
  app.use('/v1', opaRouter(ctx, limits));
  app.use('/api/v1', opaSyncRouter(ctx, limits));
  app.use(webRouter(ctx, limits));
  app.use(gpodderRouter(ctx, limits));
}

/** What no door answered is a 404; what no door's error mapping took, the 500/503 of src/http/error-handler.ts. */
function safetyNet(app: express.Express, logger: Logger): void {
  app.use(notFound);
  app.use(errorHandler(logger));
}
