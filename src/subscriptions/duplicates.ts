import { lockUser, takeChangeStamp } from '../db/change-stamp';
import { withTransaction, type Db, type Queryable } from '../db/pool';
import { Deleted, InvalidInput, NotFound } from '../errors';
import * as repo from './record-repo';
import { urlHashOf } from './urls';

// Records of one user that are the same feed (years of syncing through feed moves leave them, AntennaPod#2214),
// found and merged into one on the person's word.

export type DuplicateRecord = {
  guid: string;
  feedUrl: string;
  isSubscribed: boolean;
  subscriptionChanged: Date;
  title: string | null;
  /** Episode actions filed under this record. */
  actions: number;
};
export type DuplicateGroup = { reasons: string[]; records: DuplicateRecord[] };

const host = (url: string) => /^[a-z][a-z0-9+.-]*:\/\/([^/:?#]+)/i.exec(url)?.[1]?.toLowerCase() ?? '';
const sameTitle = (title: string) => title.trim().replace(/\s+/g, ' ').toLowerCase();

/** Union-find over the records, with the reasons that joined each group. */
function unionFind(ids: number[]) {
  const parent = new Map(ids.map((id) => [id, id]));
  const find = (id: number): number => {
    let p = parent.get(id)!;
    while (p !== parent.get(p)) p = parent.get(p)!;
    parent.set(id, p);
    return p;
  };
  const reasons = new Map<number, Set<string>>();
  const join = (a: number, b: number, why: string) => {
    if (a === b) return;
    const [x, y] = [find(a), find(b)];
    if (x !== y) parent.set(y, x);
    const root = find(a);
    const all = reasons.get(root) ?? new Set<string>();
    for (const r of [reasons.get(x), reasons.get(y)]) r?.forEach((w) => all.add(w));
    all.add(why);
    reasons.set(root, all);
  };
  return { find, join, reasons };
}

/**
 * The user's live records that are the same feed, in groups: the same podcast guid (declared by the
 * feeds, or held by a record), a feed that moved (its redirect or new-feed-url) to a URL another record
 * has or had, or the same title on the same host once both were fetched. These are what the feed fetcher
 * leaves alone rather than merge (docs/decisions/feed-rule.md). Each group names why; a record is in one
 * group at most.
 */
export async function findDuplicates(db: Queryable, userId: number): Promise<DuplicateGroup[]> {
  const rows = await repo.liveWithFeeds(db, userId);
  const { find, join, reasons } = unionFind(rows.map((r) => r.id));
  const firstBy = new Map<string, { id: number; declared: boolean }>();
  const same = (key: string | null, id: number, declared: boolean, why: (bothDeclare: boolean) => string) => {
    if (key === null) return;
    const seen = firstBy.get(key);
    if (seen === undefined) firstBy.set(key, { id, declared });
    else join(seen.id, id, why(seen.declared && declared));
  };
  const byHash = new Map<string, number>();
  for (const r of rows) for (const h of r.url_hashes) byHash.set(h.replaceAll('-', ''), r.id);
  for (const r of rows) {
    for (const [g, declared] of [
      [r.podcast_guid, true],
      [r.guid, false],
    ] as const) {
      same(g && `guid:${g}`, r.id, declared, (both) =>
        both ? `both feeds declare podcast guid ${g}` : `the same podcast guid ${g}`,
      );
    }
    if (r.title)
      same(`title:${host(r.feed_url)}:${sameTitle(r.title)}`, r.id, false, () => 'the same title on the same host');
    const movedTo = r.moved_to && urlHashOf(r.moved_to);
    const target = movedTo ? byHash.get(movedTo) : undefined;
    if (target !== undefined) join(target, r.id, `the feed at ${r.feed_url} says it moved to ${r.moved_to}`);
  }
  const groups = new Map<number, DuplicateRecord[]>();
  for (const r of rows) {
    const root = find(r.id);
    const record = {
      guid: r.guid,
      feedUrl: r.feed_url,
      isSubscribed: r.is_subscribed,
      subscriptionChanged: r.subscription_changed,
      title: r.title,
      actions: r.actions,
    };
    groups.set(root, [...(groups.get(root) ?? []), record]);
  }
  return [...groups.entries()]
    .filter(([, list]) => list.length > 1)
    .map(([root, records]) => ({ reasons: [...(reasons.get(root) ?? [])], records }));
}

/**
 * Merges records into the one to keep, in one change: their URLs and guids join its history (so any app
 * that still sends them reaches it), their episode actions and deletion requests follow it, and each
 * merged-away URL is recorded as a move of the kept record, so that apps syncing by URL are told once to
 * remove it. The kept record is subscribed if any of them was. Refused while one of them has a deletion
 * request waiting for its job (it would run on the kept record).
 */
export async function mergeRecords(db: Db, userId: number, keepGuid: string, mergeGuids: string[]): Promise<void> {
  await withTransaction(db, async (tx) => {
    await lockUser(tx, userId);
    const live = async (guid: string) => {
      const row = await repo.findByGuid(tx, userId, guid);
      if (!row) throw new NotFound();
      if (row.deleted) throw new Deleted();
      return row;
    };
    const keep = await live(keepGuid);
    const others: Awaited<ReturnType<typeof live>>[] = [];
    for (const guid of mergeGuids) {
      const row = await live(guid);
      if (row.id !== keep.id && !others.some((o) => o.id === row.id)) others.push(row);
    }
    if (others.length === 0) throw new InvalidInput('Choose at least one other record to merge into this one.');
    // A deletion request follows a merged record: waiting for its job, it would delete the kept one.
    if (await repo.deletionPending(tx, userId, [keep.id, ...others.map((o) => o.id)])) {
      throw new InvalidInput('A record of this group is being deleted (an app asked): try again in a minute.');
    }
    let stamp = await takeChangeStamp(tx, userId);
    for (const [i, gone] of others.entries()) {
      // One move per record and stamp: each merged-away URL gets a stamp of its own (1 ms apart).
      if (i > 0) stamp = await takeChangeStamp(tx, userId);
      await repo.mergeInto(tx, userId, gone, keep.id, stamp);
      await repo.addMove(tx, userId, keep.id, gone.feed_url, stamp);
    }
    await repo.updateRecord(tx, userId, keep.id, {
      feedUrl: keep.feed_url,
      guid: keep.guid,
      isSubscribed: keep.is_subscribed || others.some((o) => o.is_subscribed),
      subscriptionChanged: stamp,
      guidChanged: keep.guid_changed,
      deleted: null,
    });
  });
}
