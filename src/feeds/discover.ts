import type { Queryable } from '../db/pool';
import * as subscriptions from '../subscriptions/service';
import { urlHashOf } from '../subscriptions/service';
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
 * nobody had is due at once, and so is one last fetched before a record subscribed to it. Returns how many
 * feeds were new.
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
    await fetchForSubscribers(db, records);
    const last = records.at(-1);
    // A full step leaves the rest for the next look; otherwise every record up to the last change is seen.
    if (last && records.length === RECORDS_PER_STEP) await repo.lookedAt(db, u.user_id, last.changed, String(last.id));
    else await repo.lookedAt(db, u.user_id, u.last_change, repo.LAST_ID);
  }
  return found;
}

/**
 * The known feeds of these records, subscribed since their last fetch, due at once (repo.dueForSubscribers):
 * a person who subscribes to a feed others follow sees what a fetch made for them learnt, about as soon as
 * one who subscribes to a feed nobody had.
 */
async function fetchForSubscribers(db: Queryable, records: { feedUrl: string; subscribedSince: Date | null }[]) {
  const [hashes, since]: [string[], Date[]] = [[], []];
  for (const { feedUrl, subscribedSince } of records) {
    const hash = urlHashOf(feedUrl);
    if (hash === undefined || subscribedSince === null) continue;
    hashes.push(hash);
    since.push(subscribedSince);
  }
  if (hashes.length > 0) await repo.dueForSubscribers(db, hashes, since);
}

/** A look costs a scan of the users (about 0.1 s at 150,000): the looks take at most this share of the time. */
const LOOK_SHARE = 0.05;

/**
 * Looks for new feeds (`discoverNewFeeds`) when called, but not sooner than `everyMs` after the last look
 * began, nor sooner than the last look took / LOOK_SHARE after it ended: a second apart for a small
 * instance, further apart where a look is dear, however often the fetcher asks (between every batch of a
 * run, and once a second while idle). The first call looks.
 */
export function pacedLooks(db: Queryable, everyMs = 1000): () => Promise<void> {
  let next = 0;
  return async () => {
    const began = Date.now();
    if (began < next) return;
    next = Infinity;
    try {
      await discoverNewFeeds(db);
    } finally {
      const ended = Date.now();
      next = Math.max(began + everyMs, ended + (ended - began) / LOOK_SHARE);
    }
  };
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
