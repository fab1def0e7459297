import { spawn } from 'node:child_process';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import type { JobHelpers } from 'graphile-worker';
import pino from 'pino';
import { fetchDueFeeds, fetcherSettings } from '../../src/feeds/fetcher';
import * as notifications from '../../src/notifications/service';
import { mergeRecords } from '../../src/subscriptions/service';
import { InvalidInput } from '../../src/errors';
import { as, sleep, testApp, type TestApp, type TestUser } from '../helpers/app';
import { feedServer } from '../helpers/feed-server';
import { capturedLogger } from '../helpers/logs';

// New-episode notifications end to end on loopback: a feed gains an item, the fetcher notes the event
// in its transaction, the delivery job POSTs it to a person's webhook (docs/notifications.md).

const LOOPBACK = { FEED_FETCH_ALLOW_CIDRS: '127.0.0.0/8' };
const logger = pino({ level: 'silent' });
let t: TestApp;

type Item = { guid: string; title: string; published: Date };
const feeds = new Map<string, Item[]>();
const rss = (name: string) => `<?xml version="1.0"?><rss version="2.0"><channel><title>Show ${name}</title>
  ${(feeds.get(name) ?? [])
    .map(
      (i) => `<item><guid>${i.guid}</guid><title>${i.title}</title><pubDate>${i.published.toUTCString()}</pubDate>
      <enclosure url="https://media.example/${i.guid}.mp3" type="audio/mpeg"/></item>`,
    )
    .join('')}</channel></rss>`;
let server: Awaited<ReturnType<typeof feedServer>>;

/** A webhook receiver on loopback: every POST it got; `hold` keeps the next answer until released. */
type Received = { key: string | undefined; body: { title: string; episodes: { title: string; page: string }[] } };
async function receiver() {
  const got: Received[] = [];
  let status = 200;
  let held: ((code: number) => void) | undefined;
  let arrived: (() => void) | undefined;
  const sockets = new Set<net.Socket>();
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ key: req.headers['idempotency-key'] as string, body: JSON.parse(Buffer.concat(chunks).toString()) });
      const answer = (code: number) => res.writeHead(code).end('thanks');
      if (arrived) {
        held = answer;
        arrived();
        arrived = undefined;
      } else answer(status);
    });
  });
  s.on('connection', (c: net.Socket) => (sockets.add(c), c.on('close', () => sockets.delete(c))));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(s.address() as net.AddressInfo).port}/hook`;
  return {
    url,
    got,
    answerWith: (code: number) => (status = code),
    /** The next POST is held unanswered; resolves when it arrived. */
    holdNext: () => new Promise<void>((r) => (arrived = r)),
    release: (code = 200) => held?.(code),
    close: async () => {
      for (const c of sockets) c.destroy();
      await new Promise<void>((r) => s.close(() => r()));
    },
  };
}

/** A test with a webhook receiver of its own, closed after it. */
const withHook = (fn: (hook: Awaited<ReturnType<typeof receiver>>) => Promise<void>) => async () => {
  const hook = await receiver();
  try {
    await fn(hook);
  } finally {
    await hook.close();
  }
};

beforeAll(async () => {
  t = await testApp(LOOPBACK);
  server = await feedServer({
    '/feeds/*': (req, res) => {
      res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(rss(req.url!.split('/').pop()!));
    },
  });
});
afterAll(async () => {
  await server.close();
  await t.close();
});

const settings = () => notifications.deliverySettings(t.config);
/** Every known feed due now, then fetched, with the notifications room's hook, as the worker runs it. */
async function fetchAll() {
  await t.db.query('UPDATE feeds SET next_fetch_at = now()');
  await fetchDueFeeds({ db: t.db, logger, newItems: notifications.newItemsHook }, fetcherSettings(t.config));
}
const deliver = () => notifications.deliverDue({ db: t.db, logger }, settings());
/** The feed lists the items next, and every feed is fetched. */
async function published(name: string, ...items: Item[]) {
  feeds.get(name)!.push(...items);
  await fetchAll();
}

/** A person subscribed to a new feed (with its first items) and a webhook; the feed's first fetch done. */
async function subscribed(name: string, first: Item[], hook: string): Promise<{ u: TestUser; guid: string }> {
  feeds.set(name, first);
  const u = await t.user(name);
  const posted = await as(t, u).post('/v1/subscriptions', {
    subscriptions: [{ feed_url: server.url(`/feeds/${name}`) }],
  });
  await notifications.setNotificationSettings(t.db, u.id, { url: hook }, fetcherSettings(t.config).policy);
  await fetchAll();
  return { u, guid: posted.body.success[0].guid as string };
}
/** Another person subscribed to the feed of `subscribed`, with a webhook. */
async function alsoSubscribed(name: string, feed: string, hook: string): Promise<TestUser> {
  const u = await t.user(name);
  await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url(`/feeds/${feed}`) }] });
  await notifications.setNotificationSettings(t.db, u.id, { url: hook }, fetcherSettings(t.config).policy);
  return u;
}
const item = (guid: string, ageSeconds = 0): Item => ({
  guid,
  title: `Episode ${guid}`,
  published: new Date(Date.now() - ageSeconds * 1000),
});
const deliveries = async (u: TestUser) =>
  (await t.db.query('SELECT status, attempts FROM notification_deliveries WHERE user_id = $1', [u.id])).rows;

test(
  'a feed gains an item: the webhook receives one POST naming it, once',
  withHook(async (hook) => {
    const { u } = await subscribed('gains', [item('g0', 3600)], hook.url);
    await published('gains', item('g1'));
    expect(await deliver()).toBe(1);
    expect(hook.got).toHaveLength(1);
    expect(hook.got[0]!.body.title).toBe('New episode of Show gains');
    expect(hook.got[0]!.body.episodes.map((e) => e.title)).toEqual(['Episode g1']);
    expect(hook.got[0]!.body.episodes[0]!.page).toMatch(/^\/web\/episodes\/\d+$/);
    expect(hook.got[0]!.key).toMatch(new RegExp(`^[0-9a-f-]{36}:${u.id}:hook$`));
    // Fetched again and delivered again: nothing new, nothing sent twice.
    await fetchAll();
    expect(await deliver()).toBe(0);
    expect(hook.got).toHaveLength(1);
    expect(await deliveries(u)).toEqual([{ status: 'sent', attempts: 1 }]);
  }),
);

test(
  "two people's messages from one fetch, to one receiver, carry different keys",
  withHook(async (hook) => {
    const { u: first } = await subscribed('shared-hook', [item('h0', 3600)], hook.url);
    const second = await alsoSubscribed('shared-hook-too', 'shared-hook', hook.url);
    await published('shared-hook', item('h1'));
    expect(await deliver()).toBe(2);
    // One fetch, one batch: a receiver that keeps the keys it has seen took the second message for the first.
    const keys = hook.got.map((g) => g.key!);
    expect(new Set(keys.map((k) => k.slice(0, 36))).size).toBe(1);
    expect(keys.map((k) => k.slice(36)).sort()).toEqual([`:${first.id}:hook`, `:${second.id}:hook`].sort());
  }),
);

test(
  "a feed's first fetch and an item older than the subscription send nothing",
  withHook(async (hook) => {
    // Dated after the subscription: only the first-fetch rule keeps them out.
    const { u } = await subscribed('first', [item('f0', -3600), item('f1', -3600)], hook.url);
    await published('first', item('f-old', 7 * 86400));
    expect(await deliver()).toBe(0);
    expect(hook.got).toHaveLength(0);
    expect(await deliveries(u)).toEqual([]);
  }),
);

/** The person's subscriptions moved `days` back, as if they had subscribed that long ago. */
const subscribedDaysAgo = (u: TestUser, days: number) =>
  t.db.query(
    'UPDATE subscriptions SET subscription_changed = subscription_changed - make_interval(days => $2) WHERE user_id = $1',
    [u.id, days],
  );

test(
  'an item dated more than RETENTION_DAYS ago is not announced, though published after the subscription',
  withHook(async (hook) => {
    const { u } = await subscribed('old-dates', [item('o0', 3600)], hook.url);
    await subscribedDaysAgo(u, 60);
    // A back catalogue the feed lists for the first time (or again): only the recent item is new.
    await published('old-dates', item('o-31-days', 31 * 86400), item('o-29-days', 29 * 86400));
    expect(await deliver()).toBe(1);
    expect(hook.got.map((g) => g.body.episodes.map((e) => e.title))).toEqual([['Episode o-29-days']]);
  }),
);

test(
  'an item whose event the clean-up removed, listed again by its feed, is not announced again; a recent one stays noted',
  withHook(async (hook) => {
    const { u } = await subscribed('again', [item('a0', 3600)], hook.url);
    await subscribedDaysAgo(u, 60);
    await published('again', item('a1'));
    expect(await deliver()).toBe(1);
    // 40 days on: the item is as old, and so are its event and the message's delivery.
    const aged = feeds.get('again')![1]!;
    aged.published = new Date(aged.published.getTime() - 40 * 86400_000);
    await t.db.query(
      `UPDATE notification_events SET created_at = created_at - interval '40 days',
              published_at = published_at - interval '40 days' WHERE user_id = $1`,
      [u.id],
    );
    await t.db.query(
      `UPDATE notification_deliveries SET created_at = created_at - interval '40 days',
              next_at = next_at - interval '40 days', sent_at = sent_at - interval '40 days' WHERE user_id = $1`,
      [u.id],
    );
    await published('again', item('a2'));
    expect(await deliver()).toBe(1);
    // The feed leaves both out (a short answer, a cap), the clean-up runs, and the feed lists them again.
    const listed = feeds.get('again')!;
    feeds.set('again', [listed[0]!]);
    await fetchAll();
    await notifications.notificationCleanupTasks({ db: t.db, logger }).tasks['notifications:cleanup']!(
      {},
      {} as JobHelpers,
    );
    const noted = async () =>
      (await t.db.query('SELECT item_key FROM notification_events WHERE user_id = $1', [u.id])).rows;
    expect(await noted()).toEqual([{ item_key: 'a2' }]);
    feeds.set('again', listed);
    await fetchAll();
    expect(await deliver()).toBe(0);
    expect(hook.got.map((g) => g.body.episodes.map((e) => e.title))).toEqual([['Episode a1'], ['Episode a2']]);
    expect(await noted()).toEqual([{ item_key: 'a2' }]);
  }),
);

test(
  'a feed turned off, or all notifications off, sends nothing; turned on again, it does',
  withHook(async (hook) => {
    const { u, guid } = await subscribed('muted', [item('m0', 3600)], hook.url);
    await notifications.setFeedNotifications(t.db, u.id, guid, false);
    await published('muted', item('m1'));
    expect(await deliver()).toBe(0);
    await notifications.setFeedNotifications(t.db, u.id, guid, true);
    await notifications.setNotificationSettings(t.db, u.id, { enabled: false }, fetcherSettings(t.config).policy);
    await published('muted', item('m2'));
    expect(await deliver()).toBe(0);
    expect(hook.got).toHaveLength(0);
    await notifications.setNotificationSettings(t.db, u.id, { enabled: true }, fetcherSettings(t.config).policy);
    await published('muted', item('m3'));
    expect(await deliver()).toBe(1);
    expect(hook.got.map((g) => g.body.episodes.map((e) => e.title))).toEqual([['Episode m3']]);
  }),
);

test(
  'a feed turned off stays off when it moves to another URL, and is shown off there; turned on, it sends',
  withHook(async (hook) => {
    const { u, guid } = await subscribed('mute-moves', [item('mm0', 3600)], hook.url);
    await notifications.setFeedNotifications(t.db, u.id, guid, false);
    const moved = server.url('/feeds/mute-moved');
    feeds.set('mute-moved', [...feeds.get('mute-moves')!]);
    expect((await as(t, u).patch(`/v1/subscriptions/${guid}`, { new_feed_url: moved })).status).toBe(200);
    await fetchAll(); // the new URL's first fetch: nothing
    await published('mute-moved', item('mm1'));
    expect(await deliver()).toBe(0);
    expect(hook.got).toHaveLength(0);
    expect(await notifications.feedsOff(t.db, u.id, [moved])).toEqual(new Set([moved]));
    await notifications.setFeedNotifications(t.db, u.id, guid, true);
    expect(await notifications.feedsOff(t.db, u.id, [moved])).toEqual(new Set());
    await published('mute-moved', item('mm2'));
    expect(await deliver()).toBe(1);
    expect(hook.got.map((g) => g.body.episodes.map((e) => e.title))).toEqual([['Episode mm2']]);
  }),
);

test(
  'records merged into the one kept are off if any of them was',
  withHook(async (hook) => {
    const { u, guid: kept } = await subscribed('merge-kept', [item('mk0', 3600)], hook.url);
    feeds.set('merge-gone', [item('mg0', 3600)]);
    const gone = (
      await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/feeds/merge-gone') }] })
    ).body.success[0].guid as string;
    await fetchAll();
    await notifications.setFeedNotifications(t.db, u.id, gone, false);
    await mergeRecords(t.db, u.id, kept, [gone]);
    await published('merge-kept', item('mk1'));
    expect(await deliver()).toBe(0);
    expect(hook.got).toHaveLength(0);
    expect(await notifications.feedsOff(t.db, u.id, [server.url('/feeds/merge-kept')])).toEqual(
      new Set([server.url('/feeds/merge-kept')]),
    );
  }),
);

test(
  'a feed turned off while its message waits for a retry: the retry sends nothing',
  withHook(async (hook) => {
    const { u, guid } = await subscribed('muted-later', [item('ml0', 3600)], hook.url);
    hook.answerWith(503);
    await published('muted-later', item('ml1'));
    await deliver();
    expect(hook.got).toHaveLength(1); // answered 503: to be tried again
    await notifications.setFeedNotifications(t.db, u.id, guid, false);
    hook.answerWith(200);
    await t.db.query('UPDATE notification_deliveries SET next_at = now() WHERE user_id = $1', [u.id]);
    await deliver();
    expect(hook.got).toHaveLength(1);
    expect(await deliveries(u)).toEqual([{ status: 'dropped', attempts: 1 }]);
  }),
);

test(
  'a feed unsubscribed from while its message waits for a retry: the retry sends nothing',
  withHook(async (hook) => {
    const { u } = await subscribed('left-later', [item('ll0', 3600)], hook.url);
    hook.answerWith(503);
    await published('left-later', item('ll1'));
    await deliver();
    expect(hook.got).toHaveLength(1); // answered 503: to be tried again
    const removed = await as(t, u).post('/api/2/subscriptions/' + u.name + '/phone.json', {
      add: [],
      remove: [server.url('/feeds/left-later')],
    });
    expect(removed.status).toBe(200);
    hook.answerWith(200);
    await t.db.query('UPDATE notification_deliveries SET next_at = now() WHERE user_id = $1', [u.id]);
    await deliver();
    expect(hook.got).toHaveLength(1);
    expect(await deliveries(u)).toEqual([{ status: 'dropped', attempts: 1 }]);
  }),
);

test(
  'several new items of one fetch are one message; a failed POST is retried later, with the same key',
  withHook(async (hook) => {
    const { u } = await subscribed('batch', [item('b0', 3600)], hook.url);
    await published('batch', item('b1'), item('b2'), item('b3'));
    hook.answerWith(503);
    expect(await deliver()).toBe(1);
    expect(await deliveries(u)).toEqual([{ status: 'pending', attempts: 1 }]);
    // Not due yet: the back-off holds it.
    expect(await deliver()).toBe(0);
    await t.db.query('UPDATE notification_deliveries SET next_at = now() WHERE user_id = $1', [u.id]);
    hook.answerWith(200);
    expect(await deliver()).toBe(1);
    expect(hook.got).toHaveLength(2);
    expect(hook.got[1]!.key).toBe(hook.got[0]!.key);
    expect(hook.got[1]!.body.title).toBe('3 new episodes of Show batch');
    expect(hook.got[1]!.body.episodes.map((e) => e.title)).toEqual(['Episode b1', 'Episode b2', 'Episode b3']);
    expect(await deliveries(u)).toEqual([{ status: 'sent', attempts: 2 }]);
  }),
);

test(
  'an episode played before its message is sent is left out of it; a message of played ones alone is not sent',
  withHook(async (hook) => {
    const { u } = await subscribed('heard', [item('p0', 3600)], hook.url);
    /** Played to the end in an app (the feed declares no duration: the play's total says it). */
    const play = (guid: string) =>
      as(t, u).post(`/api/2/episodes/${u.name}.json`, [
        {
          podcast: server.url('/feeds/heard'),
          episode: `https://media.example/${guid}.mp3`,
          action: 'play',
          position: 600,
          total: 600,
          timestamp: new Date().toISOString().slice(0, 19),
        },
      ]);
    await published('heard', item('p1'), item('p2'));
    expect((await play('p1')).status).toBe(200);
    expect(await deliver()).toBe(1);
    expect(hook.got.map((g) => g.body.title)).toEqual(['New episode of Show heard']);
    expect(hook.got[0]!.body.episodes.map((e) => e.title)).toEqual(['Episode p2']);

    await published('heard', item('p3'));
    expect((await play('p3')).status).toBe(200);
    expect(await deliver()).toBe(1);
    expect(hook.got).toHaveLength(1);
    expect((await deliveries(u)).map((d) => d.status).sort()).toEqual(['dropped', 'sent']);
  }),
);

test(
  'at most NOTIFY_DAILY_LIMIT messages a day per person: the next batch is dropped',
  withHook(async (hook) => {
    const { u } = await subscribed('limit', [item('l0', 3600)], hook.url);
    const one = { ...settings(), dailyLimit: 1 };
    await published('limit', item('l1'));
    expect(await notifications.deliverDue({ db: t.db, logger }, one)).toBe(1);
    await published('limit', item('l2'));
    expect(await notifications.deliverDue({ db: t.db, logger }, one)).toBe(1);
    expect(hook.got).toHaveLength(1);
    const statuses = (await deliveries(u)).map((d) => d.status).sort();
    expect(statuses).toEqual(['dropped', 'sent']);
  }),
);

test(
  "a delivery that cannot be sent (a stored ntfy URL that does not decode) fails, and everyone else's go on",
  withHook(async (hook) => {
    const { u: broken } = await subscribed('undecodable', [item('u0', 3600)], hook.url);
    const other = await alsoSubscribed('undecodable-neighbour', 'undecodable', hook.url);
    // As saved before such a topic was refused: with a secret in it, which the log must not show.
    const url = `${hook.url.replace('/hook', '')}/topic%E0%A4%A?auth=s3cret`;
    await t.db.query("UPDATE notification_settings SET hook_url = $2, hook_kind = 'ntfy' WHERE user_id = $1", [
      broken.id,
      url,
    ]);
    await published('undecodable', item('u1'));
    const { logger: captured, raw } = capturedLogger();
    expect(await notifications.deliverDue({ db: t.db, logger: captured }, settings())).toBe(2);
    expect(hook.got).toHaveLength(1);
    expect(await deliveries(other)).toEqual([{ status: 'sent', attempts: 1 }]);
    const failed = await t.db.query(
      'SELECT status, attempts, last_error FROM notification_deliveries WHERE user_id = $1',
      [broken.id],
    );
    expect(failed.rows).toEqual([
      { status: 'failed', attempts: 1, last_error: expect.stringMatching(/ntfy topic .* not percent-encoded/) },
    ]);
    expect(raw.some((l) => l.includes('notification cannot be sent'))).toBe(true);
    expect(raw.join('\n')).not.toContain('s3cret');
  }),
);

test(
  'a second job finds the person busy with a slow URL: it puts their delivery off a few seconds, not waiting',
  withHook(async (hook) => {
    const { u } = await subscribed('busy', [item('x0', 3600)], hook.url);
    feeds.set('busy-too', [item('y0', 3600)]);
    await as(t, u).post('/v1/subscriptions', { subscriptions: [{ feed_url: server.url('/feeds/busy-too') }] });
    await fetchAll();
    feeds.get('busy')!.push(item('x1'));
    await published('busy-too', item('y1')); // two fetches: two messages for one person
    const arrived = hook.holdNext();
    const first = deliver();
    await arrived; // the first job holds the person while their URL takes its time
    // Waiting for the person's lock, the second job would outlast the pool's statement timeout.
    const second = await Promise.race([deliver(), sleep(3000).then(() => 'still waiting')]);
    hook.release(200);
    expect(second).toBe(1);
    expect(await first).toBe(1);
    const putOff = await t.db.query(
      `SELECT attempts, last_error, next_at > now() + interval '2 seconds' AS later FROM notification_deliveries
        WHERE user_id = $1 AND status = 'pending'`,
      [u.id],
    );
    expect(putOff.rows).toEqual([{ attempts: 0, last_error: null, later: true }]);
    await t.db.query('UPDATE notification_deliveries SET next_at = now() WHERE user_id = $1', [u.id]);
    expect(await deliver()).toBe(1);
    expect(hook.got).toHaveLength(2);
    expect(await deliveries(u)).toEqual([
      { status: 'sent', attempts: 1 },
      { status: 'sent', attempts: 1 },
    ]);
  }),
);

/** The delivery job in a process of its own (the built code), to be killed. */
function workerProcess() {
  const root = path.join(__dirname, '..', '..');
  const script = `
    const pino = require('pino');
    const { createPool } = require('./dist/db/pool');
    const { loadConfig } = require('./dist/config');
    const n = require('./dist/notifications/service');
    const config = loadConfig({ DATABASE_URL: ${JSON.stringify(t.url)}, ...${JSON.stringify(LOOPBACK)} }, { dotenvFile: false });
    const logger = pino({ level: 'silent' });
    const db = createPool(config.databaseUrl, { max: 2, timeoutMs: 2000, logger });
    n.deliverDue({ db, logger }, n.deliverySettings(config));`;
  return spawn(process.execPath, ['-e', script], { cwd: root, stdio: 'ignore' });
}

test(
  'a worker killed mid-delivery: after the restart the POST comes again with the same key, then never again',
  withHook(async (hook) => {
    const { u } = await subscribed('crash', [item('c0', 3600)], hook.url);
    await published('crash', item('c1'));
    const arrived = hook.holdNext();
    const child = workerProcess();
    await arrived;
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGKILL');
    await exited;
    hook.release(200); // the answer has nobody to read it: the dead worker never recorded the delivery
    expect(await deliveries(u)).toEqual([{ status: 'pending', attempts: 0 }]);
    // The restarted worker: the row's lock went with the dead process's connection (as soon as PostgreSQL
    // has seen that connection close).
    let sent = 0;
    for (const end = Date.now() + 10_000; sent === 0 && Date.now() < end; await sleep(50)) sent = await deliver();
    expect(sent).toBe(1);
    expect(await deliver()).toBe(0);
    expect(hook.got).toHaveLength(2);
    expect(new Set(hook.got.map((g) => g.key)).size).toBe(1);
    expect(hook.got.map((g) => g.body.episodes[0]!.title)).toEqual(['Episode c1', 'Episode c1']);
    expect(await deliveries(u)).toEqual([{ status: 'sent', attempts: 1 }]);
  }),
);

test('the address policy refuses a private webhook URL, as it refuses a private feed', async () => {
  const u = await t.user('private');
  const strict = fetcherSettings({ ...t.config, feedFetchAllowCidrs: [] }).policy;
  for (const url of ['http://10.0.0.1/hook', 'http://[::1]/hook', 'http://192.168.1.2/hook', 'ftp://example.org/x']) {
    await expect(notifications.setNotificationSettings(t.db, u.id, { url }, strict)).rejects.toThrow(InvalidInput);
  }
  // A name that resolves to a private address is refused when the request is made: "Send a test" says so.
  await notifications.setNotificationSettings(t.db, u.id, { url: 'http://localhost:9/hook' }, strict);
  const answer = await notifications.sendTest(t.db, u.id, { ...settings(), policy: strict });
  expect(answer).toEqual({ ok: false, answer: expect.stringMatching(/refused address/) });
});

test('the settings over /v1/account/settings: read, changed, a private URL refused; in the OpenAPI document', async () => {
  const u = await t.user('v1');
  const api = as(t, u);
  const before = await api.get('/v1/account/settings');
  expect(before.status).toBe(200);
  expect(before.body).toEqual({
    notifications: { enabled: true, url: null, kind: 'webhook', browsers: 0, daily_limit: 20 },
  });
  const changed = await api.patch('/v1/account/settings', {
    notifications: { url: 'https://ntfy.example/my-topic', kind: 'ntfy' },
  });
  expect(changed.status).toBe(200);
  expect(changed.body.notifications).toMatchObject({
    enabled: true,
    url: 'https://ntfy.example/my-topic',
    kind: 'ntfy',
  });
  expect(
    (await api.patch('/v1/account/settings', { notifications: { enabled: false } })).body.notifications,
  ).toMatchObject({ enabled: false, url: 'https://ntfy.example/my-topic' });
  const strict = await testApp();
  try {
    const w = await strict.user('strict');
    const refused = await as(strict, w).patch('/v1/account/settings', {
      notifications: { url: 'http://192.168.0.9/x' },
    });
    expect(refused.status).toBe(405);
    expect(refused.body.message).toMatch(/private address/);
  } finally {
    await strict.close();
  }
  expect((await api.patch('/v1/account/settings', { notifications: { colour: 'red' } })).status).toBe(405);
  const doc = await api.get('/openapi.json');
  expect(Object.keys(doc.body.paths)).toEqual(
    expect.arrayContaining(['/v1/account/settings', '/v1/account/notifications/test']),
  );
});

test('an ntfy URL whose topic does not decode is refused when saved, also when the kind becomes ntfy', async () => {
  const api = as(t, await t.user('ntfy-escape'));
  const url = 'https://ntfy.example/topic%E0%A4%A';
  const refused = await api.patch('/v1/account/settings', { notifications: { url, kind: 'ntfy' } });
  expect(refused.status).toBe(405);
  expect(refused.body.message).toMatch(/ntfy topic .* not percent-encoded UTF-8/);
  // As a webhook the same URL is sent as it is, and taken; as an ntfy topic it is not.
  expect((await api.patch('/v1/account/settings', { notifications: { url } })).status).toBe(200);
  expect((await api.patch('/v1/account/settings', { notifications: { kind: 'ntfy' } })).status).toBe(405);
  expect((await api.get('/v1/account/settings')).body.notifications).toMatchObject({ url, kind: 'webhook' });
  const fine = await api.patch('/v1/account/settings', {
    notifications: { url: 'https://ntfy.example/caf%C3%A9', kind: 'ntfy' },
  });
  expect(fine.status).toBe(200);
});

test(
  '"Send a test" posts a test message to the URL now and shows what it answered',
  withHook(async (hook) => {
    const u = await t.user('tester');
    const api = as(t, u);
    expect((await api.post('/v1/account/notifications/test')).body).toEqual({ ok: false, answer: 'No URL is set.' });
    await api.patch('/v1/account/settings', { notifications: { url: hook.url } });
    expect((await api.post('/v1/account/notifications/test')).body).toEqual({
      ok: true,
      status: 200,
      answer: 'thanks',
    });
    hook.answerWith(401);
    expect((await api.post('/v1/account/notifications/test')).body).toEqual({
      ok: false,
      status: 401,
      answer: 'thanks',
    });
    expect(hook.got.map((g) => g.body.title)).toEqual(['A test from castsync', 'A test from castsync']);
  }),
);
