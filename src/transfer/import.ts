import { rolledBack, type Db, type Queryable } from '../db/pool';
import * as devices from '../devices/service';
import * as episodes from '../episodes/service';
import { recordInterchange } from '../episodes/service';
import * as subscriptions from '../subscriptions/service';
import * as repo from './repo';
import type { Progress, Snapshot } from './sources';

/** How many of each thing a sample shows. */
const SAMPLE = 5;

/**
 * One kind of thing an import brings: how many the source has, how many are new here, the first few, and
 * the refused: the first REFUSED_LISTED of them with why, and how many in all.
 */
export type Part = {
  total: number;
  added: number;
  sample: string[];
  refused: { item: string; reason: string }[];
  refusedCount: number;
};

/**
 * How many refused items a part lists (the command line shows as many, the web page fewer): a file of
 * millions of actions castsync refuses would otherwise keep a line for each, in memory and in the summary.
 */
export const REFUSED_LISTED = 50;

/** Notes an item the rules refused: counted, and listed while the part lists fewer than REFUSED_LISTED. */
export function refuse(into: Part, item: string, reason: string): void {
  into.refusedCount++;
  if (into.refused.length < REFUSED_LISTED) into.refused.push({ item, reason });
}

/** What an import did, or (dryRun) would do. */
export type Summary = {
  dryRun: boolean;
  devices: Part;
  /** removedOnRemote: feeds removed on the remote and on none of its devices, not imported. */
  feeds: Part & { removedOnRemote: number };
  actions: Part;
};

/**
 * Actions read again a batch at a time as they are stored (an uploaded file's, src/transfer/uploads.ts):
 * never all in memory. `total` is how many the batches hold.
 */
export type ActionBatches = { total: number; batches: () => AsyncIterable<unknown[]> };

/** What an import brings: a Snapshot, whose actions may come in batches. */
export type Brought = Omit<Snapshot, 'actions'> & { actions: unknown[] | ActionBatches };

const totalOf = (a: Brought['actions']) => (Array.isArray(a) ? a.length : a.total);

/** The actions in batches of at most `size`. */
async function* batchesOf(a: Brought['actions'], size: number): AsyncGenerator<unknown[]> {
  if (!Array.isArray(a)) {
    yield* a.batches();
    return;
  }
  for (let start = 0; start < a.length; start += size) yield a.slice(start, start + size);
}

export const part = (total: number): Part => ({ total, added: 0, sample: [], refused: [], refusedCount: 0 });

const describe = (a: episodes.EpisodeAction) =>
  `${a.action} ${a.episodeUrl} at ${a.at.toISOString()}${a.position !== undefined ? ` (position ${a.position} s)` : ''}`;

/**
 * Brings what another server holds into the local user, through the services an app's upload goes
 * through (URL rules, URL history, change stamps): so every app of the user sees it at its next sync.
 * Devices the user does not have are created with their caption and type; feeds the user is not subscribed
 * to are subscribed to (one change); then the actions are stored in batches, each action once. What is
 * already here is left as it is: a second run adds nothing. Each step is written before the next begins,
 * so a failure leaves whole steps, and running the import again completes it. With `dryRun` nothing is
 * kept, and the summary says what would be.
 */
export async function importSnapshot(
  db: Db,
  userId: number,
  snapshot: Brought,
  options: { dryRun: boolean; progress: Progress },
): Promise<Summary> {
  const summary: Summary = {
    dryRun: options.dryRun,
    devices: part(snapshot.devices.length),
    feeds: { ...part(snapshot.subscribed.length), removedOnRemote: snapshot.removed.length },
    actions: part(totalOf(snapshot.actions)),
  };
  await importDevices(db, userId, snapshot, options, summary.devices);
  await importFeeds(db, userId, snapshot, options, summary.feeds);
  await importActions(db, userId, snapshot, options, summary.actions);
  return summary;
}

type Step = (
  db: Db,
  userId: number,
  snapshot: Brought,
  options: { dryRun: boolean; progress: Progress },
  into: Part,
) => Promise<void>;

/** The devices the user does not have, with their caption and type (an unknown type is "other"). */
const importDevices: Step = async (db, userId, snapshot, { dryRun, progress }, into) => {
  const known = new Set((await devices.list(db, userId)).map((d) => d.id));
  const newDevices = snapshot.devices.filter((d) => !known.has(d.id));
  progress('adding devices', 0, newDevices.length);
  const keep = newDevices.filter((d) => devices.DEVICE_ID.test(d.id));
  for (const d of newDevices) {
    if (!keep.includes(d)) refuse(into, d.id, 'a device id castsync cannot keep');
  }
  for (const d of dryRun ? [] : keep) {
    const type = (devices.DEVICE_TYPES as readonly string[]).includes(d.type) ? d.type : 'other';
    await devices.upsert(db, userId, d.id, { caption: d.caption, type });
  }
  into.added = keep.length;
  into.sample = keep.slice(0, SAMPLE).map((d) => `${d.id} (${d.caption}, ${d.type})`);
};

/**
 * The feeds the user is not subscribed to, subscribed to in one change: each once, by the URL the rules
 * keep (a feed the source lists as http:// and itpc:// is one new feed).
 */
const importFeeds: Step = async (db, userId, snapshot, { dryRun, progress }, into) => {
  const feedsHere = await subscriptions.subscribedAmong(db, userId, snapshot.subscribed);
  const newFeeds = snapshot.subscribed.filter((u) => !feedsHere.has(u));
  progress('subscribing', 0, newFeeds.length);
  const valid = new Map<string, string>();
  for (const o of newFeeds.map((url) => subscriptions.checkFeed({ url }))) {
    if (!subscriptions.isItem(o)) {
      if (!o.ok) refuse(into, o.url, o.reason);
    } else if (!valid.has(o.hash)) valid.set(o.hash, o.feedUrl);
  }
  const urls = [...valid.values()];
  if (!dryRun && urls.length > 0) await subscriptions.applyChanges(db, userId, { add: urls, remove: [] });
  into.added = urls.length;
  into.sample = urls.slice(0, SAMPLE);
};

/**
 * The actions, in batches as apps send them, each stored as it comes. A dry run stores them all in one
 * transaction that is rolled back (so it counts exactly what would be new, duplicates across batches too),
 * under a stand-in user made in that transaction: storing actions stamps their user's row, and on the
 * user's own row that lock would hold up every write of the person's apps until the preview ended (a
 * large archive takes a minute). What would be new is then what the stand-in got that the user lacks.
 */
const importActions: Step = async (db, userId, snapshot, { dryRun, progress }, into) => {
  const total = totalOf(snapshot.actions);
  const received = new Date();
  const step = dryRun ? 'checking episode actions' : 'storing episode actions';
  const store = async (q: Queryable, storeAs: number) => {
    let start = 0;
    for await (const batch of batchesOf(snapshot.actions, episodes.MAX_ACTIONS)) {
      progress(step, start, total);
      const done = await recordInterchange(q, storeAs, batch, received);
      into.added += done.stored;
      for (const s of done.skipped) refuse(into, `action ${start + s.index}`, s.reason);
      const room = SAMPLE - into.sample.length;
      if (room > 0) into.sample.push(...done.actions.slice(0, room).map(describe));
      start += batch.length;
    }
    progress(step, total, total);
  };
  if (!dryRun) return store(db, userId);
  await rolledBack(db, async (tx) => {
    const standIn = await repo.insertStandIn(tx);
    await store(tx, standIn);
    into.added = await repo.actionsLacking(tx, standIn, userId);
  });
};
