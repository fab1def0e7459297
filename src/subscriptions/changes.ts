import { lockUser, takeChangeStamp } from '../db/change-stamp';
import { withTransaction, type Db } from '../db/pool';
import * as recordRepo from './record-repo';
import { checkFeed, isItem, matchAndWriteLocked, outcomesOf, writeItems } from './subscribe';
import type { Outcome } from './types';
import { checkFeedUrl, urlHash, type FeedUrlProblem } from './urls';

// An upload of an app that syncs by state (gpodder.net v2, Nextcloud): the URLs it added and removed since
// its last sync, applied as one change.

export type StateChanges = { add: string[]; remove: string[] };

export type AppliedChanges = {
  /** The stamp of the one change the upload made; undefined when it changed nothing. */
  changedAt: Date | undefined;
  /** What became of each added URL, in order. */
  added: Outcome[];
  /** Each removed URL as it is stored, or why the URL rules refuse it, in order. */
  removed: ({ ok: true; url: string } | { ok: false; url: string; reason: FeedUrlProblem })[];
  /** URLs sent in both lists (or naming one record from both): kept subscribed, never removed. */
  addedAndRemoved: string[];
};

/**
 * Applies an upload in one transaction with one change stamp, so that no reader sees its adds without its
 * removes. Adds go through the same steps as a subscribe; a subscribed record found under another of its
 * URLs keeps its current URL (the app learns it from the outcome). Removes unsubscribe the record that has
 * the URL (any URL it had); an unknown URL changes nothing. A URL refused by the URL rules is skipped, the
 * rest applied.
 *
 * A URL in both lists is kept subscribed: the upload does not say which came last (old AntennaPod builds
 * and their forks send both after a subscribe and an unsubscribe between two syncs), and a wrong removal
 * makes every app drop the feed and its downloads, while a wrong add is one tap to undo.
 */
export async function applyChanges(db: Db, userId: number, { add, remove }: StateChanges): Promise<AppliedChanges> {
  const checked = add.map((url) => checkFeed({ url }));
  const items = checked.filter(isItem);
  const addedHashes = new Set(items.map((i) => i.hash));
  const removals = remove.map(checkFeedUrl);
  const removed = removals.map((c, i) =>
    c.ok ? { ok: true as const, url: c.feedUrl } : { ok: false as const, url: remove[i]!, reason: c.problem },
  );
  const addedAndRemoved = remove.filter((_, i) => {
    const c = removals[i]!;
    return c.ok && addedHashes.has(urlHash(c.key));
  });
  const removeHashes = [
    ...new Set(removals.flatMap((c) => (c.ok && !addedHashes.has(urlHash(c.key)) ? [urlHash(c.key)] : []))),
  ];
  if (removeHashes.length === 0) {
    // Adds alone: the subscribe path, with its one-statement write of feeds all new.
    if (items.length === 0) return { changedAt: undefined, added: checked as Outcome[], removed, addedAndRemoved };
    const written = await writeItems(db, userId, items, { keepLiveUrls: true });
    return { changedAt: written.at, added: outcomesOf(checked, written.plan), removed, addedAndRemoved };
  }
  return withTransaction(db, async (tx) => {
    await lockUser(tx, userId);
    const written = items.length > 0 ? await matchAndWriteLocked(tx, userId, items, { keepLiveUrls: true }) : undefined;
    const keptIds = new Set(written?.plan.targets.flatMap((t) => (t.id === undefined ? [] : [t.id])));
    const ids = await recordRepo.subscribedWithUrls(tx, userId, removeHashes);
    // A removed URL of a record this upload adds under another URL: the add wins, as above.
    const kept = ids.filter((id) => keptIds.has(id));
    const unsubscribe = ids.filter((id) => !keptIds.has(id));
    if (kept.length > 0) addedAndRemoved.push(...(await recordRepo.feedUrlsOf(tx, userId, kept)));
    let changedAt = written?.at;
    if (unsubscribe.length > 0) {
      changedAt ??= await takeChangeStamp(tx, userId);
      await recordRepo.markUnsubscribed(tx, userId, unsubscribe, changedAt);
    }
    return {
      changedAt,
      added: written ? outcomesOf(checked, written.plan) : (checked as Outcome[]),
      removed,
      addedAndRemoved,
    };
  });
}
