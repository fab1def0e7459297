import type { Config } from '../config';
import { type AddressPolicy, checkTarget, failure, FetchFailed, readBody, send } from '../feeds/service';
import type { Logger } from '../logger';
import { directorySearches } from './metrics';
import { itunes, podcastIndex, type Credentials, type Found, type Provider } from './providers';

// Searching a podcast directory (docs/directory.md): the iTunes Search API or Podcast Index, reached under
// the feed fetcher's address policy. A directory that fails is a message for the person, never an error
// of castsync's: it is logged and counted, and the caller shows what went wrong.

export type { Found };

export type DirectorySettings = {
  provider: Provider | undefined;
  baseUrl: string;
  credentials: Credentials | undefined;
  policy: AddressPolicy;
  timeoutMs: number;
};

export const directorySettings = (config: Config): DirectorySettings => {
  const provider = { itunes, podcastindex: podcastIndex, none: undefined }[config.directory];
  return {
    provider,
    baseUrl: config.directoryUrl ?? provider?.defaultUrl ?? '',
    credentials:
      config.podcastindexKey !== undefined && config.podcastindexSecret !== undefined
        ? { key: config.podcastindexKey, secret: config.podcastindexSecret }
        : undefined,
    policy: { allowPrivate: config.feedFetchAllowPrivate, allowCidrs: config.feedFetchAllowCidrs },
    timeoutMs: config.directoryTimeout * 1000,
  };
};

/** Results, or why there are none: a sentence to show as it is. */
export type SearchOutcome = { ok: true; found: Found[] } | { ok: false; message: string };

/** At most this many results of one search. */
export const MAX_RESULTS = 20;
/** A directory's answer larger than this is not a search result. */
const MAX_BYTES = 2 * 1024 * 1024;

type Outcome = 'ok' | 'unreachable' | 'timeout' | 'refused_key' | 'http_error' | 'malformed' | 'refused_address';

class Failed extends Error {
  constructor(
    readonly outcome: Outcome,
    message: string,
  ) {
    super(message);
  }
}

/** Searches the configured directory for podcasts by name. */
export async function search(settings: DirectorySettings, logger: Logger, query: string): Promise<SearchOutcome> {
  const { provider } = settings;
  if (!provider) return { ok: false, message: 'Searching a directory is turned off on this server.' };
  try {
    const found = await ask(settings, provider, query);
    directorySearches.inc({ provider: provider.name, outcome: 'ok' });
    return { ok: true, found: found.slice(0, MAX_RESULTS) };
  } catch (err) {
    const e = err instanceof Failed ? err : new Failed('unreachable', (err as Error).message);
    directorySearches.inc({ provider: provider.name, outcome: e.outcome });
    logger.warn({ provider: provider.name, outcome: e.outcome, reason: e.message }, 'directory search failed');
    return { ok: false, message: `The podcast directory could not be searched: ${e.message}. Try again later.` };
  }
}

async function ask(settings: DirectorySettings, provider: Provider, query: string): Promise<Found[]> {
  const { url, headers } = provider.request(settings.baseUrl, query, MAX_RESULTS, settings.credentials);
  const deadline = AbortSignal.timeout(settings.timeoutMs);
  let body: Buffer;
  let status: number;
  try {
    checkTarget(url, settings.policy);
    const res = await send(url, headers, settings.policy, deadline);
    status = res.statusCode ?? 0;
    body = await readBody(res, MAX_BYTES);
  } catch (err) {
    const f = failure(err, { deadline, timeoutMs: settings.timeoutMs }) as FetchFailed;
    const seconds = Math.round(settings.timeoutMs / 1000);
    if (deadline.aborted) throw new Failed('timeout', `it did not answer within ${seconds} s`);
    if (f.refused) throw new Failed('refused_address', `its address is not allowed (${f.message})`);
    throw new Failed('unreachable', `it could not be reached (${f.message})`);
  }
  if (status === 401 || status === 403)
    throw new Failed('refused_key', `it refused the configured key (HTTP ${status})`);
  if (status !== 200) throw new Failed('http_error', `it answered HTTP ${status}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new Failed('malformed', 'its answer was not JSON');
  }
  const found = provider.found(parsed);
  if (!found) throw new Failed('malformed', 'its answer was not in the shape expected');
  return found;
}
