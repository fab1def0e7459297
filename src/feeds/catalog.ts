import type { Queryable } from '../db/pool';
import * as subscriptions from '../subscriptions/service';
import type { FeedFacts } from './parse';
import * as repo from './repo';

// The feeds castsync knows, for every door: what the fetcher learnt of them (titles for OPML and the web
// page, GET /v1/feeds/{guid}). Subscription writes note new feeds; the fetcher finds them due. A person is
// shown only what was fetched for them: a feed is one row for all its subscribers, and what an earlier
// subscriber's fetch learnt would tell a new one that somebody else follows it (docs/feeds.md).

/** What is known of a feed; null fields are not known (yet). */
export type FeedInfo = Omit<FeedFacts, 'newFeedUrl' | 'items'> & {
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

/**
 * What is known of each of these feed URLs of the user's records, by URL: only what a fetch at or after the
 * record's last subscription change learnt (its `subscriptionChanged`: made, subscribed again, moved to
 * that URL or unsubscribed). Feeds never fetched since, unknown, or no record's of the user are absent, as
 * a feed not fetched yet.
 */
export async function describe(db: Queryable, userId: number, urls: string[]): Promise<Map<string, FeedInfo>> {
  const keyed = urls.flatMap((url) => {
    const key = subscriptions.urlHashOf(url);
    return key === undefined ? [] : [[key, url] as const];
  });
  if (keyed.length === 0) return new Map();
  const [found, since] = await Promise.all([
    repo.feedsByHash(db, [...new Set(keyed.map(([k]) => k))]),
    subscriptions.subscriptionsChangedAt(db, userId, urls),
  ]);
  // PostgreSQL writes the key as a uuid, with hyphens; urlHash has none.
  const rows = new Map(found.map((r) => [r.url_hash.replaceAll('-', ''), r]));
  const out = new Map<string, FeedInfo>();
  for (const [key, url] of keyed) {
    const [row, from] = [rows.get(key), since.get(url)];
    if (row?.fetched_at && from && row.fetched_at >= from) out.set(url, infoOf(row));
  }
  return out;
}

/** Feeds due for a fetch now. */
export const countDue = (db: Queryable): Promise<number> => repo.countDue(db);
