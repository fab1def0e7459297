import type { Config } from '../config';
import { withTransaction, type Db, type Tx } from '../db/pool';
import { FetchFailed, fetcherSettings } from '../feeds/service';
import type { TaskList } from '../jobs/worker';
import type { Logger } from '../logger';
import { accepted, gone, sendToBrowser, sendToHook, type Answer, type Sending } from './channels';
import { DELIVER_TASK } from './events';
import { compose, testMessage, type Message } from './message';
import { vapid, vapidSubject } from './push';
import * as episodes from '../episodes/service';
import * as subscriptions from '../subscriptions/service';
import * as pushRepo from './push-repo';
import * as repo from './repo';

// The delivery job. Each delivery is sent inside a transaction that holds its row locked (the claim) and
// records the outcome in that same transaction: a delivery marked sent is never sent again, and one whose
// worker died mid-request is unlocked when its connection ends and sent again, with the same idempotency
// key, so that a receiver can tell the repeat (docs/notifications.md: at least once over the network,
// once in the database).

export type DeliverySettings = Sending & { dailyLimit: number; publicUrl: string | undefined; vapidSubject: string };

export const deliverySettings = (config: Config): DeliverySettings => ({
  policy: fetcherSettings(config).policy,
  timeoutMs: config.notifyTimeout * 1000,
  dailyLimit: config.notifyDailyLimit,
  publicUrl: config.publicUrl,
  vapidSubject: vapidSubject(config.notifyVapidSubject, config.publicUrl),
});

/** After this many failed attempts a delivery is given up. */
export const MAX_ATTEMPTS = 7;
/** A delivery whose person another worker is sending to is tried again this much later. */
const BUSY_SECONDS = 5;
/** After n failed attempts: 30 s × 4^(n-1) (30 s, 2 min, 8 min, … 8.5 h; the last attempt about 11.4 h after the first). */
const retryInSeconds = (failures: number) => 30 * 4 ** Math.max(0, failures - 1);

type Outcome = Parameters<typeof repo.settle>[2];

/** What an answer, or a request that got none, makes of the delivery. */
function outcomeOf(d: repo.DeliveryRow, answer: Answer | Error): Outcome {
  if (!(answer instanceof Error) && accepted(answer)) return { status: 'sent' };
  if (!(answer instanceof Error) && d.channel.startsWith('push:') && gone(answer))
    return { status: 'gone', error: `HTTP ${answer.status}` };
  const error = answer instanceof Error ? answer.message : `HTTP ${answer.status}`;
  if (d.attempts + 1 >= MAX_ATTEMPTS) return { status: 'failed', error };
  return { status: 'pending', error, nextSeconds: retryInSeconds(d.attempts + 1) };
}

type Send = (m: Message) => Promise<Answer>;

/**
 * How to send on the delivery's channel, read from the database first (so that only the sending itself can
 * fail below); undefined when the channel is no more, or the person has turned notifications off since the
 * delivery was queued (a retry, or one queued just before).
 */
async function channelOf(tx: Tx, d: repo.DeliveryRow, s: DeliverySettings): Promise<Send | undefined> {
  const settings = await repo.settings(tx, d.user_id);
  if (!settings.enabled) return undefined;
  if (d.channel === 'hook') {
    if (settings.hook_url === null) return undefined;
    const target = { url: settings.hook_url, kind: settings.hook_kind };
    return (m) => sendToHook(target, m, s);
  }
  const browser = await pushRepo.subscription(tx, d.user_id, d.channel.slice('push:'.length));
  if (!browser) return undefined;
  const keys = await vapid(tx, s.vapidSubject);
  return (m) => sendToBrowser(browser, m, keys, s);
}

/** Sends one claimed delivery and settles it, in the claim's transaction. */
async function attempt(tx: Tx, d: repo.DeliveryRow, s: DeliverySettings, log: Logger): Promise<void> {
  // Not waited for: the other worker may wait NOTIFY_TIMEOUT on a slow URL, longer than a statement may
  // run, and this job would die of it. The delivery comes back shortly instead.
  if (!(await repo.tryLockPerson(tx, d.user_id))) return repo.postpone(tx, d, BUSY_SECONDS);
  const today = await repo.sentToday(tx, d.user_id, d.batch);
  const events = await repo.batchEvents(tx, d.user_id, d.batch);
  if (events.length === 0) return repo.dropBatch(tx, d.user_id, d.batch, 'nothing left to tell (the feed turned off)');
  // A batch is one fetch of one feed: a person who has unsubscribed from it since is not told of it.
  if (!(await subscriptions.subscribesTo(tx, d.user_id, events[0]!.feed_url)))
    return repo.dropBatch(tx, d.user_id, d.batch, 'nothing left to tell (unsubscribed from the feed)');
  // An app may have found the episode before the fetcher did, and the person heard it (or did while a
  // retry waited): it is no news to them.
  const played = await episodes.playedAmong(
    tx,
    d.user_id,
    events.map((e) => e.item_id),
  );
  const unplayed = events.filter((e) => !played.has(e.item_id));
  if (unplayed.length === 0) return repo.dropBatch(tx, d.user_id, d.batch, 'nothing left to tell (played already)');
  if (!today.this_batch && today.others >= s.dailyLimit)
    return repo.dropBatch(tx, d.user_id, d.batch, 'over the daily limit');
  // The batch is one per fetch, shared by every subscriber of the feed: the person makes the key theirs.
  const m = compose(`${d.batch}:${d.user_id}:${d.channel}`, unplayed, s.publicUrl);
  const send = await channelOf(tx, d, s);
  if (!send) return repo.settle(tx, d, { status: 'gone', error: 'the channel is no more' });
  let answer: Answer | Error;
  try {
    answer = await send(m);
  } catch (err) {
    if (!(err instanceof FetchFailed)) {
      // Not the network's doing: the channel cannot be sent to (a browser key that is no P-256 point, an
      // ntfy topic that does not decode, a VAPID subject web-push refuses), and no later attempt would fare
      // better. Thrown on, it would roll back and stay the first due, stopping everyone's deliveries.
      // Only the message is logged: an error's other fields may hold the URL, and an ntfy topic's auth.
      const error = err instanceof Error ? err.message : String(err);
      log.warn({ userId: d.user_id, channel: d.channel, error }, 'notification cannot be sent');
      return repo.settle(tx, d, { status: 'failed', error });
    }
    answer = err;
  }
  const outcome = outcomeOf(d, answer);
  if (outcome.status === 'gone') await pushRepo.removeSubscription(tx, d.user_id, { id: d.channel.slice(5) });
  if (outcome.status !== 'sent')
    log.info({ userId: d.user_id, channel: d.channel, ...outcome }, 'notification not sent');
  await repo.settle(tx, d, outcome);
}

/**
 * Delivers the due deliveries one at a time until none is due or `signal` aborts; returns how many it took
 * up (sent, failed, dropped, or put off while another worker sends to their person).
 */
export async function deliverDue(
  ctx: { db: Db; logger: Logger },
  s: DeliverySettings,
  signal?: AbortSignal,
): Promise<number> {
  const log = ctx.logger.child({ component: 'notifications' });
  let n = 0;
  while (!signal?.aborted) {
    const done = await withTransaction(ctx.db, async (tx) => {
      const d = await repo.claimDue(tx);
      if (d) await attempt(tx, d, s, log);
      return d !== undefined;
    });
    if (!done) break;
    n++;
  }
  return n;
}

/** The delivery job, queued by each fetch that noted events, and every minute for the retries. */
export function notificationTasks(ctx: { db: Db; logger: Logger; config: Config }): TaskList {
  const settings = deliverySettings(ctx.config);
  const stopping = new AbortController();
  return {
    tasks: {
      [DELIVER_TASK]: async (_payload, helpers) => {
        await deliverDue(ctx, settings, AbortSignal.any([stopping.signal, helpers.abortSignal]));
      },
    },
    crontab: [`* * * * * ${DELIVER_TASK} ?jobKey=${DELIVER_TASK}&jobKeyMode=preserve_run_at&max=3`],
    stop: () => stopping.abort(),
  };
}

/** What "Send a test" shows: the answer of the person's URL, or why there was none. */
export type TestOutcome = { ok: boolean; status?: number; answer: string };

/** Sends a test message to the person's URL, now, and says what came back. */
export async function sendTest(db: Db, userId: number, s: DeliverySettings): Promise<TestOutcome> {
  const hook = await repo.settings(db, userId);
  if (hook.hook_url === null) return { ok: false, answer: 'No URL is set.' };
  try {
    const a = await sendToHook({ url: hook.hook_url, kind: hook.hook_kind }, testMessage(s.publicUrl), s);
    return { ok: accepted(a), status: a.status, answer: a.text };
  } catch (err) {
    if (!(err instanceof FetchFailed)) throw err;
    return { ok: false, answer: err.message };
  }
}
