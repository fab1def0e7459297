import type { Queryable } from '../db/pool';

// The toplist's SQL: every user's subscriptions, read (the subscription service writes them), with what the
// feed fetcher learnt of each feed.

export type ToplistRow = {
  feed_url: string;
  subscribers: number;
  title: string | null;
  description: string | null;
  author: string | null;
  link: string | null;
  artwork_url: string | null;
};

/**
 * The feeds with at least `min` subscribed users, most subscribers first, at most `limit`. A URL with a user
 * name or password before its host is left out: the list is public, and what is there is a credential.
 */
export async function mostSubscribed(db: Queryable, min: number, limit: number): Promise<ToplistRow[]> {
  const r = await db.query<ToplistRow>(
    `SELECT coalesce(f.feed_url, t.feed_url) AS feed_url, t.subscribers, f.title, f.description, f.author, f.link,
            f.artwork_url
       FROM (SELECT url_hash, count(*)::int AS subscribers, min(feed_url) AS feed_url
               FROM subscriptions
              WHERE is_subscribed AND deleted IS NULL AND feed_url !~ '^[^:/?#]*://[^/?#]*@'
              GROUP BY url_hash
             HAVING count(*) >= $1
              ORDER BY count(*) DESC, url_hash
              LIMIT $2) t
       LEFT JOIN feeds f ON f.url_hash = t.url_hash
      ORDER BY t.subscribers DESC, t.url_hash`,
    [min, limit],
  );
  return r.rows;
}
