import { lockUser, takeChangeStamp } from '../db/change-stamp';
import { onConnection, withTransaction, type Db, type Queryable } from '../db/pool';
import { onlyCreates, planUpsert, type Item, type Plan, type Target } from './plan';
import * as repo from './repo';
import * as recordRepo from './record-repo';
import type { FeedInput, Outcome } from './types';
import { checkFeedUrl, parseGuid, podcastGuid, urlHash } from './urls';

// Subscribing and unsubscribing (the seam is service.ts). The feed fetcher finds new feeds by itself.

// Subscribing.

/** Checks one requested feed: an item to plan, or the reason it is refused. */
export function checkFeed(input: FeedInput): Item | Outcome {
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

export const isItem = (x: Item | Outcome): x is Item => !('ok' in x);

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

export type Written = repo.Written & { plan: Plan };
/** How a plan is made: see planUpsert. */
export type PlanOptions = { keepLiveUrls?: boolean };

/** Fails as a whole, writing nothing, when a feed exists: an answer, not an error (then undefined). */
async function ifAllNew<T>(db: Db, insert: (c: Queryable) => Promise<T | undefined>): Promise<T | undefined> {
  // On a connection of its own, which goes back to the pool whole when the statement fails.
  return onConnection(db, insert).catch((err: unknown) => {
    if (repo.isExistingFeed(err)) return undefined;
    throw err;
  });
}

/** The plan of items that are all new to the user: undefined unless each creates a plain record. */
function planAllNew(items: Item[]): Plan | undefined {
  const plan = planUpsert(
    items,
    items.map(() => ({ byGuid: null, byUrl: null })),
  );
  return onlyCreates(plan) ? plan : undefined;
}

/**
 * Most POSTs add feeds the user does not have: one statement inserts them if that is so, and fails as a
 * whole if any exists (then undefined). Only a plan that creates plain records qualifies: one where two
 * items of the request land in one record writes history, which needs the general write.
 */
async function insertAllNew(db: Db, userId: number, items: Item[]): Promise<Written | undefined> {
  const plan = planAllNew(items);
  if (!plan) return undefined;
  const written = await ifAllNew(db, (c) => repo.insertIfAllNew(c, userId, writesOf(plan).created));
  return written && { plan, ...written };
}

/**
 * Subscribes the user to feeds that are all new to them, each in a record of its own, with what the caller
 * writes of those records (`also`), in one statement: the records' rows as `also` reads them (alias c), and
 * the change stamp. Undefined, having written nothing, if any feed is not new (or two items are one
 * record), a row of the caller's breaks a unique key, or another write of the user came in between.
 */
export async function subscribeAllNew<T>(
  db: Db,
  userId: number,
  items: Item[],
  also: repo.AlsoWritten,
): Promise<(repo.Written & { rows: T[] }) | undefined> {
  const plan = planAllNew(items);
  if (!plan || plan.targets.length !== items.length) return undefined;
  return ifAllNew(db, (c) => repo.insertIfAllNewWith<T>(c, userId, writesOf(plan).created, also));
}

/** The user's records the items match (by guid, then URL), and the user's last change they were read at. */
export function matchesOf(db: Queryable, userId: number, items: Item[]): Promise<repo.Matches> {
  return repo.findMatches(
    db,
    userId,
    items.map((x) => x.guid),
    items.map((x) => x.hash),
  );
}

/**
 * matchesOf, and for each item the record it names (a live match first, else by guid, then URL), read as
 * `read` says, in the same statement.
 */
export function matchesAndRecordsOf<T>(
  db: Queryable,
  userId: number,
  items: Item[],
  read: repo.NamedRecordRead,
): Promise<repo.Matches & { records: (T | undefined)[] }> {
  return repo.findMatchesAndRecords<T>(
    db,
    userId,
    items.map((x) => x.guid),
    items.map((x) => x.hash),
    read,
  );
}

/**
 * Plans against the records the items matched and writes, if no other write of this user came in since they
 * were read (a compare-and-set on the user's change stamp); undefined if one did.
 */
async function writeMatched(
  db: Queryable,
  userId: number,
  items: Item[],
  found: repo.Matches,
  options: PlanOptions,
): Promise<Written | undefined> {
  const plan = planUpsert(items, found.matches, options);
  const written = await repo.writeSubscriptions(db, userId, found.lastChange, writesOf(plan));
  return written && { plan, ...written };
}

/** Reads what the items match and writes (writeMatched); undefined if another write came in between. */
export async function matchAndWrite(
  db: Queryable,
  userId: number,
  items: Item[],
  options: PlanOptions = {},
): Promise<Written | undefined> {
  return writeMatched(db, userId, items, await matchesOf(db, userId, items), options);
}

/**
 * writeMatched under the user's lock (taken by the caller), with matches read under it and nothing of the
 * user written since: the compare-and-set cannot fail.
 */
export async function writeMatchedLocked(
  tx: Queryable,
  userId: number,
  items: Item[],
  found: repo.Matches,
  options: PlanOptions = {},
): Promise<Written> {
  const written = await writeMatched(tx, userId, items, found, options);
  if (!written) throw new Error('the user changed under its own row lock');
  return written;
}

/** matchAndWrite under the user's lock (taken by the caller), where the compare-and-set cannot fail. */
export async function matchAndWriteLocked(
  tx: Queryable,
  userId: number,
  items: Item[],
  options: PlanOptions = {},
): Promise<Written> {
  return writeMatchedLocked(tx, userId, items, await matchesOf(tx, userId, items), options);
}

/**
 * Writes the items: all new in one statement if they are, else matched and written, again if another write
 * of the user came in between, and under the user's lock if that happens twice.
 */
export async function writeItems(db: Db, userId: number, items: Item[], options: PlanOptions = {}): Promise<Written> {
  return (
    (await insertAllNew(db, userId, items)) ??
    (await matchAndWrite(db, userId, items, options)) ??
    (await matchAndWrite(db, userId, items, options)) ??
    (await withTransaction(db, async (tx) => {
      await lockUser(tx, userId);
      return matchAndWriteLocked(tx, userId, items, options);
    }))
  );
}

/** Each input's outcome, in input order: its refusal, or the URL as stored and the record's guid. */
export function outcomesOf(checked: (Item | Outcome)[], plan: Plan): Outcome[] {
  let next = 0;
  return checked.map((c): Outcome => {
    if (!isItem(c)) return c;
    const target = plan.targetOf[next++]!;
    return { ok: true, url: target.keepsUrl ? target.feedUrl : c.feedUrl, guid: target.guid };
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
  const written = await writeItems(db, userId, items);
  return { changedAt: written.at, outcomes: outcomesOf(checked, written.plan) };
}

// Unsubscribing, for protocols that sync by state (gpodder.net v2, Nextcloud).

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
    const ids = await recordRepo.subscribedWithUrls(tx, userId, hashes);
    if (ids.length === 0) return undefined;
    const stamp = await takeChangeStamp(tx, userId);
    await recordRepo.markUnsubscribed(tx, userId, ids, stamp);
    return stamp;
  });
  return { changedAt, stored };
}
