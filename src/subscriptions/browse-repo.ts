import type { Queryable } from '../db/pool';
import { CURRENT_URL_HASH } from './record-repo';

export type BrowseRow = {
  guid: string;
  feed_url: string;
  is_subscribed: boolean;
  subscription_changed: Date;
  title: string | null;
  artwork_url: string | null;
  total: number;
};

/**
 * A page of the user's records that are not deleted, with what the feed fetcher knows of their feeds,
 * ordered by title (the URL when there is none): those whose URL or title contains `text` (any case), of
 * the given state, with the number of such records.
 */
export async function browse(
  db: Queryable,
  userId: number,
  { text, subscribed, limit, offset }: { text: string; subscribed: boolean | null; limit: number; offset: number },
): Promise<BrowseRow[]> {
  const r = await db.query<BrowseRow>(
    `SELECT s.guid, s.feed_url, s.is_subscribed, s.subscription_changed, f.title, f.artwork_url,
            count(*) OVER ()::int AS total
       FROM subscriptions s LEFT JOIN feeds f ON f.url_hash = ${CURRENT_URL_HASH('s')}
      WHERE s.user_id = $1 AND s.deleted IS NULL
        AND ($2::boolean IS NULL OR s.is_subscribed = $2)
        AND ($3 = '' OR strpos(lower(s.feed_url), lower($3)) > 0 OR strpos(lower(coalesce(f.title, '')), lower($3)) > 0)
      ORDER BY lower(coalesce(f.title, s.feed_url)), s.id
      LIMIT $4 OFFSET $5`,
    [userId, subscribed, text, limit, offset],
  );
  return r.rows;
}
