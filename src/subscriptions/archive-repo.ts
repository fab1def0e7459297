import { arrayLiteral } from '../db/array-literal';
import type { Queryable } from '../db/pool';

// What an archive reads and a restore or an import looks up: whole records with their history, and which
// guids and URL keys a user has.

export type ArchivedRow = {
  guid: string;
  feed_url: string;
  is_subscribed: boolean;
  subscription_changed: Date;
  guid_changed: Date | null;
  other_urls: string[];
  earlier_guids: string[];
};

/**
 * Every record that is not deleted, oldest first, with its earlier guids (oldest first) and the other URLs
 * it is known by: the ones it gained, and the ones it had before a change of its URL (its first URL is kept
 * as a key, its text in the moves).
 */
export async function recordsWithHistory(db: Queryable, userId: number): Promise<ArchivedRow[]> {
  const r = await db.query<ArchivedRow>(
    `SELECT s.guid, s.feed_url, s.is_subscribed, s.subscription_changed, s.guid_changed,
            array(SELECT url FROM (SELECT x.feed_url AS url FROM subscription_urls x
                                    WHERE x.user_id = s.user_id AND x.subscription_id = s.id
                                   UNION
                                   SELECT m.old_url FROM subscription_moves m
                                    WHERE m.user_id = s.user_id AND m.subscription_id = s.id) urls
                   WHERE url <> s.feed_url ORDER BY url) AS other_urls,
            array(SELECT g.guid::text FROM subscription_guids g
                   WHERE g.user_id = s.user_id AND g.subscription_id = s.id ORDER BY g.replaced_at, g.seq) AS earlier_guids
       FROM subscriptions s
      WHERE s.user_id = $1 AND s.deleted IS NULL
      ORDER BY s.id`,
    [userId],
  );
  return r.rows;
}

/** Which of these guids and URL keys (as urlHash writes them) the user has (current or earlier guids, first or other URLs). */
export async function known(
  db: Queryable,
  userId: number,
  guids: string[],
  hashes: string[],
): Promise<{ guids: Set<string>; hashes: Set<string> }> {
  const r = await db.query<{ kind: 'guid' | 'hash'; value: string }>(
    `SELECT 'guid' AS kind, guid::text AS value FROM subscriptions WHERE user_id = $1 AND guid = ANY ($2::uuid[])
     UNION ALL
     SELECT 'guid', guid::text FROM subscription_guids WHERE user_id = $1 AND guid = ANY ($2::uuid[])
     UNION ALL
     SELECT 'hash', replace(url_hash::text, '-', '') FROM subscriptions WHERE user_id = $1 AND url_hash = ANY ($3::uuid[])
     UNION ALL
     SELECT 'hash', replace(url_hash::text, '-', '') FROM subscription_urls WHERE user_id = $1 AND url_hash = ANY ($3::uuid[])`,
    [userId, arrayLiteral(guids), arrayLiteral(hashes)],
  );
  const found = { guids: new Set<string>(), hashes: new Set<string>() };
  for (const row of r.rows) (row.kind === 'guid' ? found.guids : found.hashes).add(row.value);
  return found;
}

/** Which of these URL keys name a subscribed record of the user (by its first URL or another one). */
export async function subscribedHashes(db: Queryable, userId: number, hashes: string[]): Promise<Set<string>> {
  const r = await db.query<{ hash: string }>(
    `SELECT replace(s.url_hash::text, '-', '') AS hash FROM subscriptions s
      WHERE s.user_id = $1 AND s.url_hash = ANY ($2::uuid[]) AND s.is_subscribed AND s.deleted IS NULL
     UNION
     SELECT replace(x.url_hash::text, '-', '') FROM subscription_urls x
       JOIN subscriptions s ON s.user_id = x.user_id AND s.id = x.subscription_id
      WHERE x.user_id = $1 AND x.url_hash = ANY ($2::uuid[]) AND s.is_subscribed AND s.deleted IS NULL`,
    [userId, arrayLiteral(hashes)],
  );
  return new Set(r.rows.map((x) => x.hash));
}

/** The ids of the user's records with these current guids. */
export async function idsOfGuids(db: Queryable, userId: number, guids: string[]): Promise<number[]> {
  const r = await db.query<{ id: number }>(
    'SELECT id FROM subscriptions WHERE user_id = $1 AND guid = ANY ($2::uuid[])',
    [userId, arrayLiteral(guids)],
  );
  return r.rows.map((x) => x.id);
}
