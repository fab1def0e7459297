import { Router } from 'express';
import swaggerUi from 'swagger-ui-express';
import type { Db } from '../db/pool';
import { HttpError } from './errors';
import type { Metrics } from './metrics';
import { route } from './method';
import { error, type Documenter } from './openapi';
import { VERSION } from '../version';

/** The routes an operator uses: health, readiness, metrics, and the API's documentation. */
export function opsRoutes(db: Db, metrics: Metrics, state: { draining: boolean }, doc: object): Router {
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
  route(r, '/metrics', {
    get: async (_req, res) => {
      res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    },
  });
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
      responses: { 200: { description: 'OK' }, ...(path === '/readyz' && { 503: error('Not ready') }) },
    });
  }
};
