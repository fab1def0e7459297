import { lockUser, takeChangeStamp } from '../db/change-stamp';
import { withTransaction, type Db, type Queryable } from '../db/pool';
import { Deleted, InvalidInput, NotFound } from '../errors';
import type { ListedRow } from './list-repo';
import type { SubscriptionRow } from './repo';
import * as repo from './record-repo';
import type { SubscriptionRecord } from './types';
import { checkFeedUrl, parseGuid, urlHash } from './urls';

// One record: read by any guid of its chain, changed (URL, guid, subscription state), merged.

export function recordOf(row: ListedRow | SubscriptionRow, shown: string): SubscriptionRecord {
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

export type Change = { feedUrl?: string | undefined; guid?: string | undefined; subscribed?: boolean | undefined };
/** What a change did: only the fields that changed, and the stamps of what changed. */
export type ChangeReport = {
  feedUrl?: string;
  subscribed?: boolean;
  subscriptionChanged?: Date;
  guid?: string;
  guidChanged?: Date;
};

export type Row = SubscriptionRow & { current: boolean };
type CheckedUrl = { feedUrl: string; key: string };
/** The parts of a change that differ from the record. */
type Diff = { url?: CheckedUrl; subscribed?: boolean; guid?: string };

export type CheckedChange = { url?: CheckedUrl; guid?: string; subscribed?: boolean };

/** Validates a change before anything is read: a bad URL or guid is refused as a whole. */
export function checkChange(change: Change): CheckedChange {
  const out: CheckedChange = {};
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
function diffOf(row: Row, wanted: CheckedChange): Diff {
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

/** Applies a checked change to the record under the user's lock; reports only what changed. */
async function applyChange(tx: Queryable, userId: number, row: Row, checked: CheckedChange): Promise<ChangeReport> {
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
  if (diff.url) {
    await rememberUrl(tx, userId, row.id, diff.url);
    await repo.addMove(tx, userId, row.id, row.feed_url, stamp);
  }
  if (diff.guid !== undefined) await changeGuid(tx, userId, row, diff.guid, state, stamp, changedState);
  else await repo.updateRecord(tx, userId, row.id, state);
  return reportOf(diff, stamp);
}

/**
 * Runs `decide` on the live record with this guid under the user's lock and applies the change it gives;
 * `then` runs in the same transaction with what the change did (the feed fetcher notes its changes there).
 */
export async function changeRecord(
  db: Db,
  userId: number,
  guid: string,
  decide: (row: Row, tx: Queryable) => CheckedChange | undefined | Promise<CheckedChange | undefined>,
  then?: (tx: Queryable, row: Row, report: ChangeReport) => Promise<void>,
): Promise<ChangeReport> {
  return withTransaction(db, async (tx) => {
    await lockUser(tx, userId);
    const row = await liveRecord(tx, userId, guid);
    const checked = await decide(row, tx);
    // A new URL is found by the feed fetcher, as every changed record is.
    const report = checked ? await applyChange(tx, userId, row, checked) : {};
    if (then) await then(tx, row, report);
    return report;
  });
}

/**
 * Changes the feed URL, guid or subscription state of the record with this guid (any of its chain);
 * applies to the newest record of the chain and reports only what changed.
 */
export function change(db: Db, userId: number, guid: string, wanted: Change): Promise<ChangeReport> {
  const checked = checkChange(wanted);
  return changeRecord(db, userId, guid, () => checked);
}

/**
 * change, in the caller's transaction, which holds the user's lock: for a door that decides on the record's
 * state and changes it as one step (the sync endpoint's last-write-wins).
 */
export async function changeLocked(tx: Queryable, userId: number, guid: string, wanted: Change): Promise<ChangeReport> {
  const checked = checkChange(wanted);
  return applyChange(tx, userId, await liveRecord(tx, userId, guid), checked);
}

/** A live record of a feed: whose, its guid and URL, whether it is subscribed and since when. */
export type FeedRecord = { userId: number; guid: string; feedUrl: string; subscribed: boolean; since: Date };

/**
 * Every user's live record whose current URL is this feed's (by normalised URL): who a fetch concerns; with
 * `unlessGuid`, not the records that have that guid already.
 */
export async function recordsOfFeed(db: Queryable, feedUrl: string, unlessGuid?: string): Promise<FeedRecord[]> {
  const checked = checkFeedUrl(feedUrl);
  if (!checked.ok) return [];
  const rows = await repo.liveRecordsWithUrl(db, urlHash(checked.key), unlessGuid ?? null);
  return rows
    .filter((r) => {
      const current = checkFeedUrl(r.feed_url);
      return current.ok && current.key === checked.key;
    })
    .map((r) => ({
      userId: r.user_id,
      guid: r.guid,
      feedUrl: r.feed_url,
      subscribed: r.is_subscribed,
      since: r.subscription_changed,
    }));
}

/** Whether the user's live record of this feed (its current URL) is subscribed. */
export const subscribesTo = async (db: Queryable, userId: number, feedUrl: string): Promise<boolean> =>
  (await recordsOfFeed(db, feedUrl)).some((r) => r.userId === userId && r.subscribed);

/** The id of the user's record that has (or had) the URL with this key, if any. */
export const recordIdByUrlHash = (db: Queryable, userId: number, hash: string): Promise<number | undefined> =>
  repo.findUrlOwner(db, userId, hash);

/**
 * Forgets every record of the user, in the caller's transaction (under the user's lock): no record is
 * left unsubscribed or deleted, so apps syncing by `since` are sent no removal. Returns how many.
 */
export const forgetAll = (tx: Queryable, userId: number): Promise<number> => repo.deleteAllRecords(tx, userId);

/**
 * Marks a record deleted (the deletion job, in the caller's transaction with the user's stamp): it is
 * unsubscribed with `deleted` set, its guids and URLs kept for 410 and reinstatement. False when it was
 * deleted already.
 */
export const markDeleted = (tx: Queryable, userId: number, recordId: number, stamp: Date): Promise<boolean> =>
  repo.markDeleted(tx, userId, recordId, stamp);
