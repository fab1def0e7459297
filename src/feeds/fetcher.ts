import pg from 'pg';
import type { Config } from '../config';
import { isDatabaseUnavailable } from '../db/errors';
import { withTransaction, type Db, type Tx } from '../db/pool';
import type { TaskList } from '../jobs/worker';
import { idleForeground, type Foreground } from '../jobs/foreground';
import { addJob } from '../jobs/queue';
import { urlForLog, type Logger } from '../logger';
import * as subscriptions from '../subscriptions/service';
import { podcastGuid, urlHashOf } from '../subscriptions/service';
import { noteFeeds, pacedLooks } from './discover';
import { fetchFeed, FetchFailed, type FetchLimits } from './fetch';
import { fetches, fetchSeconds } from './metrics';
import { FeedParseError, parseFeed, type FeedFacts } from './parse';
import * as repo from './repo';
import type { AddressPolicy } from './address-policy';

// The background feed fetcher: takes due feeds from the feeds table, fetches a bounded number at a time
// (and only a few per host), stores what it learnt, and applies guid and URL changes through the same
// subscription service the APIs use. docs/feeds.md tells what it does; docs/decisions/feed-fetcher.md why so.

export const FETCH_TASK = 'feeds:fetch';

export type FetcherSettings = {
  policy: AddressPolicy;
  limits: FetchLimits;
  concurrency: number;
  perHost: number;
  refreshSeconds: number;
};

export const fetcherSettings = (config: Config): FetcherSettings => ({
  policy: { allowPrivate: config.feedFetchAllowPrivate, allowCidrs: config.feedFetchAllowCidrs },
  limits: { timeoutMs: config.feedFetchTimeout * 1000, maxBytes: config.feedMaxBytes, maxRedirects: 5 },
  concurrency: config.feedFetchConcurrency,
  perHost: config.feedFetchPerHost,
  refreshSeconds: config.feedRefreshInterval,
});

/** The longest a failing feed waits for its next fetch. */
const MAX_BACKOFF_SECONDS = 7 * 24 * 3600;

/**
 * After n failures in a row: 10 minutes × 2^(n-1), or longer when the feed's host asked for longer
 * (Retry-After, with a 429 or a 503), at most a week.
 */
const backoffSeconds = (failures: number, retryAfterSeconds = 0) =>
  Math.min(Math.max(600 * 2 ** Math.max(0, failures - 1), retryAfterSeconds), MAX_BACKOFF_SECONDS);

/**
 * What a higher room does with the items a fetch found that the feed had not listed before, in the fetch's
 * transaction (the composition root wires it: the notifications room notes new-episode events).
 * `firstFetch`: the feed had never been fetched, so every item is "new".
 */
export type NewItemsHook = (
  tx: Tx,
  feed: { hash: string; url: string; firstFetch: boolean },
  items: repo.NewItem[],
) => Promise<void>;

type FetchContext = { db: Db; logger: Logger; newItems?: NewItemsHook | undefined };

type Outcome = 'fetched' | 'not_modified' | 'failed' | 'refused' | 'invalid' | 'deferred';

type Move = { to: string; source: subscriptions.FeedSource };

/**
 * The feed's new home, if a permanent redirect led to or the feed declared one that is a valid feed URL
 * other than its own (the redirect first: it is what the server does today).
 */
function newHome(feedUrl: string, redirectedTo: string | undefined, facts: FeedFacts | null): Move | null {
  const own = urlHashOf(feedUrl);
  const candidates: [string | null | undefined, subscriptions.FeedSource][] = [
    [redirectedTo, 'redirect'],
    [facts?.newFeedUrl?.url, facts?.newFeedUrl?.tag ?? 'itunes:new-feed-url'],
  ];
  for (const [to, source] of candidates) {
    if (!to) continue;
    const key = urlHashOf(to);
    if (key !== undefined && key !== own) return { to, source };
  }
  return null;
}

/**
 * Applies what a fetch learnt to each subscriber's record still on this URL, one person and one record at a
 * time, by the feed rule (src/subscriptions/feed-changes.ts): a declared podcast:guid that differs from
 * the one computed from the URL becomes the record's newest guid, and a move becomes a URL change, unless
 * either collides with another record of that person; then both stay as they are.
 */
async function applyLearnt(db: Db, log: Logger, feedUrl: string, declaredGuid: string | null, move: Move | null) {
  const adopt = declaredGuid !== null && declaredGuid !== podcastGuid(feedUrl);
  if (!adopt && move === null) return;
  // Only a move concerns the records that took the declared guid already (at an earlier fetch).
  const records = await subscriptions.recordsOfFeed(
    db,
    feedUrl,
    move === null ? (declaredGuid ?? undefined) : undefined,
  );
  for (const record of records) {
    const collided: string[] = [];
    if (adopt) {
      const applied = await subscriptions.adoptFeedGuid(db, record.userId, record.guid, record.feedUrl, declaredGuid);
      if (applied === 'collision') collided.push('podcast guid');
    }
    if (move) {
      const applied = await subscriptions.moveFeed(db, record.userId, record.guid, { from: record.feedUrl, ...move });
      if (applied === 'collision') collided.push('move');
    }
    if (collided.length > 0)
      log.info({ userId: record.userId, collided }, 'feed collides with another subscription; left as is');
  }
  // The new home is a feed to know; the next look for due feeds finds it.
  if (move) await noteFeeds(db, [move.to]);
}

/** Fetches one feed and stores the outcome; never throws for a feed's own faults. */
async function fetchOne(
  { db, logger, newItems }: FetchContext,
  s: FetcherSettings,
  feed: repo.FeedRow,
  signal: AbortSignal,
): Promise<Outcome> {
  // A private feed's URL carries its password or token: the log has neither (urlForLog).
  const log = logger.child({ component: 'feeds', feedUrl: urlForLog(feed.feed_url) });
  try {
    const res = await fetchFeed(
      feed.feed_url,
      { etag: feed.etag, lastModified: feed.last_modified },
      { policy: s.policy, limits: s.limits, signal },
    );
    const facts = res.kind === 'body' ? parseFeed(res.body) : null;
    const move = newHome(feed.feed_url, res.movedTo, facts);
    const movedTo = move?.to ?? null;
    const validators = res.kind === 'body' ? res.validators : { etag: feed.etag, lastModified: feed.last_modified };
    await withTransaction(db, async (tx) => {
      await repo.saveFetched(tx, feed.url_hash, { facts, ...validators, movedTo }, s.refreshSeconds);
      const added = facts ? await repo.saveItems(tx, feed.url_hash, facts.items) : [];
      const firstFetch = feed.fetched_at === null;
      if (newItems && added.length > 0)
        await newItems(tx, { hash: feed.url_hash, url: feed.feed_url, firstFetch }, added);
    });
    if (move) log.info({ movedTo: urlForLog(move.to), source: move.source }, 'feed moved');
    await applyLearnt(db, log, feed.feed_url, facts ? facts.podcastGuid : feed.podcast_guid, move);
    return res.kind === 'body' ? 'fetched' : 'not_modified';
  } catch (err) {
    if (signal.aborted && !(err instanceof FetchFailed)) {
      await repo.release(db, feed.url_hash);
      return 'deferred';
    }
    // The database refusing what this feed holds (a value no check foresaw) is the feed's fault too:
    // thrown on, it would fail the whole run, and the feed would be taken again at once, for good.
    const refusedByStore = err instanceof pg.DatabaseError && !isDatabaseUnavailable(err);
    if (!(err instanceof FetchFailed) && !(err instanceof FeedParseError) && !refusedByStore) throw err;
    const outcome: Outcome =
      err instanceof FeedParseError ? 'invalid' : err instanceof FetchFailed && err.refused ? 'refused' : 'failed';
    const reason = refusedByStore ? `could not be stored: ${err.message}` : err.message;
    const next = backoffSeconds(feed.failures + 1, err instanceof FetchFailed ? err.retryAfterSeconds : undefined);
    await repo.saveFailure(db, feed.url_hash, reason, next);
    log.warn({ outcome, reason, retryInSeconds: next }, 'feed fetch failed');
    return outcome;
  }
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

/**
 * Runs `work` on every feed, at most `concurrency` at once and `perHost` at once per host. Once a work has
 * failed, no other starts, and the failure is thrown when those under way have ended: none runs on after
 * the run (outside its job, past the limits of the next).
 */
export async function politely(
  feeds: repo.FeedRow[],
  { concurrency, perHost }: { concurrency: number; perHost: number },
  work: (feed: repo.FeedRow) => Promise<void>,
): Promise<void> {
  const waiting = [...feeds];
  const perHostActive = new Map<string, number>();
  let active = 0;
  let failure: { err: unknown } | undefined;
  await new Promise<void>((resolve, reject) => {
    const pump = () => {
      if (active === 0 && (failure || waiting.length === 0)) return failure ? reject(failure.err) : resolve();
      while (!failure && active < concurrency) {
        const i = waiting.findIndex((f) => (perHostActive.get(hostOf(f.feed_url)) ?? 0) < perHost);
        if (i < 0) return;
        const feed = waiting.splice(i, 1)[0]!;
        const host = hostOf(feed.feed_url);
        active++;
        perHostActive.set(host, (perHostActive.get(host) ?? 0) + 1);
        const ended = () => {
          active--;
          perHostActive.set(host, perHostActive.get(host)! - 1);
          pump();
        };
        work(feed).then(ended, (err: unknown) => {
          failure ??= { err };
          ended();
        });
      }
    };
    pump();
  });
}

/**
 * Fetches due feeds until none is due, the time budget is spent or the signal aborts; returns how many
 * were fetched by outcome. Several fetchers (processes) can run at once: each takes its own feeds.
 * Each fetch waits for its turn from `foreground`: while requests keep the process busy, one starts every
 * couple of seconds.
 */
export async function fetchDueFeeds(
  ctx: FetchContext,
  s: FetcherSettings,
  {
    signal = new AbortController().signal,
    budgetMs = 240_000,
    foreground = idleForeground,
    look = pacedLooks(ctx.db),
  }: { signal?: AbortSignal; budgetMs?: number; foreground?: Foreground; look?: () => Promise<void> } = {},
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const until = Date.now() + budgetMs;
  const tooFar = await repo.dueWhenTooFar(ctx.db, s.refreshSeconds, MAX_BACKOFF_SECONDS);
  if (tooFar > 0) ctx.logger.warn({ component: 'feeds', feeds: tooFar }, 'feeds scheduled too far ahead: due now');
  while (!signal.aborted && Date.now() < until) {
    // Feeds subscribed to while a long run goes on are found between its batches (at the looks' pace).
    await look();
    const due = await repo.claimDue(ctx.db, s.concurrency * 4, repo.LEASE_SECONDS);
    if (due.length === 0) break;
    await politely(due, s, async (feed) => {
      await foreground.turn(signal);
      const end = fetchSeconds.startTimer();
      const outcome = await fetchOne(ctx, s, feed, signal);
      end();
      fetches.inc({ outcome });
      counts[outcome] = (counts[outcome] ?? 0) + 1;
    });
  }
  return counts;
}

/** How often a worker looks for new feeds and for feeds that came due (a new feed is due at once). */
const LOOK_MS = 1000;

/**
 * The fetcher as the worker runs it: every minute, and within a second or two of a feed coming due. Each
 * second while no fetch runs here it looks for new feeds (the records changed since its last look: a scan
 * of the users table, and a query per user who changed something; at most a twentieth of the time, so
 * every 2 s at 150,000 users, `pacedLooks`) and for due feeds (one probe of an index). It needs no word from the request that subscribed, so it finds what other processes wrote too.
 */
export function feedTasks(ctx: FetchContext & { config: Config; foreground: Foreground }): TaskList {
  const settings = fetcherSettings(ctx.config);
  const stopping = new AbortController();
  let [looking, running] = [false, false];
  const lookForNew = pacedLooks(ctx.db, LOOK_MS);
  const look = setInterval(() => {
    if (looking || running || stopping.signal.aborted) return;
    looking = true;
    // Queuing is idempotent: the job key names one waiting job, whichever process queued it.
    lookForNew()
      .then(() => repo.anyDue(ctx.db))
      .then(async (due) => {
        if (due) await addJob(ctx.db, FETCH_TASK, {}, { jobKey: FETCH_TASK, queue: 'feeds', maxAttempts: 1 });
      })
      .catch((err: unknown) => ctx.logger.warn({ err }, 'could not look for due feeds (the next look does it)'))
      .finally(() => (looking = false));
  }, LOOK_MS);
  look.unref();
  return {
    tasks: {
      [FETCH_TASK]: async (_payload, helpers) => {
        running = true;
        try {
          const signal = AbortSignal.any([stopping.signal, helpers.abortSignal]);
          const counts = await fetchDueFeeds(ctx, settings, { signal, foreground: ctx.foreground, look: lookForNew });
          if (Object.keys(counts).length > 0) ctx.logger.info({ component: 'feeds', ...counts }, 'feeds fetched');
        } finally {
          running = false;
        }
      },
    },
    crontab: [`* * * * * ${FETCH_TASK} ?jobKey=${FETCH_TASK}&jobKeyMode=preserve_run_at&queue=feeds&max=1`],
    // Fetches under way are cut short (their feeds are due again at once): a shutdown never waits for a feed.
    stop: () => {
      stopping.abort();
      clearInterval(look);
    },
  };
}
