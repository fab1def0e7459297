import { lockUser } from '../db/change-stamp';
import { withTransaction, type Db, type Queryable } from '../db/pool';
import * as archiveRepo from './archive-repo';
import * as listRepo from './list-repo';
import * as recordRepo from './record-repo';
import * as repo from './repo';
import { checkFeedUrl, parseGuid, urlHash } from './urls';

// Records whole, with their history: what an archive keeps of a user's subscriptions and how it is
// restored; and which feeds of a list a user is already subscribed to (an import's preview).

/** A record as an archive keeps it: its current URL and guid, the URLs and guids it had, its state. */
export type ArchivedRecord = {
  feedUrl: string;
  guid: string;
  subscribed: boolean;
  subscriptionChanged: Date;
  guidChanged: Date | null;
  /** The other URLs the record is known by (earlier ones, and the ones apps sent for it). */
  otherUrls: string[];
  /** The guids it had before the current one, oldest first. */
  earlierGuids: string[];
};

/** Every record of the user that is not deleted, with its history, oldest first. */
export async function archivedRecords(db: Queryable, userId: number): Promise<ArchivedRecord[]> {
  const rows = await archiveRepo.recordsWithHistory(db, userId);
  return rows.map((r) => ({
    feedUrl: r.feed_url,
    guid: r.guid,
    subscribed: r.is_subscribed,
    subscriptionChanged: r.subscription_changed,
    guidChanged: r.guid_changed,
    otherUrls: r.other_urls,
    earlierGuids: r.earlier_guids,
  }));
}

export type RestoreResult = {
  /** Records created (or, in a preview, that would be). */
  created: ArchivedRecord[];
  /** Records the user already has: one of their guids or URLs is the user's. Left as they are. */
  present: ArchivedRecord[];
  /** Records the rules refuse, with why. */
  refused: { record: ArchivedRecord; reason: string }[];
  /** The stamp of the write; undefined when nothing was written. */
  changedAt: Date | undefined;
};

type Checked = { record: ArchivedRecord; guids: string[]; urls: { feedUrl: string; hash: string }[] };

/** A record's guids and URLs after the rules, or why it is refused. */
function checkRecord(record: ArchivedRecord): Checked | string {
  const guids: string[] = [];
  for (const g of [record.guid, ...record.earlierGuids]) {
    const guid = parseGuid(g);
    if (!guid) return `invalid guid ${g}`;
    guids.push(guid);
  }
  const urls: Checked['urls'] = [];
  for (const u of [record.feedUrl, ...record.otherUrls]) {
    const c = checkFeedUrl(u);
    if (!c.ok) return `${u}: ${c.problem}`;
    urls.push({ feedUrl: c.feedUrl, hash: urlHash(c.key) });
  }
  return { record, guids, urls };
}

/**
 * The archive's records, checked, without what they share among themselves: a record whose guid or URL
 * is an earlier record's is refused; history another record has (a merge kept both sides' URLs) stays
 * with that record.
 */
function checkRecords(records: ArchivedRecord[], result: RestoreResult) {
  const checked: Checked[] = [];
  const seenGuids = new Set<string>();
  const seenHashes = new Set<string>();
  for (const record of records) {
    const c = checkRecord(record);
    if (typeof c === 'string') {
      result.refused.push({ record, reason: c });
      continue;
    }
    if (seenGuids.has(c.guids[0]!) || seenHashes.has(c.urls[0]!.hash)) {
      result.refused.push({ record, reason: 'its guid or URL is an earlier record’s of the archive' });
      continue;
    }
    // The history holds each guid and URL once per user: one the record names twice (or in two spellings
    // of one URL, itpc:// and http://) is kept once, as is one an earlier record has.
    c.guids = firstOfEach(c.guids, (g) => g, seenGuids);
    c.urls = firstOfEach(c.urls, (u) => u.hash, seenHashes);
    checked.push(c);
  }
  return { checked, guids: [...seenGuids], hashes: [...seenHashes] };
}

/** The items whose key is not yet in `seen`, the first of each; their keys are added to it. */
function firstOfEach<T>(items: T[], key: (item: T) => string, seen: Set<string>): T[] {
  return items.filter((item) => {
    if (seen.has(key(item))) return false;
    seen.add(key(item));
    return true;
  });
}

/** Writes the fresh records (one change stamp) with their earlier guids, other URLs and subscribed state. */
async function writeRecords(tx: Queryable, userId: number, fresh: Checked[]): Promise<Date> {
  const write: repo.SubscribeWrite = {
    created: fresh.map((c) => ({
      guid: c.guids[0]!,
      feedUrl: c.urls[0]!.feedUrl,
      urlHash: c.urls[0]!.hash,
      guidChanged: c.record.guidChanged !== null,
    })),
    resubscribed: [],
    earlierGuids: fresh.flatMap((c) => c.guids.slice(1).map((guid) => ({ id: null, newGuid: c.guids[0]!, guid }))),
    otherUrls: fresh.flatMap((c) =>
      c.urls.slice(1).map((u) => ({ id: null, newGuid: c.guids[0]!, hash: u.hash, feedUrl: u.feedUrl })),
    ),
  };
  const written = await repo.writeSubscriptions(tx, userId, await listRepo.lastChange(tx, userId), write);
  if (!written) throw new Error('the user changed under its own row lock');
  const unsubscribed = fresh.filter((c) => !c.record.subscribed).map((c) => c.guids[0]!);
  if (unsubscribed.length > 0) {
    const ids = await archiveRepo.idsOfGuids(tx, userId, unsubscribed);
    await recordRepo.markUnsubscribed(tx, userId, ids, written.at);
  }
  return written.at;
}

/**
 * Restores archived records as they were: each with its guid, URL, other URLs, earlier guids and
 * subscribed state, all in one transaction under one change stamp (so every app of the user sees them at
 * its next sync). A record that shares a guid or a URL with a record the user has is left alone (restoring
 * twice changes nothing); one that shares them with an earlier record of the same archive, or that the
 * rules refuse, is refused. With `dryRun` nothing is written.
 */
export async function restoreRecords(
  db: Db,
  userId: number,
  records: ArchivedRecord[],
  { dryRun = false } = {},
): Promise<RestoreResult> {
  const result: RestoreResult = { created: [], present: [], refused: [], changedAt: undefined };
  const { checked, guids, hashes } = checkRecords(records, result);
  const restore = async (tx: Queryable) => {
    const have = await archiveRepo.known(tx, userId, guids, hashes);
    const fresh: Checked[] = [];
    for (const c of checked) {
      const present = c.guids.some((g) => have.guids.has(g)) || c.urls.some((u) => have.hashes.has(u.hash));
      (present ? result.present : result.created).push(c.record);
      if (!present) fresh.push(c);
    }
    if (!dryRun && fresh.length > 0) result.changedAt = await writeRecords(tx, userId, fresh);
  };
  if (dryRun) await restore(db);
  else
    await withTransaction(db, async (tx) => {
      await lockUser(tx, userId);
      await restore(tx);
    });
  return result;
}

/** Which of these feed URLs (any URL a record has) the user is subscribed to, by the URL rules. */
export async function subscribedAmong(db: Queryable, userId: number, urls: string[]): Promise<Set<string>> {
  const hashOf = new Map<string, string>();
  for (const url of urls) {
    const c = checkFeedUrl(url);
    if (c.ok) hashOf.set(url, urlHash(c.key));
  }
  const subscribed = await archiveRepo.subscribedHashes(db, userId, [...new Set(hashOf.values())]);
  return new Set(urls.filter((u) => subscribed.has(hashOf.get(u) ?? '')));
}
