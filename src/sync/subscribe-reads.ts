import type { Queryable } from '../db/pool';
import * as subscriptions from '../subscriptions/service';
import * as repo from './repo';
import type { Ref } from './types';

// A batch's subscribe actions as sets: what they read is read once for all of them at the batch's start
// (one statement, under the user's lock), and the subscribes that write, one after another, are written
// together (one write and one note, under one change stamp, as an upload of gpodder or /v1 is). A batch of
// 30 subscribes costs a constant number of statements, not five per action.

type Read = { found: repo.EntityRow | undefined; match: subscriptions.Match };
type Pending = { item: subscriptions.Item; match: subscriptions.Match; at: Date; ref: Ref };

const keyOf = (item: subscriptions.Item) => `${item.guid} ${item.hash}`;

/**
 * The subscribes of one batch. What was read ahead still holds for an action while nothing the batch wrote
 * (or is about to write) has its guid or URL key, or is a record it found; when something has, the
 * subscribes waiting are written first and the action reads for itself. Any other write of the batch (an
 * unsubscribe, an update, an episode's state) may take a change stamp: the subscribes waiting are written
 * before it (`flush`), and after it (`changed`) every subscribe reads for itself again.
 */
export class BatchSubscribes {
  private readonly ahead = new Map<string, Read>();
  private lastChange: Date | undefined;
  private readonly ids = new Set<number>();
  private readonly guids = new Set<string>();
  private readonly hashes = new Set<string>();
  private pending: Pending[] = [];
  /** The records the subscribes decided on, by sync id, as they are now: until another kind of write. */
  private readonly current = new Map<string, repo.EntityRow>();

  constructor(
    private readonly tx: Queryable,
    private readonly userId: number,
    private readonly clientId: string | null,
  ) {}

  /** Reads what these subscribes name, in one statement whatever their number. */
  async readAhead(items: subscriptions.Item[]): Promise<void> {
    if (items.length === 0) return;
    const read = await repo.findMatches(this.tx, this.userId, items);
    this.lastChange = read.lastChange;
    items.forEach((item, i) => this.ahead.set(keyOf(item), { found: read.found[i], match: read.matches[i]! }));
  }

  /** What the item reads now: the record the sync endpoint shows for it, and what its guid and URL match. */
  async readFor(item: subscriptions.Item): Promise<Read> {
    const ahead = this.ahead.get(keyOf(item));
    if (ahead && this.lastChange && !this.touched(item, ahead)) return this.decided(ahead);
    if (this.pending.length > 0) await this.flush();
    const read = await repo.findMatches(this.tx, this.userId, [item]);
    this.lastChange = read.lastChange;
    return this.decided({ found: read.found[0], match: read.matches[0]! });
  }

  private decided(read: Read): Read {
    if (read.found) this.current.set(read.found.sync_id, read.found);
    return read;
  }

  /**
   * The records the subscribes decided on or wrote, as they are now, by sync id: none after another kind
   * of write (which may have changed them), until the subscribes after it.
   */
  records(): ReadonlyMap<string, repo.EntityRow> {
    return this.current;
  }

  private touched(item: subscriptions.Item, read: Read): boolean {
    if (this.guids.has(item.guid) || this.hashes.has(item.hash)) return true;
    const ids = [read.found?.id, read.match.byGuid?.id, read.match.byUrl?.id];
    return ids.some((id) => id !== undefined && this.ids.has(id));
  }

  /** Subscribes the item (as read by readFor) at the app's time `at`; the ref's sync id is set once written. */
  subscribe(item: subscriptions.Item, read: Read, at: Date): Ref {
    const ref: Ref = { type: 'subscription', syncId: '' };
    this.pending.push({ item, match: read.match, at, ref });
    this.guids.add(item.guid);
    this.hashes.add(item.hash);
    for (const id of [read.found?.id, read.match.byGuid?.id, read.match.byUrl?.id])
      if (id !== undefined) this.ids.add(id);
    return ref;
  }

  /** Writes the subscribes waiting: one write and one note for all of them. */
  async flush(): Promise<void> {
    const pending = this.pending;
    if (pending.length === 0) return;
    this.pending = [];
    const written = await subscriptions.writeMatchedLocked(
      this.tx,
      this.userId,
      pending.map((p) => p.item),
      { lastChange: this.lastChange!, matches: pending.map((p) => p.match) },
      { keepLiveUrls: true },
    );
    this.lastChange = written.at;
    this.wrote(written.plan.targets);
    const notes = pending.map((p, i) => ({ guid: written.plan.targetOf[i]!.guid, at: p.at }));
    const noted = await repo.noteSubscribes(this.tx, this.userId, this.clientId, notes);
    for (const row of noted) this.current.set(row.sync_id, row);
    const syncIds = new Map(noted.map((n) => [n.guid, n.sync_id]));
    notes.forEach((n, i) => (pending[i]!.ref.syncId = syncIds.get(n.guid)!));
  }

  private wrote(targets: subscriptions.Written['plan']['targets']): void {
    for (const t of targets) {
      if (t.id !== undefined) this.ids.add(t.id);
      this.guids.add(t.guid);
      this.hashes.add(t.urlHash);
      for (const g of t.earlierGuids) this.guids.add(g);
      for (const u of t.otherUrls) this.hashes.add(u.hash);
    }
  }

  /** Another write of the batch came after the subscribes written: what was read ahead no longer holds. */
  changed(): void {
    this.lastChange = undefined;
    this.ahead.clear();
    this.current.clear();
  }
}
