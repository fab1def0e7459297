import type { Queryable } from '../db/pool';
import * as subscriptions from '../subscriptions/service';
import { urlHashOf } from '../subscriptions/urls';
import * as repo from './repo';

// The fetcher finds the feeds people subscribe to by itself, after the requests: a subscription write
// costs nothing extra for the fetch schedule (docs/decisions/feed-fetcher.md, "Finding new feeds").

/** Users looked at in one go; the rest wait for the next look, a second later. */
const USERS_PER_LOOK = 100;
/** Records looked at in one step of one user: every statement stays small, whatever a user imported. */
const RECORDS_PER_STEP = 2000;

/**
 * Notes the feeds of the records that changed since the last look, per user: every live record changed
 * after the position the fetcher last looked up to, and at or before the user's last change, at most
 * RECORDS_PER_STEP a user and look (a user who imported 100,000 feeds takes 50 looks, none of them long). A user's stamps
 * follow commit order, so a committed last change means every earlier change is committed too, and one
 * still under way is stamped later: nothing is missed, whatever the order in which users write. A feed
 * nobody had is due at once. Returns how many feeds were new.
 */
export async function discoverNewFeeds(db: Queryable): Promise<number> {
  let found = 0;
  for (const u of await repo.usersToLookAt(db, USERS_PER_LOOK)) {
    // Within the stamp looked up to, after the record looked at last (all of them: from the next stamp on).
    const after = { changed: u.noted_until, id: u.noted_id ?? '0' };
    const records = await subscriptions.urlsChangedBetween(db, u.user_id, after, u.last_change, RECORDS_PER_STEP);
    found += await noteFeeds(
      db,
      records.map((r) => r.feedUrl),
    );
    const last = records.at(-1);
    // A full step leaves the rest for the next look; otherwise every record up to the last change is seen.
    if (last && records.length === RECORDS_PER_STEP) await repo.lookedAt(db, u.user_id, last.changed, String(last.id));
    else await repo.lookedAt(db, u.user_id, u.last_change, repo.LAST_ID);
  }
  return found;
}

/** Notes feeds the fetcher learnt of (a feed's new home), due at once if nobody had them; how many were new. */
export async function noteFeeds(db: Queryable, urls: string[]): Promise<number> {
  const byHash = new Map<string, string>();
  for (const url of urls) {
    const hash = urlHashOf(url);
    if (hash !== undefined && !byHash.has(hash)) byHash.set(hash, url);
  }
  return byHash.size === 0 ? 0 : repo.addFeeds(db, [...byHash.keys()], [...byHash.values()]);
}
