import client from 'prom-client';

/** The directory's own metrics; the /metrics endpoint serves them with the rest. */
export const directoryRegistry = new client.Registry();

export const directorySearches = new client.Counter({
  name: 'castsync_directory_searches_total',
  help: 'Searches of the podcast directory by provider and outcome (ok, unreachable, timeout, refused_key, http_error, malformed, refused_address)',
  labelNames: ['provider', 'outcome'] as const,
  registers: [directoryRegistry],
});
