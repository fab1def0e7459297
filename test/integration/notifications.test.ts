import pg from 'pg';
import { AuthCache, credentialChanges } from '../../src/auth/cache';
import { listen, notifyThrough, type ListenOptions } from '../../src/db/notifications';
import { createPool, type Db } from '../../src/db/pool';
import { sleep } from '../helpers/app';
import { freshDatabase } from '../helpers/db';
import { capturedLogger } from '../helpers/logs';
import { notificationProxy, type NotificationProxy } from '../helpers/notification-proxy';

// The credential cache trusts the process's LISTEN only once a NOTIFY the process sent itself has come back
// on it (src/db/notifications.ts). Heartbeats every 50 ms here, instead of every 5 s.

let database: Awaited<ReturnType<typeof freshDatabase>>;
let db: Db;
let proxy: NotificationProxy;
const { logger, lines } = capturedLogger('debug');
const fast = (o: Partial<ListenOptions> = {}): ListenOptions => ({
  notify: notifyThrough(db),
  heartbeatMs: 50,
  deadlineMs: 300,
  retryMs: 50,
  ...o,
});

beforeAll(async () => {
  database = await freshDatabase();
  db = createPool(database.url, { max: 2, timeoutMs: 2000, logger });
});
beforeEach(async () => {
  proxy = await notificationProxy(database.url);
});
afterEach(() => proxy.stop());
afterAll(async () => {
  await db.end();
  await database.drop();
});

/** Waits (5 s at most) until cond holds; whether it did. */
async function until(cond: () => boolean): Promise<boolean> {
  for (let i = 0; i < 250 && !cond(); i++) await sleep(20);
  return cond();
}

/** A cache with something in it, as a request would leave it (only while on, it remembers anything). */
const filled = (cache: AuthCache) => {
  cache.set('b:someone', 42);
  return cache.get('b:someone');
};

test('a listener that hears its own heartbeat turns the cache on; a change announced elsewhere empties it', async () => {
  const cache = new AuthCache(60_000);
  const listener = listen(database.url, [credentialChanges(cache)], logger, fast());
  try {
    expect(cache.active).toBe(false);
    expect(await until(() => cache.active)).toBe(true);
    expect(filled(cache)).toBe(42);
    await db.query(`SELECT pg_notify('castsync_auth', '')`);
    expect(await until(() => cache.get('b:someone') === undefined)).toBe(true);
  } finally {
    await listener.stop();
  }
});

test('a listener whose notifications never arrive (a pooler-like LISTEN) keeps the cache off', async () => {
  proxy.deaf = true;
  const cache = new AuthCache(60_000);
  const listener = listen(proxy.url, [credentialChanges(cache)], logger, fast());
  try {
    // Heartbeats reached the connection and were lost on the way, on more than one connection.
    expect(await until(() => proxy.dropped() >= 3)).toBe(true);
    expect(cache.active).toBe(false);
    expect(filled(cache)).toBeUndefined();
  } finally {
    await listener.stop();
  }
});

test('a listener that goes deaf turns the cache off and empties it, and on again once it hears', async () => {
  const cache = new AuthCache(60_000);
  const listener = listen(proxy.url, [credentialChanges(cache)], logger, fast());
  try {
    expect(await until(() => cache.active)).toBe(true);
    expect(filled(cache)).toBe(42);
    proxy.deaf = true;
    expect(await until(() => !cache.active)).toBe(true);
    expect(cache.get('b:someone')).toBeUndefined();
    expect(filled(cache)).toBeUndefined();
    expect(lines.some((l) => l.level === 40 && /notifications stopped arriving/.test(String(l.msg)))).toBe(true);
    proxy.deaf = false;
    expect(await until(() => cache.active)).toBe(true);
    expect(filled(cache)).toBe(42);
  } finally {
    await listener.stop();
  }
});

test('a connection whose backend changes between statements is a pooler: the cache stays off, and it says so', async () => {
  // What a transaction-mode pooler does: each statement may run in another server session.
  const pooled = (url: string) => {
    const c = new pg.Client({ connectionString: url });
    const query = c.query.bind(c) as (...a: unknown[]) => Promise<unknown>;
    let pid = 0;
    Object.assign(c, {
      query: (text: unknown, ...rest: unknown[]) =>
        typeof text === 'string' && text.includes('pg_backend_pid()')
          ? Promise.resolve({ rows: [{ pid: ++pid }] })
          : query(text, ...rest),
    });
    return c;
  };
  let heartbeats = 0;
  const notify = notifyThrough(db);
  const cache = new AuthCache(60_000);
  const listener = listen(database.url, [credentialChanges(cache)], logger, {
    ...fast({ client: pooled }),
    notify: (channel, payload) => {
      heartbeats++;
      return notify(channel, payload);
    },
  });
  try {
    expect(await until(() => lines.some((l) => /goes through a pooler/.test(String(l.msg))))).toBe(true);
    expect(cache.active).toBe(false);
    expect(heartbeats).toBe(0);
  } finally {
    await listener.stop();
  }
});
