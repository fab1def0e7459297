import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Logger } from '../logger';
import type { Queryable } from './pool';

/**
 * What a process keeps in step with the others through NOTIFY: told of each notification on its channel,
 * and of whether notifications reach this process at all. Until `up`, and from `down` on, it must not
 * rely on hearing of a change (the credential cache caches nothing, the failure limiter asks the database).
 */
export type Subscriber = {
  channel: string;
  heard: (payload: string) => void;
  /** Notifications arrive from now on. Awaited before the listener counts as up (to catch up, say). */
  up: () => void | Promise<void>;
  down: () => void;
};

export type ListenOptions = {
  /** Sends a NOTIFY through another connection than the listener's: the process's pool. */
  notify: (channel: string, payload: string) => Promise<void>;
  /** How often the listener sends itself a heartbeat, and how long it waits for it to come back. */
  heartbeatMs?: number;
  deadlineMs?: number;
  /** The first wait before connecting again; it doubles at each failure, up to a minute. */
  retryMs?: number;
  /** The listener's connection (tests give one that goes through a proxy of theirs). */
  client?: (url: string) => pg.Client;
};

/** A NOTIFY through `db` (a pool: another connection than the listener's). */
export const notifyThrough =
  (db: Queryable) =>
  async (channel: string, payload: string): Promise<void> => {
    await db.query('SELECT pg_notify($1, $2)', [channel, payload]);
  };

/** The application name of the listener's connection: every server process holds one while it runs. */
export const LISTENER_APPLICATION = 'castsync-listener';

const listenerClient = (url: string) =>
  new pg.Client({
    connectionString: url,
    application_name: LISTENER_APPLICATION,
    // A connection whose far end went away without a word (a half-open one) is found and closed.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });

/**
 * One connection that LISTENs for every subscriber. A LISTEN can be deaf: behind a pooler in transaction
 * mode the session that listened is handed to others, and a half-open connection hears nothing. So the
 * listener counts as up only once a NOTIFY it sent itself, through the pool, has come back on it; it sends
 * one every `heartbeatMs`, and one that has not come back within `deadlineMs` takes it down and
 * reconnects. A connection whose backend changes between two statements is a pooler's: the listener
 * stays down (and says so once), trying again a minute later.
 */
export function listen(
  url: string,
  subscribers: Subscriber[],
  logger: Logger,
  {
    notify,
    heartbeatMs = 5000,
    deadlineMs = 5000,
    retryMs: firstRetryMs = 1000,
    client = listenerClient,
  }: ListenOptions,
): { stop: () => Promise<void> } {
  const heartbeat = `castsync_heartbeat_${randomBytes(6).toString('hex')}`;
  const byChannel = new Map(subscribers.map((s) => [s.channel, s]));
  let current: pg.Client | undefined;
  let live = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let retryMs = firstRetryMs;
  let poolerSaid = false;
  let beats = 0;
  /** The heartbeat awaited: its payload, what to call when it comes back, and its deadline. */
  let awaited: { payload: string; back: (heard: boolean) => void; deadline: NodeJS.Timeout } | undefined;

  let warned = false;
  const goDown = () => {
    if (live && !stopped) logger.warn('notifications stopped arriving: what relies on them is off until they do');
    warned ||= live;
    live = false;
    for (const s of subscribers) s.down();
  };
  const goUp = async () => {
    if (live) return;
    for (const s of subscribers) await s.up();
    live = true;
    retryMs = firstRetryMs;
    if (warned) logger.info('notifications arrive again');
  };
  const later = (fn: () => void, ms: number) => {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(fn, ms);
  };
  const reconnect = (c: pg.Client, ms: number) => {
    if (current !== c) return;
    current = undefined;
    goDown();
    void c.end().catch(() => undefined);
    later(() => void connect(), ms);
    retryMs = Math.min(retryMs * 2, 60_000);
  };

  /** Sends a heartbeat and waits for it: up when it comes back in time, down and a new connection if not. */
  const beat = async (c: pg.Client) => {
    const payload = String(++beats);
    let deadline: NodeJS.Timeout | undefined;
    const back = new Promise<boolean>((resolve) => {
      deadline = setTimeout(() => resolve(false), deadlineMs);
      awaited = { payload, back: resolve, deadline };
    });
    // Not awaited: a pool that cannot send it in time is a heartbeat that does not come back.
    void notify(heartbeat, payload).catch(() => undefined);
    const heard = await back;
    clearTimeout(deadline);
    if (current !== c || stopped) return;
    if (!heard) return reconnect(c, retryMs);
    try {
      await goUp();
    } catch (err) {
      logger.debug({ err: (err as Error).message }, 'catching up after the listener connected failed');
      return reconnect(c, retryMs);
    }
    later(() => void beat(c), heartbeatMs);
  };

  const connect = async () => {
    const c = client(url);
    current = c;
    c.on('error', () => undefined);
    c.on('end', () => reconnect(c, retryMs));
    c.on('notification', (n) => {
      if (n.channel === heartbeat) {
        if (awaited && n.payload === awaited.payload) awaited.back(true);
      } else byChannel.get(n.channel)?.heard(n.payload ?? '');
    });
    try {
      await c.connect();
      const before = await backend(c);
      for (const channel of [...byChannel.keys(), heartbeat]) await c.query(`LISTEN ${channel}`);
      if ((await backend(c)) !== before) {
        if (!poolerSaid) logger.warn(POOLER);
        poolerSaid = true;
        return reconnect(c, 60_000);
      }
      await beat(c);
    } catch (err) {
      logger.debug({ err: (err as Error).message }, 'notification listener not connected');
      reconnect(c, retryMs);
    }
  };

  for (const s of subscribers) s.down();
  void connect();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      clearTimeout(awaited?.deadline);
      awaited?.back(false);
      const c = current;
      current = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}

const backend = async (c: pg.Client): Promise<number> =>
  (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;

const POOLER =
  'the database connection goes through a pooler in transaction mode, which cannot LISTEN: credentials are ' +
  'not cached, and failed sign-ins are counted from the database at every attempt (docs/scaling.md)';
