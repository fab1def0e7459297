import { lockUser, takeChangeStamp } from '../db/change-stamp';
import { withTransaction, type Db, type Queryable } from '../db/pool';
import { Deleted, InvalidInput, NotFound } from '../errors';
import { onlyCreates, planUpsert, type Item, type Plan, type Target } from './plan';
import * as repo from './repo';
import { checkFeedUrl, parseGuid, podcastGuid, urlHash, type FeedUrlProblem } from './urls';

/** A feed to subscribe to, as a client names it. */
export type FeedInput = { url: string; guid?: string | undefined };

/** What became of one feed of a subscribe call. */
export type Outcome =
  { ok: true; url: string; guid: string } | { ok: false; url: string; reason: FeedUrlProblem | 'Invalid guid' };

/** A record as a client sees it, named by the guid it was asked for (or had at `since`). */
export type SubscriptionRecord = {
  feedUrl: string;
  /** The guid the record is shown under: asked for, or the one it had at `since`. */
  guid: string;
  /** The newest guid of the record's chain. */
  currentGuid: string;
  isSubscribed: boolean;
  subscriptionChanged: Date;
  guidChanged: Date | null;
  deleted: Date | null;
};

// Subscribing.

/** Checks one requested feed: an item to plan, or the reason it is refused. */
function checkFeed(input: FeedInput): Item | Outcome {
  const url = checkFeedUrl(input.url);
  if (!url.ok) return { ok: false, url: input.url, reason: url.problem };
  let guid: string | undefined;
  if (input.guid !== undefined) {
    guid = parseGuid(input.guid);
    if (!guid) return { ok: false, url: input.url, reason: 'Invalid guid' };
  }
  return {
    feedUrl: url.feedUrl,
    key: url.key,
    hash: urlHash(url.key),
    guid: guid ?? podcastGuid(url.feedUrl),
    explicitGuid: guid !== undefined,
  };
}

const isItem = (x: Item | Outcome): x is Item => !('ok' in x);

/** The rows a plan writes; a new record is named by its guid until the database gives it an id. */
function writesOf({ targets }: Plan): repo.SubscribeWrite {
  const ref = (t: Target) => (t.id === undefined ? { id: null, newGuid: t.guid } : { id: t.id, newGuid: null });
  return {
    created: targets
      .filter((t) => t.id === undefined)
      .map((t) => ({ guid: t.guid, feedUrl: t.feedUrl, urlHash: t.urlHash, guidChanged: t.guidChanged })),
    resubscribed: targets
      .filter((t) => t.id !== undefined)
      .map((t) => ({ id: t.id!, guid: t.guid, feedUrl: t.feedUrl, guidChanged: t.guidChanged })),
    earlierGuids: targets.flatMap((t) => t.earlierGuids.map((guid) => ({ ...ref(t), guid }))),
    otherUrls: targets.flatMap((t) => t.otherUrls.map((u) => ({ ...ref(t), ...u }))),
  };
}

type Written = { plan: Plan; at: Date };

/**
 * Most POSTs add feeds the user does not have: one statement inserts them if that is so, and fails as a
 * whole if any exists (then undefined). Only a plan that creates plain records qualifies: one where two
 * items of the request land in one record writes history, which needs the general write.
 */
async function insertAllNew(db: Queryable, userId: number, items: Item[]): Promise<Written | undefined> {
  const plan = planUpsert(
    items,
    items.map(() => ({ byGuid: null, byUrl: null })),
  );
  if (!onlyCreates(plan)) return undefined;
  const at = await repo.insertIfAllNew(db, userId, writesOf(plan).created).catch((err: unknown) => {
    if (repo.isExistingFeed(err)) return undefined;
    throw err;
  });
  return at && { plan, at };
}

/**
 * Plans against the records the items match and writes, if no other write of this user came in between
 * (a compare-and-set on the user's change stamp); undefined if one did.
 */
async function matchAndWrite(db: Queryable, userId: number, items: Item[]): Promise<Written | undefined> {
  const found = await repo.findMatches(
    db,
    userId,
    items.map((x) => x.guid),
    items.map((x) => x.hash),
  );
  const plan = planUpsert(items, found.matches);
  const at = await repo.writeSubscriptions(db, userId, found.lastChange, writesOf(plan));
  return at && { plan, at };
}

/** matchAndWrite under the user's lock, where the compare-and-set cannot fail: for when others keep winning. */
function matchAndWriteLocked(db: Db, userId: number, items: Item[]): Promise<Written> {
  return withTransaction(db, async (tx) => {
    await lockUser(tx, userId);
    const written = await matchAndWrite(tx, userId, items);
    if (!written) throw new Error('the user changed under its own row lock');
    return written;
  });
}

/**
 * Subscribes the user to each feed, in one transaction with a constant number of statements whatever
 * the number of feeds. Every input gets one outcome, in input order; changedAt is the stamp of the
 * change (undefined when every feed was refused and nothing was written).
 */
export async function subscribe(
  db: Db,
  userId: number,
  feeds: FeedInput[],
): Promise<{ changedAt: Date | undefined; outcomes: Outcome[] }> {
  const checked = feeds.map(checkFeed);
  const items = checked.filter(isItem);
  if (items.length === 0) return { changedAt: undefined, outcomes: checked as Outcome[] };
  const written =
    (await insertAllNew(db, userId, items)) ??
    (await matchAndWrite(db, userId, items)) ??
    (await matchAndWrite(db, userId, items)) ??
    (await matchAndWriteLocked(db, userId, items));
  let next = 0;
  const outcomes = checked.map((c): Outcome => {
    if (!isItem(c)) return c;
    return { ok: true, url: c.feedUrl, guid: written.plan.targetOf[next++]!.guid };
  });
  return { changedAt: written.at, outcomes };
}

// Reading.

function recordOf(row: repo.ListedRow | repo.SubscriptionRow, shown: string): SubscriptionRecord {
  return {
    feedUrl: row.feed_url,
    guid: shown,
    currentGuid: row.guid,
    isSubscribed: row.is_subscribed,
    subscriptionChanged: row.subscription_changed,
    guidChanged: row.guid_changed,
    deleted: row.deleted,
  };
}

/**
 * A page of the user's records changed after `since` (all records without it), in creation order, the
 * number of such records, and the user's last change stamp (what a client sends back as `since`).
 */
export async function listChanges(
  db: Queryable,
  userId: number,
  { since, page, perPage }: { since?: Date | undefined; page: number; perPage: number },
): Promise<{ lastChange: Date; total: number; records: SubscriptionRecord[] }> {
  const offset = (page - 1) * perPage;
  const r = since
    ? await repo.listPageSince(db, userId, since, perPage, offset)
    : await repo.listPage(db, userId, perPage, offset);
  return { lastChange: r.lastChange, total: r.total, records: r.rows.map((row) => recordOf(row, row.shown_guid)) };
}

/** The record with this guid (any of its chain) that is not deleted. */
async function liveRecord(db: Queryable, userId: number, guid: string) {
  const row = await repo.findByGuid(db, userId, guid);
  if (!row) throw new NotFound();
  if (row.deleted) throw new Deleted();
  return row;
}

export async function getRecord(db: Queryable, userId: number, guid: string): Promise<SubscriptionRecord> {
  return recordOf(await liveRecord(db, userId, guid), guid);
}

/** The id of the live record with this guid, for a caller that holds the user's lock (deletions). */
export async function liveRecordId(tx: Queryable, userId: number, guid: string): Promise<number> {
  return (await liveRecord(tx, userId, guid)).id;
}

// Changing one record.

export type Change = { feedUrl?: string | undefined; guid?: string | undefined; subscribed?: boolean | undefined };
/** What a change did: only the fields that changed, and the stamps of what changed. */
export type ChangeReport = {
  feedUrl?: string;
  subscribed?: boolean;
  subscriptionChanged?: Date;
  guid?: string;
  guidChanged?: Date;
};

type Row = repo.SubscriptionRow & { current: boolean };
type CheckedUrl = { feedUrl: string; key: string };
/** The parts of a change that differ from the record. */
type Diff = { url?: CheckedUrl; subscribed?: boolean; guid?: string };

/** Validates a change before anything is read: a bad URL or guid is refused as a whole. */
function checkChange(change: Change): { url?: CheckedUrl; guid?: string; subscribed?: boolean } {
  const out: { url?: CheckedUrl; guid?: string; subscribed?: boolean } = {};
  if (change.feedUrl !== undefined) {
    const url = checkFeedUrl(change.feedUrl);
    if (!url.ok) throw new InvalidInput(url.problem);
    out.url = url;
  }
  if (change.guid !== undefined) {
    const guid = parseGuid(change.guid);
    if (!guid) throw new InvalidInput('Invalid guid');
    out.guid = guid;
  }
  if (change.subscribed !== undefined) out.subscribed = change.subscribed;
  return out;
}

/** Unchanged values change nothing, not even the user's change stamp. */
function diffOf(row: Row, wanted: ReturnType<typeof checkChange>): Diff {
  const diff: Diff = {};
  if (wanted.url && wanted.url.feedUrl !== row.feed_url) diff.url = wanted.url;
  if (wanted.subscribed !== undefined && wanted.subscribed !== row.is_subscribed) diff.subscribed = wanted.subscribed;
  if (wanted.guid !== undefined && wanted.guid !== row.guid) diff.guid = wanted.guid;
  return diff;
}

/** A new URL keeps the old one finding the record; a URL another record has stays that record's. */
async function rememberUrl(tx: Queryable, userId: number, recordId: number, url: CheckedUrl): Promise<void> {
  const hash = urlHash(url.key);
  if ((await repo.findUrlOwner(tx, userId, hash)) === undefined)
    await repo.addOtherUrl(tx, userId, recordId, hash, url.feedUrl);
}

/**
 * Gives the record `newGuid` and writes its state. A guid that another record of the user has (current
 * or earlier) makes the two one record under that guid, and the most recently changed state wins (this
 * change counts as a change of this record, if it changed the URL or the subscription).
 */
async function changeGuid(
  tx: Queryable,
  userId: number,
  row: Row,
  newGuid: string,
  state: repo.RecordState,
  stamp: Date,
  changedState: boolean,
): Promise<void> {
  const owner = await repo.findByGuid(tx, userId, newGuid);
  if (owner && owner.id !== row.id) {
    const thisWins = changedState || row.changed > owner.changed;
    await repo.mergeInto(tx, userId, row, owner.id, stamp);
    if (!owner.current) {
      // newGuid was an earlier guid of the other record: it becomes current again.
      await repo.removeEarlierGuid(tx, userId, newGuid);
      await repo.addEarlierGuid(tx, userId, owner.id, owner.guid, stamp);
    }
    const winner = thisWins
      ? state
      : {
          feedUrl: owner.feed_url,
          isSubscribed: owner.is_subscribed,
          subscriptionChanged: owner.subscription_changed,
          deleted: owner.deleted,
        };
    await repo.updateRecord(tx, userId, owner.id, { ...winner, guid: newGuid, guidChanged: stamp });
    return;
  }
  // A new guid, or an earlier guid of this record becoming current again.
  if (owner) await repo.removeEarlierGuid(tx, userId, newGuid);
  await repo.addEarlierGuid(tx, userId, row.id, row.guid, stamp);
  await repo.updateRecord(tx, userId, row.id, { ...state, guid: newGuid, guidChanged: stamp });
}

function reportOf(diff: Diff, stamp: Date): ChangeReport {
  const report: ChangeReport = {};
  if (diff.url) report.feedUrl = diff.url.feedUrl;
  if (diff.subscribed !== undefined) report.subscribed = diff.subscribed;
  if (diff.url || diff.subscribed !== undefined) report.subscriptionChanged = stamp;
  if (diff.guid !== undefined) {
    report.guid = diff.guid;
    report.guidChanged = stamp;
  }
  return report;
}

/**
 * Changes the feed URL, guid or subscription state of the record with this guid (any of its chain);
 * applies to the newest record of the chain and reports only what changed.
 */
export async function change(db: Db, userId: number, guid: string, wanted: Change): Promise<ChangeReport> {
  const checked = checkChange(wanted);
  return withTransaction(db, async (tx) => {
    await lockUser(tx, userId);
    const row = await liveRecord(tx, userId, guid);
    const diff = diffOf(row, checked);
    if (!diff.url && diff.subscribed === undefined && diff.guid === undefined) return {};
    const stamp = await takeChangeStamp(tx, userId);
    const changedState = diff.url !== undefined || diff.subscribed !== undefined;
    const state: repo.RecordState = {
      feedUrl: diff.url?.feedUrl ?? row.feed_url,
      guid: row.guid,
      isSubscribed: diff.subscribed ?? row.is_subscribed,
      subscriptionChanged: changedState ? stamp : row.subscription_changed,
      guidChanged: row.guid_changed,
      deleted: null,
    };
    if (diff.url) await rememberUrl(tx, userId, row.id, diff.url);
    if (diff.guid !== undefined) await changeGuid(tx, userId, row, diff.guid, state, stamp, changedState);
    else await repo.updateRecord(tx, userId, row.id, state);
    return reportOf(diff, stamp);
  });
}

// For protocols that sync by state changes (gpodder.net v2, Nextcloud): no guids, whole lists.

/** A record's feed and whether it is subscribed (false for unsubscribed and deleted records). */
export type FeedState = { feedUrl: string; subscribed: boolean };

/**
 * Every record changed at or after `since` (every record without it), in creation order, and the user's
 * last change stamp read in the same statement. "At or after": a client that sends back a time a little
 * before the stamp it was given misses nothing (a change may come twice).
 */
export async function changesSince(
  db: Queryable,
  userId: number,
  since: Date | undefined,
): Promise<{ lastChange: Date; changes: FeedState[] }> {
  const r = await repo.changesSince(db, userId, since);
  return {
    lastChange: r.lastChange,
    changes: r.rows.map((x) => ({ feedUrl: x.feed_url, subscribed: x.is_subscribed })),
  };
}

/**
 * Unsubscribes the user from each feed that a record has (by any URL it had), in one transaction. A URL
 * the user has no subscribed record for changes nothing; nothing changed takes no change stamp. Each URL
 * comes back as it would be stored (null when refused), in input order.
 */
export async function unsubscribe(
  db: Db,
  userId: number,
  urls: string[],
): Promise<{ changedAt: Date | undefined; stored: (string | null)[] }> {
  const checked = urls.map(checkFeedUrl);
  const stored = checked.map((c) => (c.ok ? c.feedUrl : null));
  const hashes = checked.flatMap((c) => (c.ok ? [urlHash(c.key)] : []));
  if (hashes.length === 0) return { changedAt: undefined, stored };
  const changedAt = await withTransaction(db, async (tx) => {
    await lockUser(tx, userId);
    const ids = await repo.subscribedWithUrls(tx, userId, hashes);
    if (ids.length === 0) return undefined;
    const stamp = await takeChangeStamp(tx, userId);
    await repo.markUnsubscribed(tx, userId, ids, stamp);
    return stamp;
  });
  return { changedAt, stored };
}

/** The user's last change stamp: what a state-syncing client is told after a write that changed nothing. */
export const lastChange = (db: Queryable, userId: number): Promise<Date> => repo.lastChange(db, userId);

/** The feeds the user is subscribed to, in the order they were added. */
export const subscribedFeeds = (db: Queryable, userId: number): Promise<string[]> => repo.subscribedFeeds(db, userId);

/** The id of the user's record that has (or had) the URL with this key, if any. */
export const recordIdByUrlKey = (db: Queryable, userId: number, hash: string): Promise<number | undefined> =>
  repo.findUrlOwner(db, userId, hash);
