import type { RequestHandler } from 'express';
import client from 'prom-client';
import type { Db } from '../db/pool';
import { routeTemplate } from './method';

export type Metrics = { registry: client.Registry; middleware: RequestHandler };

/** A number the features report, read when /metrics is scraped (NaN while the database is away). */
export type CountGauge = { name: string; help: string; count: () => Promise<number> };

/** The request metrics and the contributed counts, served with the registries features keep themselves. */
export function createMetrics(db: Db, counts: CountGauge[], registries: client.Registry[] = []): Metrics {
  const own = new client.Registry();
  client.collectDefaultMetrics({ register: own });
  const duration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route template, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [own],
  });
  new client.Gauge({
    name: 'castsync_db_pool_connections',
    help: 'Database pool connections by state',
    labelNames: ['state'] as const,
    registers: [own],
    collect() {
      this.set({ state: 'total' }, db.totalCount);
      this.set({ state: 'idle' }, db.idleCount);
      this.set({ state: 'waiting' }, db.waitingCount);
    },
  });
  for (const g of counts) {
    new client.Gauge({
      name: g.name,
      help: g.help,
      registers: [own],
      async collect() {
        try {
          this.set(await g.count());
        } catch {
          this.set(NaN);
        }
      },
    });
  }
  const middleware: RequestHandler = (req, res, next) => {
    const end = duration.startTimer();
    res.on('finish', () => end({ method: req.method, route: routeTemplate(res), status: String(res.statusCode) }));
    next();
  };
  // Merged last: a merged registry holds the metrics its parts had when it was made.
  return { registry: client.Registry.merge([own, ...registries]), middleware };
}
