import type { FeedInput, Outcome } from '../subscriptions/service';
import * as subscriptions from '../subscriptions/service';
import type { Db } from '../db/pool';
import { clientTimestamp } from './sync-time';

/** Per request, as on gpodder.net: a first sync uploads a whole library at once. */
export const MAX_URLS = 10_000;

/** `[sent, stored]` for each URL the server rewrote, `[sent, ""]` for each it refused (as mygpo does). */
export type UpdateUrls = [string, string][];

/** The gpodder/Nextcloud view of the user's changes since a time: URLs exactly as stored. */
export async function pull(db: Db, userId: number, since: Date | undefined) {
  const { lastChange, changes } = await subscriptions.changesSince(db, userId, since);
  const add = changes.filter((c) => c.subscribed).map((c) => c.feedUrl);
  // A URL a record left (a moved feed) is removed, unless a subscribed record has it now.
  const added = new Set(add);
  const remove = [...new Set(changes.filter((c) => !c.subscribed && !added.has(c.feedUrl)).map((c) => c.feedUrl))];
  return {
    add,
    remove,
    timestamp: clientTimestamp(lastChange),
  };
}

/**
 * Adds through the same service as POST /v1/subscriptions (podcast schemes, guids, matching by guid
 * chain and URL history); removes unsubscribe the matching records. Returns the client's timestamp after
 * the writes and the URLs rewritten or refused.
 */
export async function push(
  db: Db,
  userId: number,
  add: string[],
  remove: string[],
): Promise<{ timestamp: number; updateUrls: UpdateUrls }> {
  const feeds: FeedInput[] = add.map((url) => ({ url }));
  const added = await subscriptions.subscribe(db, userId, feeds);
  const removed = await subscriptions.unsubscribe(db, userId, remove);
  const updateUrls: UpdateUrls = [];
  added.outcomes.forEach((o: Outcome, i) => {
    const sent = add[i]!;
    if (!o.ok) updateUrls.push([sent, '']);
    else if (o.url !== sent) updateUrls.push([sent, o.url]);
  });
  removed.stored.forEach((stored, i) => {
    const sent = remove[i]!;
    if (stored === null) updateUrls.push([sent, '']);
    else if (stored !== sent) updateUrls.push([sent, stored]);
  });
  const at = removed.changedAt ?? added.changedAt ?? (await subscriptions.lastChange(db, userId));
  return { timestamp: clientTimestamp(at), updateUrls };
}

/** Adds every listed feed and never removes (the simple API's PUT, OPML imports). */
export async function addAll(db: Db, userId: number, urls: string[]) {
  return subscriptions.subscribe(
    db,
    userId,
    urls.map((url) => ({ url })),
  );
}
