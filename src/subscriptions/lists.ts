import type { Queryable } from '../db/pool';
import * as repo from './list-repo';
import * as browseRepo from './browse-repo';
import { recordOf } from './records';
import type { SubscriptionRecord } from './types';
import { urlHashOf } from './urls';

// Reading the user's list: pages of records for /v1, changes as feed states for the gpodder API.

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

/** A record's feed and whether it is subscribed (false for unsubscribed and deleted records). */
export type FeedState = { feedUrl: string; subscribed: boolean };

/**
 * Every record changed at or after `since` (every record without it), in creation order, then each URL a
 * record left at or after `since` as not subscribed, and the user's last change stamp read in the same
 * statement. "At or after": a client that sends back a time a little
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

/** The user's last change stamp: what a state-syncing client is told after a write that changed nothing. */
export const lastChange = (db: Queryable, userId: number): Promise<Date> => repo.lastChange(db, userId);

/** The feeds the user is subscribed to, in the order they were added. */
export const subscribedFeeds = (db: Queryable, userId: number): Promise<string[]> => repo.subscribedFeeds(db, userId);

/** A record as a person browses it: the feed's title and artwork when the feed fetcher knows them. */
export type BrowsedRecord = {
  guid: string;
  feedUrl: string;
  isSubscribed: boolean;
  subscriptionChanged: Date;
  title: string | null;
  artworkUrl: string | null;
};

/** A page of the user's records (not deleted), searched by URL or title and filtered by state. */
export async function browse(
  db: Queryable,
  userId: number,
  q: { text: string; subscribed: boolean | null; page: number; perPage: number },
): Promise<{ total: number; records: BrowsedRecord[] }> {
  const rows = await browseRepo.browse(db, userId, {
    text: q.text,
    subscribed: q.subscribed,
    limit: q.perPage,
    offset: (q.page - 1) * q.perPage,
  });
  return {
    total: rows[0]?.total ?? 0,
    records: rows.map((r) => ({
      guid: r.guid,
      feedUrl: r.feed_url,
      isSubscribed: r.is_subscribed,
      subscriptionChanged: r.subscription_changed,
      title: r.title,
      artworkUrl: r.artwork_url,
    })),
  };
}

/**
 * Up to `limit` of the user's live records changed after a position (a change stamp and a record id within
 * it) and up to `until` (a change stamp the user has committed), in that order: for the feed fetcher, which
 * finds new feeds by looking at what changed, in bounded steps.
 */
export const urlsChangedBetween = (
  db: Queryable,
  userId: number,
  after: { changed: Date | null; id: string },
  until: Date,
  limit: number,
): Promise<{ feedUrl: string; changed: Date; id: number; subscribedSince: Date | null }[]> =>
  repo
    .urlsChangedBetween(db, userId, after, until, limit)
    .then((rows) =>
      rows.map((r) => ({ feedUrl: r.feed_url, changed: r.changed, id: r.id, subscribedSince: r.subscribed_since })),
    );

/**
 * When the user's record of each of these feed URLs (its current URL) last changed its subscription (it
 * was made, subscribed again, took that URL, or was unsubscribed): the feed catalogue shows a person what
 * was fetched since. URLs of no record of the user are absent.
 */
export async function subscriptionsChangedAt(
  db: Queryable,
  userId: number,
  urls: string[],
): Promise<Map<string, Date>> {
  const byHash = new Map<string, string[]>();
  for (const url of urls) {
    const hash = urlHashOf(url);
    if (hash !== undefined) byHash.set(hash, [...(byHash.get(hash) ?? []), url]);
  }
  if (byHash.size === 0) return new Map();
  const rows = await repo.subscriptionsChangedAt(db, userId, [...byHash.keys()]);
  return new Map(
    rows.flatMap((r) => (byHash.get(r.url_hash) ?? []).map((url) => [url, r.subscription_changed] as const)),
  );
}
