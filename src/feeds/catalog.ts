import type { Queryable } from '../db/pool';
import type { OpmlFeed } from '../opml/opml';
import { checkFeedUrl, urlHash } from '../subscriptions/urls';
import type { FeedFacts } from './parse';
import * as repo from './repo';

// The feeds castsync knows, for every door: noting the feeds people subscribe to (the fetcher picks them
// up), and what was learnt of them (titles for OPML and the web page, GET /v1/feeds/{guid}).

/** What is known of a feed; null fields are not known (yet). */
export type FeedInfo = Omit<FeedFacts, 'newFeedUrl'> & {
  feedUrl: string;
  movedTo: string | null;
  lastFetch: Date | null;
  failures: number;
  lastError: string | null;
};

export const infoOf = (row: repo.FeedRow): FeedInfo => ({
  feedUrl: row.feed_url,
  title: row.title,
  description: row.description,
  link: row.link,
  artworkUrl: row.artwork_url,
  author: row.author,
  language: row.language,
  podcastGuid: row.podcast_guid,
  movedTo: row.moved_to,
  lastFetch: row.fetched_at,
  failures: row.failures,
  lastError: row.last_error,
});

/** The feed table's key of a feed URL (its normalised form's urlHash), or undefined for an invalid URL. */
export function feedKey(url: string): string | undefined {
  const checked = checkFeedUrl(url);
  return checked.ok ? urlHash(checked.key) : undefined;
}

/** Set by a running fetcher: called when feeds nobody had before were noted, so it starts at once. */
let wake: () => void = () => {};
export function onNewFeeds(listener: () => void): void {
  wake = listener;
}
/** Tells a running fetcher that feeds nobody had were noted (after the commit that noted them). */
export const wakeFetcher = (): void => wake();

/**
 * Notes feeds that were subscribed to: a feed nobody had is due for its first fetch at once. One statement
 * whatever the number; feeds already known cost an index probe each. Returns how many were new: then call
 * wakeFetcher once the transaction is committed. (POSTs note their feeds in their own write statement.)
 */
export async function noteFeeds(db: Queryable, urls: string[]): Promise<number> {
  const byKey = new Map<string, string>();
  for (const url of urls) {
    const key = feedKey(url);
    if (key !== undefined && !byKey.has(key)) byKey.set(key, url);
  }
  if (byKey.size === 0) return 0;
  return repo.addFeeds(db, [...byKey.keys()], [...byKey.values()]);
}

/** What is known of each of these feed URLs, by URL (feeds never fetched or unknown are absent). */
export async function describe(db: Queryable, urls: string[]): Promise<Map<string, FeedInfo>> {
  const keyed = urls.flatMap((url) => {
    const key = feedKey(url);
    return key === undefined ? [] : [[key, url] as const];
  });
  if (keyed.length === 0) return new Map();
  const found = await repo.feedsByHash(db, [...new Set(keyed.map(([k]) => k))]);
  // PostgreSQL writes the key as a uuid, with hyphens; urlHash has none.
  const rows = new Map(found.map((r) => [r.url_hash.replaceAll('-', ''), r]));
  const out = new Map<string, FeedInfo>();
  for (const [key, url] of keyed) {
    const row = rows.get(key);
    if (row) out.set(url, infoOf(row));
  }
  return out;
}

/** The feeds as OPML carries them: the title and web page when known (OPML falls back to the URL). */
export async function forOpml(db: Queryable, urls: string[]): Promise<OpmlFeed[]> {
  const known = await describe(db, urls);
  return urls.map((url) => {
    const info = known.get(url);
    return { url, title: info?.title ?? undefined, htmlUrl: info?.link ?? undefined };
  });
}

/** Feeds due for a fetch now. */
export const countDue = (db: Queryable): Promise<number> => repo.countDue(db);
