import { createHash, timingSafeEqual } from 'node:crypto';
import { Router, type RequestHandler } from 'express';
import swaggerUi from 'swagger-ui-express';
import type { Db } from '../db/pool';
import { bearerToken } from './credentials';
import { HttpError } from './errors';
import type { Metrics } from './metrics';
import { route } from './method';
import { error, type Documenter } from './openapi';
import { VERSION } from '../version';

/**
 * Only a request with the bearer token, when there is one (METRICS_TOKEN): the metrics count rows in the
 * database at every scrape, and say how busy the server is.
 */
function metricsAccess(token: string | undefined): RequestHandler {
  const expected = token === undefined ? undefined : digest(token);
  return (req, _res, next) => {
    const sent = bearerToken(req.headers.authorization);
    if (expected && !(sent !== undefined && timingSafeEqual(digest(sent), expected))) {
      throw new HttpError(401, 'Metrics need the bearer token METRICS_TOKEN', {
        'WWW-Authenticate': 'Bearer realm="metrics"',
      });
    }
    next();
  };
}
const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** The routes an operator uses: health, readiness, metrics, and the API's documentation. */
export function opsRoutes(
  db: Db,
  metrics: Metrics,
  state: { draining: boolean },
  doc: object,
  metricsToken?: string,
): Router {
  const r = Router();
  route(r, '/healthz', {
    get: (_req, res) => {
      res.json({ status: 'ok', version: VERSION });
    },
  });
  route(r, '/readyz', {
    get: async (_req, res) => {
      const notReady = new HttpError(503, 'Service temporarily unavailable');
      if (state.draining) throw notReady;
      try {
        await db.query('SELECT 1');
      } catch {
        throw notReady;
      }
      res.json({ status: 'ready' });
    },
  });
  route(
    r,
    '/metrics',
    {
      get: async (_req, res) => {
        res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
      },
    },
    [metricsAccess(metricsToken)],
  );
  route(r, '/openapi.json', {
    get: (_req, res) => {
      res.json(doc);
    },
  });
  r.use('/docs', swaggerUi.serve);
  route(r, '/docs', { get: swaggerUi.setup(doc, { customSiteTitle: 'castsync API' }) });
  return r;
}

export const documentOps: Documenter = (r) => {
  for (const [path, summary] of [
    ['/healthz', 'The process is up (no database check): {"status": "ok", "version"}'],
    ['/readyz', 'The database is reachable and the server is not shutting down'],
    ['/metrics', 'Prometheus metrics'],
    ['/openapi.json', 'This document'],
    ['/docs', 'Interactive documentation'],
  ] as const) {
    r.registerPath({
      method: 'get',
      path,
      summary,
      responses: {
        200: { description: 'OK' },
        ...(path === '/readyz' && { 503: error('Not ready') }),
        ...(path === '/metrics' && { 401: error('METRICS_TOKEN is set, and the request lacks its bearer token') }),
      },
    });
  }
};
