import type { Db } from '../../src/db/pool';
import { checkFeedUrl, urlHash } from '../../src/subscriptions/urls';

/** What the feed fetcher would have learnt of a feed, written as it writes it (the feed noted if it was not). */
export async function feedLearnt(
  db: Db,
  url: string,
  facts: { title?: string; artworkUrl?: string; podcastGuid?: string; movedTo?: string },
): Promise<void> {
  const c = checkFeedUrl(url);
  if (!c.ok) throw new Error(`not a feed URL: ${url}`);
  await db.query(
    `INSERT INTO feeds (url_hash, feed_url, title, artwork_url, podcast_guid, moved_to, fetched_at)
     VALUES ($1, $2, $3, $4, $5, $6, now())
     ON CONFLICT (url_hash) DO UPDATE
       SET title = $3, artwork_url = $4, podcast_guid = $5, moved_to = $6, fetched_at = now()`,
    [
      urlHash(c.key),
      url,
      facts.title ?? null,
      facts.artworkUrl ?? null,
      facts.podcastGuid ?? null,
      facts.movedTo ?? null,
    ],
  );
}
