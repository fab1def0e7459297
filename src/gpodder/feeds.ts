import type { SkippedItem } from '../devices/service';
import type { Outcome } from '../subscriptions/service';
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
 * An app's upload of what it added and removed, as one change (subscriptions.applyChanges). Returns the
 * client's timestamp after it, `[sent, stored]` for each URL rewritten and `[sent, ""]` for each refused
 * (skipped, the rest applied), and what the door logs: the URLs sent in both lists and kept subscribed.
 */
export async function push(
  db: Db,
  userId: number,
  add: string[],
  remove: string[],
): Promise<{ timestamp: number; updateUrls: UpdateUrls; refused: SkippedItem[]; addedAndRemoved: string[] }> {
  const done = await subscriptions.applyChanges(db, userId, { add, remove });
  const updateUrls: UpdateUrls = [];
  const refused: SkippedItem[] = [];
  const note = (sent: string, o: { ok: true; url: string } | { ok: false; reason: string }) => {
    if (!o.ok) refused.push({ item: sent, reason: o.reason });
    const stored = o.ok ? o.url : '';
    if (stored !== sent) updateUrls.push([sent, stored]);
  };
  done.added.forEach((o: Outcome, i) => note(add[i]!, o));
  done.removed.forEach((o, i) => note(remove[i]!, o));
  const at = done.changedAt ?? (await subscriptions.lastChange(db, userId));
  return { timestamp: clientTimestamp(at), updateUrls, refused, addedAndRemoved: done.addedAndRemoved };
}

/** Adds every listed feed and never removes (the simple API's PUT, OPML imports). */
export async function addAll(db: Db, userId: number, urls: string[]) {
  return subscriptions.subscribe(
    db,
    userId,
    urls.map((url) => ({ url })),
  );
}
