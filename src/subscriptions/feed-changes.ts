import type { Db, Queryable } from '../db/pool';
import { InvalidInput, NotFound } from '../errors';
import * as changes from './feed-change-repo';
import * as repo from './record-repo';
import { changeRecord, checkChange, type ChangeReport, type CheckedChange, type Row } from './records';
import { podcastGuid, urlHash } from './urls';

// What a feed says, applied to one record of one person (docs/decisions/feed-rule.md). A feed is a
// stranger's word: it may update the record it was read for, and move it to a URL the person does not
// have in any record. It never merges, removes or hides a record, never brings back one the person
// removed, and never touches another person's: where it collides with another record of the person, both
// stay as they are and the duplicates page offers the pair. Each change it makes is noted with its source,
// for the person's activity, and a move can be undone there.

/** Where the fetcher read what it applies. */
export type FeedSource = 'podcast:guid' | 'redirect' | 'itunes:new-feed-url' | 'podcast:newFeedUrl';
/** What came of it for one record: changed, nothing to do, or left alone because of another record. */
export type FeedApplied = 'changed' | 'unchanged' | 'collision';

type Noted = Omit<Parameters<typeof changes.addFeedChange>[2], 'subscriptionId'>;

/**
 * Applies what a feed said to one record under the person's lock: `look` gives the change, or why there
 * is none; `note` says what to note of a change that was made (in the same transaction).
 */
async function applyFromFeed(
  db: Db,
  userId: number,
  guid: string,
  look: (row: Row, tx: Queryable) => Promise<CheckedChange | FeedApplied>,
  note: (row: Row, report: ChangeReport) => Noted | undefined,
): Promise<FeedApplied> {
  let applied: FeedApplied = 'unchanged';
  await changeRecord(
    db,
    userId,
    guid,
    async (row, tx) => {
      const found = await look(row, tx);
      if (typeof found !== 'string') return found;
      applied = found;
      return undefined;
    },
    async (tx, row, report) => {
      const noted = note(row, report);
      if (!noted) return;
      applied = 'changed';
      await changes.addFeedChange(tx, userId, { subscriptionId: row.id, ...noted });
    },
  );
  return applied;
}

/**
 * The feed's declared podcast:guid becomes the newest guid of a record created without one (its guid is
 * still the one computed from its URL) whose URL is still `feedUrl`; unless another record of the person
 * has that guid (now or earlier, removed or not): then nothing changes.
 */
export function adoptFeedGuid(
  db: Db,
  userId: number,
  guid: string,
  feedUrl: string,
  declared: string,
): Promise<FeedApplied> {
  const checked = checkChange({ guid: declared });
  return applyFromFeed(
    db,
    userId,
    guid,
    async (row, tx) => {
      if (row.feed_url !== feedUrl || row.guid !== podcastGuid(row.feed_url)) return 'unchanged';
      const owner = await repo.findByGuid(tx, userId, declared);
      return owner && owner.id !== row.id ? 'collision' : checked;
    },
    (row, report) =>
      report.guid === undefined
        ? undefined
        : { at: report.guidChanged!, kind: 'guid', source: 'podcast:guid', oldValue: row.guid, newValue: report.guid },
  );
}

/**
 * A feed that moved: the record whose URL is still `from` gets the URL `to`, unless a record of the person
 * has `to` (now or earlier, removed or not: another record is a collision, this one's own earlier URL a
 * loop), or the person undid this very move before.
 */
export function moveFeed(
  db: Db,
  userId: number,
  guid: string,
  move: { from: string; to: string; source: FeedSource },
): Promise<FeedApplied> {
  const checked = checkChange({ feedUrl: move.to });
  return applyFromFeed(
    db,
    userId,
    guid,
    async (row, tx) => {
      if (row.feed_url !== move.from) return 'unchanged';
      const owner = await repo.findUrlOwner(tx, userId, urlHash(checked.url!.key));
      if (owner !== undefined) return owner === row.id ? 'unchanged' : 'collision';
      return (await changes.moveWasUndone(tx, userId, row.id, move.from, move.to)) ? 'unchanged' : checked;
    },
    (row, report) =>
      report.feedUrl === undefined
        ? undefined
        : {
            at: report.subscriptionChanged!,
            kind: 'moved',
            source: move.source,
            oldValue: row.feed_url,
            newValue: report.feedUrl,
          },
  );
}

export type FeedChange = {
  id: number;
  at: Date;
  kind: changes.FeedChangeKind;
  source: string;
  oldValue: string;
  newValue: string;
  /** The record's URL now. */
  feedUrl: string;
  undoneAt: Date | null;
  /** A move the person can still undo: not undone, and the record is still where the move took it. */
  undoable: boolean;
};

/** The feed fetcher's newest changes to the person's records, newest first. */
export async function feedChanges(db: Db, userId: number, limit = 50): Promise<FeedChange[]> {
  return (await changes.recentFeedChanges(db, userId, limit)).map((c) => ({
    id: c.id,
    at: c.at,
    kind: c.kind,
    source: c.source,
    oldValue: c.old_value,
    newValue: c.new_value,
    feedUrl: c.feed_url,
    undoneAt: c.undone_at,
    undoable: c.kind === 'moved' && c.undone_at === null && c.deleted === null && c.feed_url === c.new_value,
  }));
}

/**
 * Undoes a move the fetcher followed: the record gets its old URL back, as the person's own change (apps
 * are told as of any change), and the fetcher never follows that move of this record again.
 */
export async function undoFeedMove(db: Db, userId: number, changeId: number): Promise<void> {
  const c = await changes.feedChange(db, userId, changeId);
  if (!c || c.kind !== 'moved') throw new NotFound();
  if (c.undone_at !== null) throw new InvalidInput('This move was undone already.');
  await changeRecord(
    db,
    userId,
    c.guid,
    (row) => {
      if (row.id !== c.subscription_id || row.feed_url !== c.new_value)
        throw new InvalidInput(`The subscription is no longer at ${c.new_value}: there is no move to undo.`);
      return checkChange({ feedUrl: c.old_value });
    },
    (tx, _row, report) => changes.markUndone(tx, userId, c.id, report.subscriptionChanged ?? new Date()),
  );
}
