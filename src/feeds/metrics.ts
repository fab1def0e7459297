import client from 'prom-client';

/** The fetcher's own metrics; the /metrics endpoint serves them with the rest. */
export const feedRegistry = new client.Registry();

export const fetches = new client.Counter({
  name: 'castsync_feed_fetches_total',
  help: 'Feed fetches by outcome (fetched, not_modified, failed, refused, invalid, deferred)',
  labelNames: ['outcome'] as const,
  registers: [feedRegistry],
});

export const fetchSeconds = new client.Histogram({
  name: 'castsync_feed_fetch_duration_seconds',
  help: 'Duration of a feed fetch, from the request to the stored outcome',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [feedRegistry],
});
