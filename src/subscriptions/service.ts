import type { Context } from '../context';
import { lockUser, takeChangeStamp } from '../db/change-stamp';
import { withTransaction, type Queryable } from '../db/pool';
import { Gone, NotFound, ValidationFailed } from '../http/errors';
import { iso } from '../http/timestamps';
import type { ListQuery } from './list-query';
import { planUpsert, type Item, type Plan, type Slot } from './plan';
import * as repo from './repo';
import { checkFeedUrl, parseGuid, podcastGuid, urlHash } from './urls';

export type Success = { feed_url: string; guid: string; is_subscribed: true; subscription_changed: string };
export type Failure = { feed_url: string; message: string };

/** Checks one requested feed; a string is the failure message. */
function checkItem(input: { feed_url: string; guid?: string | undefined }): Item | string {
  const url = checkFeedUrl(input.feed_url);
  if (!url.ok) return url.message;
  let guid: string | undefined;
  if (input.guid !== undefined) {
    guid = parseGuid(input.guid);
    if (!guid) return 'Invalid guid';
  }
  return {
    feedUrl: url.feedUrl,
    key: url.key,
    hash: urlHash(url.key),
    guid: guid ?? podcastGuid(url.feedUrl),
    explicitGuid: guid !== undefined,
  };
}

/**
 * Subscribes the user to each feed, in one transaction with a constant number of statements whatever
 * the number of feeds. Every item gets one success or failure entry, in request order.
 */
export async function subscribe(
  ctx: Context,
  userId: number,
  inputs: { feed_url: string; guid?: string | undefined }[],
): Promise<{ success: Success[]; failure: Failure[] }> {
  const checked = inputs.map(checkItem);
  const failure: Failure[] = [];
  const items: Item[] = [];
  checked.forEach((c, i) => {
    if (typeof c === 'string') failure.push({ feed_url: inputs[i]!.feed_url, message: c });
    else items.push(c);
  });
  if (items.length === 0) return { success: [], failure };

  const respond = (plan: Plan, at: Date) => {
    const changed = iso(at);
    const success = items.map((item, i) => ({
      feed_url: item.feedUrl,
      guid: plan.itemSlots[i]!.guid,
      is_subscribed: true as const,
      subscription_changed: changed,
    }));
    return { success, failure };
  };

  // Most POSTs add feeds the user does not have: one statement inserts them if that is so.
  const allNew = planUpsert(
    items,
    items.map(() => NO_MATCH),
  );
  if (allNew.slots.every((s) => s.earlierGuids.length === 0 && s.otherUrls.length === 0)) {
    const at = await repo.insertIfAllNew(ctx.db, userId, writeOf(allNew).created).catch((err: unknown) => {
      if (repo.isExistingFeed(err)) return undefined;
      throw err;
    });
    if (at) return respond(allNew, at);
  }
  // Otherwise plan against the matches and write if no other write of this user came in between (a
  // compare-and-set on the user's change stamp); if other writers keep winning, plan under the lock,
  // where the compare-and-set cannot fail.
  const matchAndWrite = async (db: Queryable) => {
    const read = await repo.findMatches(
      db,
      userId,
      items.map((x) => x.guid),
      items.map((x) => x.hash),
    );
    const plan = planUpsert(items, read.matches);
    const at = await repo.writeSubscriptions(db, userId, read.version, writeOf(plan));
    return at && respond(plan, at);
  };
  for (let i = 0; i < 2; i++) {
    const written = await matchAndWrite(ctx.db);
    if (written) return written;
  }
  return withTransaction(ctx.db, async (tx) => {
    await lockUser(tx, userId);
    const written = await matchAndWrite(tx);
    if (!written) throw new Error('the user changed under its own row lock');
    return written;
  });
}

const NO_MATCH: repo.Match = { guidSid: null, guidSidGuid: null, urlSid: null, urlSidGuid: null };

/** The rows a plan writes; a new record is named by its guid until the database gives it an id. */
function writeOf({ slots }: Plan): repo.SubscribeWrite {
  const ref = (s: Slot) => (s.id === undefined ? { sid: null, slotGuid: s.guid } : { sid: s.id, slotGuid: null });
  return {
    created: slots
      .filter((s) => s.id === undefined)
      .map((s) => ({ guid: s.guid, feedUrl: s.feedUrl, urlHash: s.urlHash, guidChanged: s.guidChanged })),
    resubscribed: slots
      .filter((s) => s.id !== undefined)
      .map((s) => ({ id: s.id!, guid: s.guid, feedUrl: s.feedUrl, guidChanged: s.guidChanged })),
    earlierGuids: slots.flatMap((s) => s.earlierGuids.map((guid) => ({ ...ref(s), guid }))),
    otherUrls: slots.flatMap((s) => s.otherUrls.map((u) => ({ ...ref(s), ...u }))),
  };
}

export type RecordOut = {
  feed_url: string;
  guid: string;
  is_subscribed: boolean;
  subscription_changed?: string;
  new_guid?: string;
  guid_changed?: string;
  deleted?: string;
};

/**
 * A record as clients see it, named by `shown` (an earlier guid of its chain, or its current one), its
 * timestamps already formatted; absent fields are left out.
 */
export function present(row: repo.RecordFields, shown: string): RecordOut {
  const out: RecordOut = {
    feed_url: row.feed_url,
    guid: shown,
    is_subscribed: row.is_subscribed,
    subscription_changed: iso(row.subscription_changed),
  };
  if (row.guid !== shown) out.new_guid = row.guid;
  if (row.guid_changed) out.guid_changed = iso(row.guid_changed);
  if (row.deleted) out.deleted = iso(row.deleted);
  return out;
}

export async function list(
  ctx: Context,
  userId: number,
  q: ListQuery,
): Promise<{ syncTimestamp: string; total: number; records: RecordOut[] }> {
  const r = await repo.listPage(ctx.db, userId, q.since, q.perPage, (q.page - 1) * q.perPage);
  return {
    syncTimestamp: iso(r.lastChange),
    total: r.total,
    records: r.rows.map((row) => present(row, row.shown_guid)),
  };
}

export async function getOne(ctx: Context, userId: number, guid: string): Promise<RecordOut> {
  const row = await repo.findByGuid(ctx.db, userId, guid);
  if (!row) throw new NotFound();
  if (row.deleted) throw new Gone();
  return present(row, guid);
}

export type Patch = {
  new_feed_url?: string | undefined;
  new_guid?: string | undefined;
  is_subscribed?: boolean | undefined;
};
export type PatchResult = {
  new_feed_url?: string;
  is_subscribed?: boolean;
  subscription_changed?: string;
  new_guid?: string;
  guid_changed?: string;
};

/** PATCH: applies to the latest record of the chain; reports only what changed. */
export async function update(ctx: Context, userId: number, guid: string, patch: Patch): Promise<PatchResult> {
  const url = patch.new_feed_url === undefined ? undefined : checkFeedUrl(patch.new_feed_url);
  if (url && !url.ok) throw new ValidationFailed(url.message);
  const newGuid = patch.new_guid === undefined ? undefined : parseGuid(patch.new_guid);
  if (patch.new_guid !== undefined && !newGuid) throw new ValidationFailed('Invalid guid');

  return withTransaction(ctx.db, async (tx) => {
    await lockUser(tx, userId);
    const row = await repo.findByGuid(tx, userId, guid);
    if (!row) throw new NotFound();
    if (row.deleted) throw new Gone();
    const changesUrl = url?.ok === true && url.feedUrl !== row.feed_url;
    const changesSubscribed = patch.is_subscribed !== undefined && patch.is_subscribed !== row.is_subscribed;
    const changesGuid = newGuid !== undefined && newGuid !== row.guid;
    // Unchanged values change nothing, not even the user's change stamp.
    if (!changesUrl && !changesSubscribed && !changesGuid) return {};
    const stamp = await takeChangeStamp(tx, userId);
    const out: PatchResult = {};
    const next = {
      feedUrl: row.feed_url,
      guid: row.guid,
      isSubscribed: row.is_subscribed,
      subscriptionChanged: row.subscription_changed,
      guidChanged: row.guid_changed,
      deleted: null,
    };
    if (changesUrl && url?.ok) {
      next.feedUrl = url.feedUrl;
      next.subscriptionChanged = stamp;
      out.new_feed_url = url.feedUrl;
      // The old URL keeps finding the record; a URL another record has stays that record's.
      const hash = urlHash(url.key);
      if ((await repo.findUrlOwner(tx, userId, hash)) === undefined)
        await repo.addOtherUrl(tx, userId, row.id, hash, url.feedUrl);
    }
    if (changesSubscribed && patch.is_subscribed !== undefined) {
      next.isSubscribed = patch.is_subscribed;
      next.subscriptionChanged = stamp;
      out.is_subscribed = patch.is_subscribed;
    }
    if (out.new_feed_url !== undefined || out.is_subscribed !== undefined) out.subscription_changed = iso(stamp);

    if (changesGuid && newGuid) {
      out.new_guid = newGuid;
      out.guid_changed = iso(stamp);
      const owner = await repo.findByGuid(tx, userId, newGuid);
      if (owner && owner.id !== row.id) {
        // The user already has a record with that guid: the two become one, and the most recently
        // changed state (this PATCH counts as a change of this record) wins.
        const thisWins = out.subscription_changed !== undefined || row.changed > owner.changed;
        await repo.mergeInto(tx, userId, row, owner.id, stamp);
        if (!owner.current) {
          // newGuid was an earlier guid of the other record: it becomes current again.
          await repo.removeEarlierGuid(tx, userId, newGuid);
          await repo.addEarlierGuid(tx, userId, owner.id, owner.guid, stamp);
        }
        const state = thisWins
          ? next
          : {
              feedUrl: owner.feed_url,
              isSubscribed: owner.is_subscribed,
              subscriptionChanged: owner.subscription_changed,
              deleted: owner.deleted,
            };
        await repo.updateRecord(tx, userId, owner.id, { ...state, guid: newGuid, guidChanged: stamp });
        return out;
      }
      // A new guid, or an earlier guid of this record becoming current again.
      if (owner) await repo.removeEarlierGuid(tx, userId, newGuid);
      await repo.addEarlierGuid(tx, userId, row.id, row.guid, stamp);
      next.guid = newGuid;
      next.guidChanged = stamp;
    }
    await repo.updateRecord(tx, userId, row.id, next);
    return out;
  });
}
